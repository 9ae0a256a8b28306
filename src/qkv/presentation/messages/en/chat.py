"""Chatting with an instruction-tuned model (qkv generate --chat; core/text/chat.py), in English (the
same keys as zh/chat.py)."""

MESSAGES = {
    "no_template": (
        "this model has no chat template (it was not trained to chat): give it a text to continue with --prompt"
    ),
    "template_error": "the model's chat template cannot be rendered: {error}",
    "template_refuses": "the model's chat template refuses this conversation: {message}",
    "too_long": "the model's chat template wrote more than {limit:,} characters; stopped",
    "message_too_long": "a chat message may hold at most {limit:,} characters; this one has {n:,}",
    "with_prompt": (
        "--chat and --prompt cannot be given together: --chat asks the model a question, "
        "--prompt gives it a text to continue"
    ),
    "with_samples": "--chat answers once: leave out --samples",
    "system_without_chat": "--system goes with --chat: it is the system message of a conversation",
}

"""A conversation as a chat model was trained to read it: its chat template turned into token ids.

    ids = chat_ids(tokenizer, [{"role": "user", "content": "What is 2+2?"}])

An instruction-tuned model (SmolLM2-Instruct, Llama 3 Instruct, Qwen2.5-Instruct) was trained on
conversations written in one fixed layout, e.g. SmolLM2's

    <|im_start|>system\\nYou are a helpful AI assistant...<|im_end|>\\n<|im_start|>user\\nWhat is 2+2?<|im_end|>\\n
    <|im_start|>assistant\\n

and answers well only when asked in that layout. The layout is a Jinja template shipped with the
model (`chat_template` in tokenizer_config.json, or chat_template.jinja, or GGUF's
tokenizer.chat_template), which the hub reads into `tokenizer.chat_template`. Rendering it with
add_generation_prompt=True ends the text where the assistant's answer starts; generation then
stops at the model's end-of-turn token (model.stop_ids).

The template is code from a file: it is rendered in Jinja's immutable sandbox (no attribute of a
Python object it may not read, no list or dict it may change), and its output is cut off at
MAX_RENDERED characters, so a template that loops a long time writes only so much. The rendered
text is encoded without the tokenizer's own additions (a BOS a template already writes is not
doubled), and its special tokens (<|im_start|>) are matched as the tokenizer matches them: as one id.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from qkv.core.io.files import JSON_LIMIT, read_bytes, read_json_object
from qkv.core.io.refusal import Refusal

MAX_RENDERED = 1_000_000  # characters a chat template may write
MAX_MESSAGE = 100_000  # characters of one message
SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "pad_token")  # what templates may name


def read_chat_template(d: Path) -> tuple[str | None, dict[str, str]]:
    """(template, special tokens by name) of a Hugging Face directory `d`: chat_template.jinja, else
    tokenizer_config.json's chat_template (a string, or a list of named ones: "default" is taken);
    (None, {}) when neither is there."""
    path = d / "tokenizer_config.json"
    try:
        config = read_json_object(path) if path.exists() else {}
    except (OSError, ValueError) as e:  # not JSON, not an object, too large, not a regular file
        raise Refusal.of(
            "hub.in_file", path=path, error=str(e).splitlines()[0] if str(e) else type(e).__name__
        ) from None
    found = {name: _content(config.get(name)) for name in SPECIAL_NAMES}
    special = {name: text for name, text in found.items() if text is not None}
    if (d / "chat_template.jinja").is_file():
        return read_bytes(d / "chat_template.jinja", JSON_LIMIT, "chat template").decode("utf-8", "replace"), special
    template = config.get("chat_template")
    if isinstance(template, list):  # [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return (template if isinstance(template, str) and template else None), special


def _content(token) -> str | None:
    """A special token as tokenizer_config.json writes it: "<s>", or {"content": "<s>", ...}."""
    token = token.get("content") if isinstance(token, dict) else token
    return token if isinstance(token, str) else None


def messages_of(user: str, system: str | None = None) -> list[dict]:
    """[{"role": "system", ...}, {"role": "user", ...}]: one question, with a system message if given."""
    for text in (user, system):
        if text is not None and len(text) > MAX_MESSAGE:
            raise Refusal.of("chat.message_too_long", n=len(text), limit=MAX_MESSAGE)
    said = [{"role": "system", "content": system}] if system is not None else []
    return [*said, {"role": "user", "content": user}]


def render_chat(template: str, messages: list[dict], special: dict | None = None) -> str:
    """The text of `messages` laid out by the Jinja `template`, ending where the assistant speaks
    (add_generation_prompt=True); `special` names the tokenizer's bos_token, eos_token, ... as the
    template may use them."""
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _template_says
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    try:
        parts, n = [], 0
        for part in env.from_string(template).generate(
            messages=messages, add_generation_prompt=True, tools=None, documents=None, **(special or {})
        ):
            n += len(part)
            if n > MAX_RENDERED:
                raise Refusal.of("chat.too_long", limit=MAX_RENDERED)
            parts.append(part)
    except TemplateError as e:  # a syntax error, an undefined name used, the sandbox's refusal
        raise Refusal.of("chat.template_error", error=str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    return "".join(parts)


def chat_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The token ids of `messages` rendered by the tokenizer's chat template, special tokens as one id each.

    A tokenizer without a template (a model that was not trained to chat) is refused in one line."""
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        raise Refusal.of("chat.no_template")
    text = render_chat(template, messages, getattr(tokenizer, "chat_tokens", None))
    plain = getattr(tokenizer, "encode_plain", None)  # its added tokens are matched first, its post-processor left out
    return plain(text) if plain is not None else tokenizer.encode(text)


def _tojson(value, indent=None, separators=None, sort_keys=False, ensure_ascii=False) -> str:
    """Jinja's `tojson` as chat templates expect it: JSON, not HTML-escaped, non-ASCII kept."""
    return json.dumps(value, indent=indent, separators=separators, sort_keys=sort_keys, ensure_ascii=ensure_ascii)


def _template_says(message) -> None:
    """raise_exception(message), which a template calls on a conversation it cannot lay out."""
    raise Refusal.of("chat.template_refuses", message=str(message)[:500])

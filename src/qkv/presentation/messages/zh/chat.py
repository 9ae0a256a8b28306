"""与经过指令微调的模型对话（qkv generate --chat；core/text/chat.py）用到的话，中文（键与 en/chat.py 相同）。"""

MESSAGES = {
    "no_template": "这个模型没有对话模板（它没有学过对话）：请用 --prompt 给它一段文字让它续写",
    "template_error": "无法套用模型的对话模板：{error}",
    "template_refuses": "模型的对话模板不接受这段对话：{message}",
    "too_long": "模型的对话模板写出了超过 {limit:,} 个字符，已停止",
    "message_too_long": "一条对话消息最多 {limit:,} 个字符，这一条有 {n:,} 个",
    "with_prompt": "--chat 和 --prompt 不能同时使用：--chat 是向模型提问，--prompt 是给它一段文字续写",
    "with_samples": "--chat 只回答一次：请去掉 --samples",
    "system_without_chat": "--system 要和 --chat 一起用：它是一段对话的系统消息",
}

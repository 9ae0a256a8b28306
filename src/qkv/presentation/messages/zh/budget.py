"""计算前先估好内存（qkv.core.machine.memory、qkv.apps.web.budget）：拒绝的理由（中文，与 en/budget.py 同键）。"""

MESSAGES = {
    "too_large": (
        "{what}大约需要 {need}，超过这个服务器允许一次请求占用的内存（{limit}）：请换一段更短的文本，"
        "或者启动服务器时把 QKV_MEMORY_BUDGET 设得大一些"
    ),
    "too_large_together": (
        "{what}大约需要 {need}，而这次请求前面的计算还占着 {own}："
        "加起来超过这个服务器允许一次请求占用的内存（{limit}）；"
        "请换一段更短的文本，或者启动服务器时把 QKV_MEMORY_BUDGET 设得大一些"
    ),
    "too_large_here": "{what}大约需要 {need}，超过这台机器现在空闲的内存（{limit}）：请换一段更短的文本",
    "busy": "{what}大约需要 {need}，而正在进行的请求已占用这个服务器 {limit} 中的 {held}：请稍后再试",
    "bad_setting": "QKV_MEMORY_BUDGET 应当是一个大小，例如 6GB、500MB 或字节数，至少 1MB；收到的是 {value}",
    "what_trace": "一次记录中间结果的前向计算（{T} 个词元，记录 {n} 个激活）",
    "what_lens": "{T} 个位置的 logit lens（{rows} 行，每行 {d_vocab} 个概率）",
}

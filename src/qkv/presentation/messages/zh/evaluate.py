"""qkv eval（qkv.core.train.evaluate、qkv.apps.cli.evaluate）的提示和报告，中文（键与 en/evaluate.py 相同）。"""

MESSAGES = {
    "unit": "窗",  # 进度条数的是窗口：12/40 [00:03, 4.1窗/s]
    "no_next_token": (
        "这个模型不预测下一个词元（BERT 这样的编码器没有反嵌入）：qkv eval 能评估 GPT、Llama 一类的模型或 GGUF 文件"
    ),
    "translates": (
        "翻译模型预测的是一句原文的译文，不是一段文本的下一个词元：qkv eval 能评估 GPT、Llama 一类的模型或 GGUF 文件"
    ),
    "ctx_range": "--ctx 要在 1 到模型的上下文长度 {n_ctx} 个词元之间；收到的是 {got}",
    "stride_range": "--stride 要在 1 到窗口长度 {ctx} 个词元（--ctx）之间；收到的是 {got}",
    "batch_range": "--batch 至少是 1；收到的是 {got}",
    "text_empty": "文本是空的：没有可以评估的内容",
    "text_too_short": "文本只有 {n} 个词元：qkv eval 给第一个词元之后的每个词元打分，所以至少要 2 个",
    "text_too_long": "文本的 UTF-8 有 {bytes} 字节，超过了 qkv eval 一次能读的 {most} 字节：请分成几段",
    "report": (
        "模型 {model}，文本 {text}\n"
        "  损失        每个词元 {loss} 奈特\n"
        "  困惑度      {perplexity}\n"
        "  每字节比特  {bits_per_byte}\n"
        "  打分        {tokens} 个词元，{bytes} 字节（第一个词元之后的全部），共 {windows} 个窗口\n"
        "  窗口        {windowing}"
    ),
    "windowing_apart": "每个 {ctx} 个词元，首尾相接（每个词元都在它所在窗口里前面的词元之后读）",
    "windowing_stride": "每个 {ctx} 个词元，每次向后移 {stride} 个（每个词元之前至少读过 {context} 个词元）",
}

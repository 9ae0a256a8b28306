"""qkv.show：笔记本里内嵌的探索页（qkv.apps.notebook）：中文（与 en/notebook.py 同键）。"""

MESSAGES = {
    "too_large": (
        "这个视图的页面会有 {size}，超过笔记本里一个视图能容纳的大小（{limit}）：请换一段更短的文本"
        "（这段有 {n} 个词元），或者用 `qkv serve` 打开探索页"
    ),
    "too_large_early": (
        "这个视图的页面至少会有 {size}，超过笔记本里一个视图能容纳的大小（{limit}）：请换一段更短的文本"
        "（这段有 {n} 个词元），或者用 `qkv serve` 打开探索页"
    ),
    "plain": "qkv 探索页：{n} 个词元（{model}），打开在层 {layer}、头 {head}：{text}",
    "title": "qkv 探索页：{text}",
    "still": (
        "这是层 {layer}、头 {head} 的静态图：这个查看器不运行脚本，所以这里看不到 qkv.show 生成的交互式探索页。"
        "请在 Jupyter、VS Code 或 Colab 中打开这个笔记本来探索。"
    ),
}

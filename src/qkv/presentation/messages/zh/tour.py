"""网页导览（qkv.apps.web.routes_tour、qkv.analysis.no_positions）的提示，中文（键与 en/tour.py 相同）。"""

MESSAGES = {
    "positions_decoder": (
        "只有 GPT（解码器）才能关掉位置信息：这个模型不是，所以导览里讲位置的那一步在它上面量不出来；"
        "请服务一个解码器（比如自带模型：qkv serve）再看"
    ),
    "no_translator": (
        "这里没有装自带的翻译模型（{error}）：可以用 qkv train --task translate 训练一个，"
        "或者用 qkv serve --ckpt 目录 打开一个翻译模型的检查点目录"
    ),
}

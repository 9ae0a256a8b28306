"""网页导览（qkv.apps.web.routes_tour、qkv.analysis.no_positions）的提示，中文（键与 en/tour.py 相同）。"""

MESSAGES = {
    "positions_decoder": (
        "只有 GPT（解码器）才能关掉位置信息：这个模型不是，所以导览里讲位置的那一步改看自带模型的数字（qkv serve）"
    ),
    "no_translator": (
        "这里没有装自带的翻译模型（{error}）：可以用 qkv train --task translate 训练一个，"
        "或者用 qkv serve --ckpt translate 打开它"
    ),
}

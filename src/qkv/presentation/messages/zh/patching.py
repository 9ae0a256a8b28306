"""激活修补（qkv patch，qkv.analysis.patch）：拒绝的理由与结果表（中文）。

“块”只指 Transformer 的 block（块 L）；被修补的一小份激活（某层某位置，或某层某个头）叫“一处”。"""

MESSAGES = {
    # ------------------------------------------------------------------ 拒绝
    "no_logits": "{title}没有可以度量的 logits（没有预测下一个词元的输出头）：激活修补需要一个 GPT",
    "family": "激活修补只处理单独一叠块；{title}有两叠：请给一个 GPT",
    "site": "不认识的位置类型 {site}：可选 {sites}",
    "site_type": (
        "位置类型必须是 {sites} 之一，写在两段文本之后：patch(model, clean_ids, corrupted_ids, site, metric)；"
        "收到的是 {got}"
    ),
    "batch": "batch 必须是不小于 1 的整数（每次前向传播修补几处）；收到的是 {got}",
    "same_words": (
        "正确词和错误词是同一个（{word}）：logit(正确词) - logit(错误词) 在任何运行里都是 0；请给两个不同的词"
    ),
    "no_mlp": "这个模型没有 MLP（mlp = none），所以没有 mlp_out 可以修补；请用 resid_pre、attn_out 或 z",
    "lengths": (
        "干净文本有 {clean} 个词元（{clean_tokens}），损坏文本有 {corrupted} 个（{corrupted_tokens}）："
        "修补是把一次运行的某一处换到另一次运行的同一处上，所以两段文字的词元数必须相同"
    ),
    "word_empty": "正确词和错误词都必须是一个词，不能为空",
    "word_tokens": "{word} 在这里是 {n} 个词元（{pieces}）：正确词和错误词都必须各是一个词元",
    "position": "指标所在的位置 {pos} 超出范围：这段文字有 {T} 个词元",
    "missing": "修补图还需要 {flags}",
    "flags_other": "{flags} 只用于修补图（qkv figure patching）",
    # ------------------------------------------------------------------ 结果表（qkv patch）
    "title": "在 {site} 上做激活修补：运行损坏文本，每次把干净文本那次运行里的一处激活换进去",
    "site_resid_pre": "resid_pre：进入块 L 时的残差流，每次换一个位置",
    "site_attn_out": "attn_out：块 L 的注意力加到残差流上的量，每次换一个位置",
    "site_mlp_out": "mlp_out：块 L 的 MLP 加到残差流上的量，每次换一个位置",
    "site_z": "z：一个头的输出 z = A v（乘 W_O 之前），所有位置一起换",
    "site_whole": "{site}：块 L 在这里的整个激活，所有位置（和所有头）一起换",
    "clean_text": "干净文本：{text}",
    "corrupted_text": "损坏文本：{text}",
    "metric": "指标：位置 {pos}（{tok}）上的 logit({answer}) - logit({wrong})",
    "runs": "干净运行：{clean}    损坏运行：{corrupted}",
    "cells": (
        "每一格是只换进那一处之后的指标；括号里是它从损坏运行走向干净运行的比例，"
        "(修补后 - 损坏) / (干净 - 损坏)：0 表示毫无作用，1 表示完全恢复干净文本的答案。"
    ),
    "cells_equal": "干净运行与损坏运行的指标相同，两者之间没有距离可分：每一格只是换进那一处之后的指标。",
    "gap_small": (
        "注意：干净运行与损坏运行只差 {gap}（不到 {limit}），两段文字几乎没有改变答案，"
        "除以这么小的差得到的比例并不可靠。"
    ),
    "gap_small_spread": (
        "注意：干净运行与损坏运行只差 {gap}，比单独一处对指标的影响还小，除以这么小的差得到的比例并不可靠。"
    ),
    "corner_pos": "层 \\ 位置",
    "corner_head": "层 \\ 头",
    "corner_whole": "层",
    "whole": "整层",
    "piece_whole": "层 {layer}：{value}{share}",
    "layer": "层 {layer}",
    "head": "头 {head}",
    "strongest": "对指标影响最大的几处：",
    "piece_pos": "层 {layer}，位置 {pos}（{tok}）：{value}{share}",
    "piece_head": "层 {layer}，头 {head}：{value}{share}",
    "share": "（比例 {share}）",
}

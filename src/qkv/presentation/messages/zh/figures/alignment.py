"""翻译模型的交叉注意力作为词对齐（qkv figure alignment）（中文）。"""

MESSAGES = {
    "head_title": "交叉注意力：解码器层 {layer} 头 {head}",
    "mean_title": "{n} 个头的平均",
    "head": "头 {head}",
    "grid_title": "解码器层 {layer} 的交叉注意力：每个目标词读了哪些原文词",
    "target": "目标词（这一步写出的词）",
    "source": "原文词",
    "weight": "注意力权重（每行之和为 1）",
    "caption": "行：解码器某一步写出的目标词，它的 query 来自解码器。列：一个原文词，它的 key 和 value 来自编码器。",
    "gold": "红框：语料给出的标准词对齐（每个目标词翻译的是哪个原文词）。",
    "no_pair": "没有标准词对齐：原文不是语料中的句子。",
    "differs": "没有标准词对齐：模型的译文与语料中的译文不同。",
    "hull_title": "解码器层 {layer} 交叉注意力头 {head}：目标步 {pos}「{tok}」的 z 与原文的 value",
}

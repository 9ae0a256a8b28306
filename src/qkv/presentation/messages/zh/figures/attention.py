"""Attention heatmaps (qkv figure attention, qkv figure head) (Chinese)."""

MESSAGES = {
    "grid_title": "注意力权重（行：查询词元，列：键词元）",
    "layer_title": "层 {layer}",
    "head": "头 {head}",
    "layer": "层 {layer}",
    "weight": "注意力权重",
    "head_title": "层 {layer} 头 {head} 的注意力权重",
    "key": "键：被关注的词元",
    "query": "查询：正在关注的词元",
    "row_sum": "注意力权重（每行之和为 1）",
}

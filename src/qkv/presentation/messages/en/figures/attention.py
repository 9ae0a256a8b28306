"""Attention heatmaps (qkv figure attention, qkv figure head) (English)."""

MESSAGES = {
    "grid_title": "Attention patterns (row: query token, column: key token)",
    "layer_title": "Layer {layer}",
    "head": "head {head}",
    "layer": "layer {layer}",
    "weight": "attention weight",
    "head_title": "Layer {layer}, head {head}: attention pattern",
    "key": "key: the token looked at",
    "query": "query: the token looking",
    "row_sum": "attention weight (each row sums to 1)",
}

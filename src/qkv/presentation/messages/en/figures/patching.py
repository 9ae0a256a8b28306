"""Activation patching as a heat map (qkv figure patching) (English)."""

MESSAGES = {
    "title": "Activation patching at {site}: what each clean piece brings back",
    "layer": "layer {layer}",
    "head": "head {head}",
    "positions": "position (clean token/corrupted token)",
    "heads": "head (all positions patched at once)",
    "share": "(patched - corrupted) / (clean - corrupted)",
    "difference": "patched - corrupted",
    "metric": "metric: logit({answer}) - logit({wrong}) at position {pos};",
    "runs": "clean run {clean}, corrupted run {corrupted}",
}

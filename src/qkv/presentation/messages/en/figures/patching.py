"""Activation patching as a heat map (qkv figure patching) (English)."""

MESSAGES = {
    "title": "Activation patching at {site}: what each clean piece brings back",
    "layer": "layer {layer}",
    "head": "head {head}",
    "positions": "position (clean token/corrupted token)",
    "heads": "head (all positions patched at once)",
    "whole": "whole layer",
    "whole_label": "the whole activation of each layer, all positions at once",
    "share": "(patched - corrupted) / (clean - corrupted)",
    "share_colours": "blue: toward the clean run, red: away from it",
    "difference": "patched - corrupted",
    "difference_colours": "blue: up, red: down",
    "metric": "metric: logit({answer}) - logit({wrong}) at position {pos};",
    "gap_small": "the two runs barely differ: the shares are unreliable",
    "runs": "clean run {clean}, corrupted run {corrupted}",
}

"""Activation patching (qkv patch, qkv.analysis.patch): its refusals and its table (English)."""

MESSAGES = {
    # ------------------------------------------------------------------ refusals
    "no_logits": "{title} has no logits to measure (no next-token head): patching needs a GPT",
    "family": "patching runs one stack of blocks; {title} has two: give a GPT",
    "site": "unknown site {site}: use one of {sites}",
    "site_type": (
        "the site must be one of {sites}, given after the two texts: patch(model, clean_ids, corrupted_ids, "
        "site, metric); got {got}"
    ),
    "batch": "batch must be a whole number of at least 1 (pieces per forward pass); got {got}",
    "same_words": (
        "the answer and the wrong word are the same ({word}): logit(answer) - logit(wrong) is 0 in every run; "
        "give two different words"
    ),
    "no_mlp": "this model has no MLP (mlp = none): there is no mlp_out to patch; use resid_pre, attn_out or z",
    "lengths": (
        "the clean text has {clean} tokens ({clean_tokens}) and the corrupted one {corrupted} "
        "({corrupted_tokens}): patching puts a piece of one run "
        "in the place of the same piece of the other, so both need the same number of tokens"
    ),
    "word_empty": "the answer and the wrong word must each be a word, not empty",
    "word_tokens": "{word} is {n} tokens here ({pieces}): the answer and the wrong word must each be one token",
    "position": "the metric's position {pos} is out of range: the text has {T} tokens",
    "missing": "the patching figure needs {flags}",
    "flags_other": "{flags} only go with the patching figure (qkv figure patching)",
    # ------------------------------------------------------------------ the table (qkv patch)
    "title": "Activation patching at {site}: the corrupted text, run with one piece of the clean run put in its place",
    "site_resid_pre": "resid_pre: the residual stream as it enters block L, at one position",
    "site_attn_out": "attn_out: what block L's attention adds to the residual stream, at one position",
    "site_mlp_out": "mlp_out: what block L's MLP adds to the residual stream, at one position",
    "site_z": "z: one head's output z = A v (before W_O), at every position at once",
    "site_whole": "{site}: block L's whole activation there, every position (and head) at once",
    "clean_text": "clean text:     {text}",
    "corrupted_text": "corrupted text: {text}",
    "metric": "metric: logit({answer}) - logit({wrong}) at position {pos} ({tok})",
    "runs": "clean run: {clean}    corrupted run: {corrupted}",
    "cells": (
        "Each cell is the metric with that one piece patched in; in brackets, its share of the way from the "
        "corrupted run to the clean one, (patched - corrupted) / (clean - corrupted): 0 changes nothing, "
        "1 restores the clean answer."
    ),
    "cells_equal": (
        "The clean and the corrupted run give the same metric, so there is no way between them to share out: "
        "each cell is the metric with that piece patched in."
    ),
    "gap_small": (
        "Caution: the clean and the corrupted run differ by only {gap} (under {limit} logit), so the two texts "
        "barely change the answer and the shares, divided by that small gap, are unreliable."
    ),
    "gap_small_spread": (
        "Caution: the clean and the corrupted run differ by only {gap}, less than single pieces move the "
        "metric, so the shares, divided by that small gap, are unreliable."
    ),
    "corner_pos": "layer \\ position",
    "corner_head": "layer \\ head",
    "corner_whole": "layer",
    "whole": "the whole layer",
    "piece_whole": "layer {layer}: {value}{share}",
    "layer": "layer {layer}",
    "head": "head {head}",
    "strongest": "The pieces that move the metric most:",
    "piece_pos": "layer {layer}, position {pos} ({tok}): {value}{share}",
    "piece_head": "layer {layer}, head {head}: {value}{share}",
    "share": " (share {share})",
}

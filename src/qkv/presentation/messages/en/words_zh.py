"""Words a Chinese reader met in English (issue 32): what each hook name means, the hull figure's axes,
the progress lines of `qkv demo`. Same keys as zh/words_zh.py. A hook's word is said beside its name
(qkv.presentation.hook_words): an English reader knows the names, so English writes the name alone."""

MESSAGES = {
    # a hook name with its word beside it; English keeps the bare name, as TransformerLens writes it
    # ({word:.0} is the word cut to no characters: the same fields as the Chinese, nothing written)
    "named": "{word:.0}{name}",
    # what each hook name records (TransformerLens's names, without "hook_"); the page's tooltips say them
    "hook_embed": "token embedding",
    "hook_pos_embed": "position embedding",
    "hook_resid_pre": "residual stream entering the block",
    "hook_resid_mid": "residual stream after attention",
    "hook_resid_mid_cross": "residual stream after cross-attention",
    "hook_resid_post": "residual stream leaving the block",
    "hook_attn_out": "what attention adds",
    "hook_cross_attn_out": "what cross-attention adds",
    "hook_mlp_out": "what the MLP adds",
    "hook_q": "queries",
    "hook_k": "keys",
    "hook_v": "values",
    "hook_rot_q": "queries after RoPE",
    "hook_rot_k": "keys after RoPE",
    "hook_attn_scores": "attention scores",
    "hook_pattern": "attention weights",
    "hook_z": "each head's weighted sum of values",
    "hook_result": "what each head writes",
    "hook_dots": "the dot products q·k",
    "hook_scale": "the norm's divisor",
    "hook_normalized": "the normalised vector",
    "hook_out": "the norm's output",
    "hook_pre": "the MLP's hidden layer before its activation",
    "hook_pre_linear": "the gated MLP's linear branch",
    "hook_post": "the MLP's hidden layer after its activation",
    # the norms' formulas in `qkv trace --check` (qkv.core.see.invariants writes them in English)
    "formula_ln_scale": "sqrt(var(x) + eps)",
    "formula_rms_scale": "sqrt(mean(x²) + eps)",
    "formula_ln_out": "(x - mean) / scale · weight + bias",
    "formula_rms_out": "x / scale · weight",
    # the hull figure's axes when the values are projected onto their two principal components
    "pc1": "PC1",
    "pc2": "PC2",
    # `qkv demo`: one line per lesson as it finishes
    "lesson_line": "  {name:<11} {seconds:>5} s  {headline}",
}

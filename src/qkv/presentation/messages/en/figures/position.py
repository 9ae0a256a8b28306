"""Position figures: the sinusoidal table and RoPE's rotations (qkv figure positions, rope) (English)."""

MESSAGES = {
    "dims": "dimension (even: sin, odd: cos)",
    "position": "position t",
    "table_title": "Sinusoidal position table ({n_ctx} × {d_model})",
    "dim": "dim {d} (period {period:.3g})",
    "curves_title": "Low dimensions turn fast, high ones slowly",
    "fast": "fast",
    "slow": "slow",
    "pair": "pair {i} ({speed}): θ = {theta:.3g} rad per position",
    "offset": "q·k after rotation: positions ({s}, {t}) → {a:.4f}, ({s2}, {t2}) → {b:.4f}\n"
    "the dot product of two rotated vectors depends only on the offset t − s",
    "rope_title": "RoPE: a query's pairs rotated by t·θ_i (d_head = {d_head})",
}

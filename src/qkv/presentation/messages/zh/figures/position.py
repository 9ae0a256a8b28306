"""Position figures: the sinusoidal table and RoPE's rotations (qkv figure positions, rope) (Chinese)."""

MESSAGES = {
    "dims": "维度（偶数维 sin，奇数维 cos）",
    "position": "位置 t",
    "table_title": "正弦位置编码表（{n_ctx} × {d_model}）",
    "dim": "维度 {d}（周期 {period:.3g}）",
    "curves_title": "低维变化快，高维变化慢",
    "fast": "快",
    "slow": "慢",
    "pair": "维度对 {i}（{speed}）：每个位置转 θ = {theta:.3g} 弧度",
    "offset": "旋转后的 q·k：位置 ({s}, {t}) → {a:.4f}，({s2}, {t2}) → {b:.4f}\n"
    "两个旋转后向量的点积只取决于位置之差 t − s",
    "rope_title": "RoPE：查询向量的每一对维度按 t·θ_i 旋转（d_head = {d_head}）",
}

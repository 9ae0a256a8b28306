"""The token-embedding map (qkv figure embedding) (Chinese)."""

MESSAGES = {
    "axis1": "第一主方向（占方差 {share:.0%}）",
    "axis2": "第二主方向（占方差 {share:.0%}）",
    "title": "词元嵌入 W_E（{n} 个词元，d_model = {d}），PCA 降到二维",
    "lines": "连线：在全部 {d} 维中余弦相似度最高的 {k} 个词元",
}

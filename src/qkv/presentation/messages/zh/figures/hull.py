"""The convex-hull figure (qkv figure hull, qkv attend --figure) (Chinese)."""

MESSAGES = {
    "title": "单头注意力的输出 z 落在 Value 的凸包内",
    "trace_title": "层 {layer} 头 {head}：位置 {pos} 的词元（{tok}）的输出 z 落在 Value 的凸包内",
    "caption": "z = Σ a_j v_j，其中每个 a_j ≥ 0 且 Σ a_j = 1：z 是 Value 的加权平均，所以落在它们围成的阴影区域内。"
    "连线越粗，权重越大。",
    "projected": "Value 有 {d} 维，图中是 PCA 投影到前两个主方向的结果；投影是线性映射，保持凸组合不变，"
    "所以投影后的 z 仍在投影后的凸包内。",
    "hull": "Value 的凸包",
    "z": "输出 z",
}

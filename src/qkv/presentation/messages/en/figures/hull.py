"""The convex-hull figure (qkv figure hull, qkv attend --figure) (English)."""

MESSAGES = {
    "title": "One head's output z lies in the convex hull of the values",
    "trace_title": "Layer {layer}, head {head}: the output z of token {pos} ({tok}) lies in the hull of the values",
    "caption": "z = Σ a_j v_j with every a_j ≥ 0 and Σ a_j = 1: a weighted average of the values, so it lands in the "
    "shaded region they span. Thicker lines mean larger weights.",
    "projected": "The values have {d} dimensions; the picture shows their PCA projection onto two principal "
    "directions. A linear map keeps convex combinations, so the projected z stays inside the projected hull.",
    "hull": "convex hull of the values",
    "z": "output z",
}

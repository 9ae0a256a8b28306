"""qkv attend: one query's attention derived step by step (English)."""

MESSAGES = {
    "title": "Attention for one query, step by step (d_k = {dk})",
    "inputs": "Inputs: the query q, keys k_j and values v_j",
    "dots": "Match: the dot product q·k_j measures how well key j fits the query",
    "scale": "Scale: divide by √d_k = {r}, so scores do not grow with the dimension",
    "exp": "Exponentiate: e^{s_j} turns every score into a positive number",
    "stable": "In practice the largest score max s = {m} is subtracted first (no overflow); the ratios are unchanged:",
    "norm": "Normalise: a_j = e^{s_j} / Σ e^{s_i}; every a_j ≥ 0 and they add up to 1",
    "mix": "Mix: z = Σ a_j v_j blends the values by their weights",
    "hull": "Check: is z inside the convex hull of the values?",
    "inside": "Yes. A linear program finds weights w = {w} (w ≥ 0, Σ w = 1) with Σ w_j v_j = z; distance 0.",
    "other_w": "(When the values are affinely dependent the combination is not unique, so w may differ from a; any "
    "such w proves the point.)",
    "outside": "No: z is at L1 distance {d} from the hull. This should not happen; it signals a numerical problem.",
    "note": "Note: only one head's normalised weights guarantee that z stays inside the hull of the values. "
    "Concatenating heads and multiplying by W_O, adding the residual x, or applying dropout to the weights without "
    "renormalising them (their sum is then no longer 1, as in training) can all take the result outside it.",
}

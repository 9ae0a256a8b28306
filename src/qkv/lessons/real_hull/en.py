"""Lesson "real-hull": z in the hull of its values on every head of a real encoder, and where that ends (English)."""

MESSAGES = {
    "title": "A real model's hulls: every head's z inside its values' hull (MiniLM), and where that ends",
    "unnamed": "this encoder",
    "text": "An attention head's output z = Σ_j a_j v_j has weights a_j ≥ 0 that add up to 1, so z lies in the convex "
    "hull of the head's values v_j. The lesson “convex” checks this on one head of the bundled model; here "
    "every head of {model} is checked ({n_total} heads: {n_layers} layers × {n_heads}), on “{text}” ({T} tokens "
    "with [CLS] and [SEP]). Each check is a linear program that looks for convex weights reproducing the "
    "point; it answers with the L1 distance from the point to the hull (0: inside, up to a relative tolerance "
    "of 1e-5).\n\n"
    "{steps}\n\n"
    "So the guarantee is exact for z, survives a linear map and a shift applied to the values as well, and "
    "ends where the point and the values are no longer treated alike: the residual set against the values "
    "alone, or the LayerNorm. The second figure draws one head, {ex_head}, at “{query}” (it gives “{cue}” "
    "{cue_weight:.3f}, more than any other head does), its values projected onto their two main directions.",
    "z_all": "1. z in the hull of the values ({d_head} coordinates per head), at every position of the sentence: "
    "{z_inside} of {z_points} inside; the largest distance is {z_max}. The real model keeps the rule "
    "exactly: softmax weights make a convex combination, whatever training made of W_Q, W_K and W_V.",
    "z_some": "1. z in the hull of the values ({d_head} coordinates per head), at every position of the sentence: "
    "{z_outside} of {z_points} outside (largest distance {z_max}), more than float rounding should give.",
    "zW_all": "2. The rest is measured at “{query}” (position {position}). Multiplied by W_O[h], z enters the "
    "{d_model}-dimensional residual space, and z·W_O[h] = Σ_j a_j (v_j·W_O[h]) with the same weights, so "
    "it stays in the hull of the points v_j·W_O[h]: {zW_inside} of {n_total} heads inside (largest "
    "distance {zW_max}).",
    "zW_some": "2. The rest is measured at “{query}” (position {position}). Multiplied by W_O[h], z·W_O[h] against "
    "the hull of the points v_j·W_O[h]: {zW_outside} of {n_total} heads outside (largest distance {zW_max}).",
    "x_all": "3. The residual connection adds the stream x (|x| between {norm_x_min:.1f} and {norm_x_max:.1f} over "
    "the layers at this position, while one head writes |z·W_O[h]| = {norm_zW_median:.2f} in the median, "
    "{norm_zW_max:.2f} at most). Against the same hull of the v_j·W_O[h], x + z·W_O[h] is outside for all "
    "{n_total} heads, at L1 distances from {x_zW_min} to {x_zW_max}: the seed's claim, on every head of a "
    "real model.",
    "x_some": "3. The residual connection adds the stream x (|x| between {norm_x_min:.1f} and {norm_x_max:.1f} over "
    "the layers at this position; |z·W_O[h]| = {norm_zW_median:.2f} in the median). Against the same hull, "
    "x + z·W_O[h] is outside for {x_zW_outside} of {n_total} heads (distances up to {x_zW_max}).",
    "sum_all": "4. That “outside” depends on the hull it is set against. Move every value the way z·W_O[h] was "
    "moved: add c = x + b_O + the other heads' outputs to each v_j·W_O[h]. The sum x + attn_out = "
    "c + z·W_O[h] is then inside the moved hull for {sum_inside} of {n_total} heads (largest distance "
    "{sum_max}): adding one vector to every point moves the hull along with them.",
    "sum_some": "4. Moving every value the way z·W_O[h] was moved (adding c = x + b_O + the other heads' outputs), "
    "x + attn_out is outside the moved hull for {sum_outside} of {n_total} heads (largest distance {sum_max}).",
    "mid_all": "5. {model} is post-norm: the attention half of a block ends with resid_mid = LN1(x + attn_out) "
    "(recomputed here to within {ln_gap}). Sending the moved values through LN1 as well, resid_mid is "
    "outside their hull for all {n_total} heads: L1 distance {mid_median} in the median, from {mid_min} "
    "({mid_min_head}, whose largest weight at “{query}” is {mid_min_weight:.4f}) to {mid_max} "
    "({mid_max_head}, largest weight {mid_max_weight:.3f}).",
    "mid_some": "5. {model} is post-norm: the attention half of a block ends with resid_mid = LN1(x + attn_out) "
    "(recomputed here to within {ln_gap}). Sending the moved values through LN1 as well, resid_mid is "
    "outside their hull for {mid_outside} of {n_total} heads and inside for {mid_inside} (the closest "
    "is {mid_min_head}, {mid_min}, whose largest weight at “{query}” is {mid_min_weight:.4f}).",
    "mid_why": "LayerNorm is not an affine map: it centres each vector and divides it by its own spread, so every "
    "output lies on one ellipsoid (length √d_model after centring, then stretched by γ and shifted by β). "
    "A mix of several points of that surface lies inside it, off the surface, while LN1 of the mix is back "
    "on the surface, and the hull of points on such a surface touches it only at those points: resid_mid "
    "can be in the hull only where it coincides with one of the mapped values, which it nearly does when "
    "a head gives almost all its weight to one token.",
    "headline": "{model}, {n_total} heads: z inside for {z_inside}/{z_points} (head, position) pairs; at “{query}”: "
    "z·W_O inside {zW_inside}/{n_total}; x + z·W_O outside {x_zW_outside}/{n_total}; x + attn_out inside "
    "the moved hull {sum_inside}/{n_total}; LN1(x + attn_out) outside the mapped hull {mid_outside}/{n_total}",
    "head_title": "{head}: z of “{query}” in the hull of the values",
    "fig_inside": "{inside}/{total} at 0",
    "fig_z": "z\nvs v_j",
    "fig_zW": "z·W_O\nvs v_j·W_O",
    "fig_x_zW": "x + z·W_O\nvs v_j·W_O",
    "fig_sum": "x + attn_out\nvs moved values",
    "fig_mid": "LN1(x + attn_out)\nvs LN1(moved values)",
    "fig_y": "L1 distance to the hull (0: inside)",
    "fig_title": "{model}: every head at “{query}” (z: every position, the largest)",
}

"""Lesson "llm-hull": z inside the hull of its values on every head of a real LLM (English)."""

MESSAGES = {
    "title": "A real LLM's hulls: every head's z inside the hull of its values (SmolLM2), and where that ends",
    "reads_why": "it checks a decoder's heads at the last token of each sentence, which sees the whole sentence",
    "unnamed": "this model",
    "col_text": "text",
    "col_tokens": "tokens",
    "col_min_a": "min A",
    "col_sum": "max|ΣA−1|",
    "col_rebuild": "max|z−Av|",
    "col_lp": "LP dist",
    "text": "The source article's central claim: one head's output before W_O is z_i = Σ_j a_ij v_j with "
    "a_ij ≥ 0 and Σ_j a_ij = 1, a convex combination of the values, so it lies in their convex hull. "
    "Here it is checked on every head of {model}: {n_layers} layers × {n_heads} query heads = {n_total} "
    "heads (d_head {d_head}; grouped-query attention: each {group} query heads share one of the "
    "{n_kv_heads} key/value heads, so they mix the same values with their own weights), on {n_texts} "
    "English sentences ({n_positions} tokens in all):\n{texts}\n\n"
    "Two checks. The certificate reads the model's own weights A at every position of every head: no weight "
    "is negative (min A), each row adds up to 1, and Σ_j a_ij v_j rebuilds z (the error relative to the "
    "largest |v|). The independent check does not look at A: at each sentence's last token a linear "
    "program (qkv.core.see.hull) searches for any convex weights that reproduce z and answers with z's L1 "
    "distance to the hull (0: inside, to a relative tolerance of {tol}).\n"
    "{table}\n"
    "{inside}\n\n"
    "{outside}\n\n"
    "The first figure plots both distances for every head; the second draws one head, {ex_head}, at "
    "“{last_token}” (the head whose weights are spread most evenly, largest weight {ex_max:.3f}), its "
    "values projected onto their two main directions.",
    "inside_all": "Every weight is ≥ 0 (the smallest: {min_weight:.3g}), the rows add to 1 within {sum_error}, "
    "the rebuilt z differs from the model's by at most {rebuild_error} of the values' size, and the linear "
    "program finds z inside the hull for all {lp_checked} (head, sentence) pairs (largest distance "
    "{lp_max}). Whatever training made of W_Q, W_K and W_V, the softmax makes a convex combination: the "
    "claim holds exactly, on every head of a real model.",
    "inside_some": "The smallest weight is {min_weight:.3g}, the rows add to 1 within {sum_error}, the rebuilt "
    "z differs by at most {rebuild_error}; the linear program finds {lp_outside} of {lp_checked} "
    "(head, sentence) pairs outside (largest distance {lp_max}).",
    "outside_all": "The article also warns where the hull ends: the output projection and the residual "
    "connection are not bound by it. z W_O[h] is in the hull of the points v_j W_O[h] (the same weights), "
    "but the block adds it to the residual stream x: at the last token of “{first_text}”, x + z W_O[h] "
    "lies outside that hull for all {n_total} heads. The proof is a separating plane (the direction from "
    "the values' mean to the point): the point is at least {x_min:.3g} from the hull, {x_median:.3g} in the "
    "median, far beyond rounding.",
    "outside_some": "The output projection and the residual are not bound by the hull: at the last token of "
    "“{first_text}”, a separating plane shows x + z W_O[h] outside the hull of the v_j W_O[h] for "
    "{x_outside} of {n_total} heads (margins from {x_min:.3g}, median {x_median:.3g}); for the others this "
    "simple plane proves nothing either way.",
    "headline": "{model}, {n_total} heads × {n_texts} sentences: min A {min_weight:.3g}, |ΣA − 1| ≤ {sum_error}, "
    "|z − Σ a v| ≤ {rebuild_error}; linear program: z outside the hull for {lp_outside}/{lp_checked}; "
    "x + z·W_O outside the hull of v·W_O for {x_outside}/{n_total}",
    "head_title": "{head}: z of “{token}” in the hull of the values",
    "fig_z": "z: L1 distance to conv{v_j} (linear program)",
    "fig_x": "x + z·W_O: margin outside conv{v_j·W_O}",
    "fig_layer": "layer",
    "fig_y": "distance (0: inside)",
    "fig_title": "{model}: every head, at the last token",
}

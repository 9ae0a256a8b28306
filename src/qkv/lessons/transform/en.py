"""Lesson "transform": a matrix is a transformation of space (English)."""

MESSAGES = {
    "title": "A matrix is a transformation: what W_Q, W_K, W_V and W_O do to the space of word vectors",
    "holds": "holds",
    "fails": "does not hold",
    "trained": "trained",
    "random": "random (untrained)",
    "group_fruit": "fruit",
    "group_company": "company",
    "group_energy": "energy",
    "group_ambiguous": "fruit and company",
    "headline": "layer {layer} head {head}: W_Q stretches σ_1/σ_{r} = {q_cond:.1f} (random model {rq_cond:.1f}); "
    "trained condition numbers {t_min:.1f}–{t_max:.1f} vs random {r_min:.1f}–{r_max:.1f}, larger in "
    "{more_uneven} of {n_places} places (claim {verdict}); "
    "word groups between/within {before_ratio:.2f} before, after x·W_Q {ratios_q}",
    "intro": "Multiplying a vector by a matrix moves it, and since the same matrix multiplies every vector, it moves "
    "the whole space at once. Every matrix can be taken apart as W = U Σ Vᵀ (the singular value "
    "decomposition): for a row vector, x W = ((x U) Σ) Vᵀ first turns x onto a set of perpendicular "
    "directions (U), stretches the i-th of them by the number σ_i (Σ), and turns the result into the output "
    "space (Vᵀ). Rotate, stretch, rotate. Setting every σ_i to 1 leaves R = U Vᵀ, the rotation part, which turns "
    "but stretches nothing.\n\n"
    "In the bundled model a head's W_Q, W_K and W_V are {d_model} × {d_head} (from the {d_model}-dimensional "
    "residual stream to a {d_head}-dimensional head) and W_O is {d_head} × {d_model}. For layer {layer}, "
    "head {head}, multiplying U Σ Vᵀ back together gives every one of the four matrices to within "
    "{reconstruction_error:.1e}, and the rotation parts are orthonormal to within {orthogonality_error:.1e}: "
    "the decomposition is exact, not an approximation.",
    "stretch": "The stretch. W_Q of this head stretches its strongest direction by σ_1 = {q_s1:.3f} and its weakest "
    "by σ_{r} = {q_sr:.3f}, a ratio (the condition number) of {q_cond:.1f}. Its top 4 directions of {r} carry "
    "{q_top4:.0%} of its energy (Σσ²); its effective rank is {q_erank:.1f}; and the cosine between W_Q and "
    "its rotation part is {q_cos:.3f} (1 would mean a pure rotation times one number). Over all "
    "{n_layers} × {n_heads} heads, trained against a model of the same shape that was only initialised "
    "(seed {seed}), means with the range of the condition number:",
    "row": "  {matrix}: condition {t_condition_mean:.1f} ({t_condition_min:.1f}–{t_condition_max:.1f}) vs random "
    "{r_condition_mean:.1f} ({r_condition_min:.1f}–{r_condition_max:.1f}); effective rank {t_effective_rank_mean:.1f} "
    "vs {r_effective_rank_mean:.1f}; top-4 energy {t_top4_mean:.0%} vs {r_top4_mean:.0%}; "
    "cos(W, R) {t_rotation_cos_mean:.3f} vs {r_rotation_cos_mean:.3f}",
    "stretch_verdict": "A random matrix of this shape stretches its strongest direction only "
    "{r_min:.1f} to {r_max:.1f} times as much as its weakest, far more evenly than the trained ones. The claim that "
    "training made the stretch uneven, i.e. that in every place (layer, head and matrix) the trained matrix has "
    "a larger condition number than the untrained one in the same place: it is larger in {more_uneven} of {n_places} "
    "places, so the claim {verdict}.",
    "stretch_means": "Some directions are stretched much more than others, so a head favours some directions of the "
    "residual stream over the rest: the effective ranks above are out of {d_head} possible.",
    "cloud_before": "Now the same maps acting on words. The vector of a word is what the head reads when the text is "
    "that word alone ({input}: {input_how}). "
    "Three groups: fruit ({fruit_words}), company ({company_words}) and energy ({energy_words}); "
    "{ambiguous_words} mean both a fruit and a company in the training text and are shown apart. "
    "How separate the groups are: the mean distance between group centres divided by the mean distance "
    "of a word to its own centre, and the share of words whose nearest centre (computed without them) "
    "is their own. Before the map, x: ratio {before_ratio:.2f}, {before_accuracy:.0%} of the words nearest "
    "to their own group.",
    "input_pre": "the word's embedding row plus the vector of position 0, after the block's LayerNorm",
    "input_plain": "the residual stream as it enters the block, which the attention reads without a LayerNorm first",
    "cloud_after": "After x·W_Q, head by head: ratio {ratios_q}; after x·W_K: {ratios_k}; after x·W_V: {ratios_v}.",
    "q_sorts": "W_Q moves the groups further apart in {hq} of {n_heads} heads.",
    "q_not_sorts": "W_Q moves the groups further apart in only {hq} of {n_heads} heads: what a word's "
    "query asks for is not, in these heads, a sharper version of what kind of word it is.",
    "kv_counts": "W_K does so in {hk} of {n_heads} heads and W_V in {hv}.",
    "kv_sort": "In most heads the keys and values of these words keep their topics further apart than their "
    "input vectors do.",
    "kept": "Each of these maps reads only {d_head} of the {d_model} directions (the columns of U). The share of the "
    "cloud's spread that lies in those directions, head by head: W_Q {shares_q}, W_K {shares_k}, W_V {shares_v}; "
    "{d_head} random directions would hold {random_share:.0%} on average.",
    "nearest": "The double words, by the nearest group centre, before → after x·W_Q of head {head}: {words}.",
    "nearest_word": "{word} {before} → {after}",
    "twin": "In the untrained model of the same shape the same words have ratio {twin_before_ratio:.2f} before and "
    "{twin_q_ratio:.2f} after its W_Q: its embeddings are random, so there are no groups for a map to move.",
    "caveat": "Caveats: the two pictures are the top two principal components of each cloud, a flat shadow of "
    "{d_model} and {d_head} dimensions; the ratios and shares are measured in the full spaces (in the pictures' two "
    "dimensions the ratio of head {head} is {before_ratio_2d:.2f} before and {q_ratio_2d:.2f} after). With only "
    "{n_group_words} words in the groups, the accuracy moves in steps of 1/{n_group_words}. The bias b_Q only shifts "
    "the whole cloud, so it is left out; the trace's q minus b_Q equals x·W_Q to within {trace_max_diff:.1e}.",
    "fig_matrix": "{matrix} ($\\sigma_1/\\sigma_r$ = {cond:.1f})",
    "fig_index": "direction i",
    "fig_sigma": "singular value σ_i (stretch)",
    "fig_spectra": "Stretch factors of layer {layer}, head {head}: trained vs untrained",
    "fig_before": "before: x (between/within {ratio:.2f})",
    "fig_after": "after: x·W_Q of head {head} (between/within {ratio:.2f})",
    "fig_pc1": "principal component 1",
    "fig_pc2": "principal component 2",
}

"""Lesson "order": attention without positions sees a bag of words (English)."""

MESSAGES = {
    "title": "Word order: without positional information, 'I hit you' and 'you hit me' look the same",
    "headline": "order probes: no positions 1 layer {acc_none:.0%}, 2 layers {acc_none2:.0%}, learned "
    "{acc_learned:.0%}, sinusoidal {acc_sinusoidal:.0%}, RoPE {acc_rope:.0%}; permutation "
    "deviation: no positions, no mask {perm_none:.1e}, learned {perm_learned:.1e}; RoPE shift deviation "
    "{rope_shift_dev:.1e}",
    "leak_found": "It solves {acc_none2:.0%}, far above chance. That is not a positional encoding but the "
    "causal mask leaking order. One way to do it: in the first layer every token sees only the words before "
    "it, so the person who was hit (after the verb) can have the verb mixed into its vector, while the one who "
    "hit (before the verb) cannot. The second layer then only has to look for 'the person who has seen the verb'. The "
    "mask is positional information in disguise: a token can even count how many tokens precede it from "
    "the size of its attention weights when they are spread evenly (1 / the number of tokens it sees).",
    "leak_none": "It solves only {acc_none2:.0%}: within this budget it did not learn to exploit the causal "
    "mask. In principle the mask leaks order: in the first layer each token sees only the words before it, so the "
    "person after the verb gets a different vector from the person before it, and a second layer could "
    "tell them apart.",
    "text": "Attention by itself does not see order: the score q_i·k_j depends only on the two tokens' vectors, and "
    "neither softmax nor the weighted sum cares where they stand.\n\n"
    "(a) Permutation equivariance. Take a trained model without positions, drop the causal mask and shuffle an "
    "input of {perm_tokens} tokens: the output logits are merely shuffled the same way, largest deviation "
    "{perm_none:.1e} (computed in float64: only rounding is left). The same weights with the causal mask deviate by "
    "{perm_none_causal:.2f}; trained learned positions (mask dropped) by {perm_learned:.2f}. With no "
    "positions and no mask, 'I hit you' and 'you hit me' are the same bag of words to the model.\n\n"
    "(b) Order probes. Small models are trained on the order sentences of the built-in corpus ({tokens:,} "
    "tokens), one per kind of position ({n_layers} layer, d_model = {d_model}, {n_heads} heads, "
    "{steps} steps). The probes are {pairs} pairs of unseen Chinese sentences; within a pair the words are "
    "identical and only who hit whom is swapped, and a probe is solved when the model picks the right person to "
    "cry. Without positions (1 layer): {acc_none:.0%}; learned positions: {acc_learned:.0%}; "
    "sinusoidal: {acc_sinusoidal:.0%}; RoPE: {acc_rope:.0%}.\n"
    "Why a one-layer causal model without positions is a fair 'order-blind' model: its output at position t "
    "depends only on token t itself and on the bag of the first t tokens, in any order. Both members of a pair use "
    "the same bag, and so does the prefix at every position of the continuation, so they give each continuation "
    "exactly the same score (largest measured difference {pair_diff_none:.1e}); in every pair one member must "
    "be right and the other wrong. Share of pairs it tells apart: {apart_none:.0%}.\n"
    "One more layer (2 layers, no positions, still the causal mask): {leak}\n"
    "(Every model starts from GPT-2's N(0, 0.02²) token embeddings; the sinusoidal one multiplies them by "
    "√d_model = {sinusoidal_embed_scale:g}, as the 2017 paper does: the table's entries lie in ±1 and would otherwise "
    "drown the words under their positions.)\n\n"
    "(c) RoPE sees only the offset. RoPE rotates each pair of components of q and k by an angle proportional to "
    "the position; two rotations combine into one by the difference of their angles. For two random unit vectors "
    "q and k of {rope_d} dimensions, shifting both positions (s, t) by d (d in {shifts}) leaves q·k unchanged: "
    "largest deviation {rope_shift_dev:.1e} (the dot products themselves reach {rope_dot_scale:.1f}). Adding "
    "sinusoidal positions to q and k instead, the same shift changes q·k by up to {additive_shift_dev:.2f}.",
    "run_none": "none (1 layer)",
    "run_none2": "none (2 layers)",
    "run_learned": "learned",
    "run_sinusoidal": "sinusoidal",
    "run_rope": "RoPE",
    "chance": "chance (50%)",
    "probes_y": "order probes solved (%)",
    "probes_title": "{pairs} pairs with the same words in swapped roles",
    "perm_none": "no positions,\nno mask: permuted",
    "perm_none_causal": "no positions,\ncausal mask: permuted",
    "perm_learned": "learned positions,\nno mask: permuted",
    "rope_shift_dev": "RoPE q·k,\nshifted by d",
    "additive_shift_dev": "added sinusoids q·k,\nshifted by d",
    "change_x": "largest change (blue: symmetry holds, red: broken)",
    "change_title": "What changes when the input is permuted or shifted",
}

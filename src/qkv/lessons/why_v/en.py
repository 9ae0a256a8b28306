"""Lesson "why-v": z = A·V against z = A·K, trained side by side (English)."""

MESSAGES = {
    "title": "Why multiply by V: K is for matching, V for what is passed on (z = A·V versus z = A·K)",
    "headline": "d_head {width}: val loss A·V {val_v:.3f} / A·K {val_k:.3f}, "
    "association {association_v:.0%} / {association_k:.0%}, order {order_v:.0%} / {order_k:.0%}",
    "row": "- d_head {width}, {kind}: train loss {train:.3f}, validation loss {val:.3f}; sense {sense:.0%}, "
    "association {association:.0%}, order {order:.0%}; {params:,} parameters",
    "pair": "d_head = {width}: A·K ends with a validation loss {gap:.3f} nats {direction} than A·V (batch-loss gap "
    "over steps {early_from}–{early_to}: {early:+.3f}); mean probe accuracy {acc_v:.0%} (A·V) versus "
    "{acc_k:.0%} (A·K).",
    "higher": "higher",
    "lower": "lower",
    "better": "At this budget the model with its own W_V is better.",
    "worse": "In this pair the keys-only model comes out ahead.",
    "close": "At this budget the two are close.",
    "verdict": "{pair} {conclusion}",
    "text": "Attention does two jobs in a row. The first decides whom to listen to: the current token's query q_i is "
    "compared with every key k_j, and softmax turns the scores into weights a_ij. The second decides what is "
    "received: z_i = Σ_j a_ij v_j. A standard head gives each token two separate projections, k_j = x_j W_K for "
    'being found and v_j = x_j W_V for what it hands over. Remove W_V and mix the keys instead (values="k", '
    "z_i = Σ_j a_ij k_j), and whatever a token is matched by is also all it can pass on.\n\n"
    "The lesson trains two pairs of models. Within a pair the shape is the same ({n_layers} layers, "
    "{n_heads} heads, d_model = {d_model}), the seed is the same and so are the {steps} batches "
    "({batch_size} windows each) of the built-in Chinese corpus ({sentences} sentences, {tokens:,} "
    "tokens); only V versus K differs. The first pair has the usual head width d_head = {wide}; the second squeezes "
    "every head to d_head = {narrow}, so a key has hardly any spare directions and must both get found and carry "
    "the content. The probes are sentences never seen in training ({sense_probes} word-sense, "
    "{association_probes} long-range association, {order_probes} word-order), each solved when the "
    "right continuation gets the highest probability (guessing would score "
    "{sense_chance:.0%}, {association_chance:.0%} and {order_chance:.0%}):\n"
    "{rows}\n\n"
    "{verdicts}\n\n"
    "How to read it: with keys only, the features a head matches on and the content it delivers must live in the "
    "same few directions. A wide key still has room to hold both kinds of feature in different directions, and W_O "
    "and the MLP after attention can pick out the part they need; a narrow key has no such room, and something has "
    "to give. A separate W_V lets 'why I am relevant' "
    "and 'what I contribute' be learned independently. The figure shows all four loss curves, so you can see "
    "whether a gap is closing or holding.",
    "k_label": "z = A·K (no W_V)",
    "width_title": "heads of width d_head = {width}",
    "fig_title": "Same shape, same batches: mixing values v = x W_V or the keys k = x W_K",
}

"""Lesson "llm-induction": the induction heads of a real LLM (English)."""

MESSAGES = {
    "title": "A real LLM's induction heads: found by their pattern, tested by switching them off (SmolLM2)",
    "reads_why": "it measures how well a model predicts the next token from its context",
    "unnamed": "this model",
    "mode_zero": "zero",
    "mode_mean": "mean",
    "col_head": "head",
    "col_induction": "induction",
    "col_previous": "previous",
    "col_first": "1st repeat",
    "col_second": "2nd repeat",
    "col_gap": "gap",
    "row_clean": "the model as it is",
    "row_top": "top {k}, {mode}",
    "row_random": "{k} random ×{r}, {mode}",
    "bar_top": "top\n{mode}",
    "bar_random": "random\n{mode}",
    "text": "The lesson “induction” watches an induction head form in a two-layer model trained here. Does a "
    "real LLM have them? {model} ({n_layers} layers × {n_heads} heads) reads {n_seqs} sequences of random "
    "tokens, each a first token, {half} random tokens, and the same {half} again ({T} tokens). Nothing "
    "in its training could predict a random token, except its earlier copy: “A B … A → B”.\n\n"
    "Prefix matching: each head's induction score is the share of its weight that goes, from each token, "
    "to the token right after that token's earlier copy (about 0.5 for a perfect induction head here, "
    "{baseline:.3f} for a head spreading its weight evenly). {n_scoring} of the {n_total} heads score "
    "{scoring} or more, in layers {scoring_layers}; the best is {best} ({best_score:.3f}). The {k} highest, "
    "with their previous-token score (the weight on the token just before):\n"
    "{heads_table}\n\n"
    "The in-context loss: the mean cross-entropy (nats) of the random tokens where they first appear, and "
    "where they come again; gap = second − first. Then the {k} heads are switched off: by zero ablation "
    "(their z set to 0, so they write nothing) and by mean ablation (their z replaced by its average over "
    "all positions of these sequences: they keep writing their usual output, but no longer read the "
    "context). As a control, {k} heads drawn at random from the other heads, {n_random} draws "
    "(mean [lowest, highest]):\n"
    "{loss_table}\n"
    "{context} {verdict}",
    "context_helps": "As it is, the model predicts the second repeat far better than the first ({clean_second:.2f} "
    "against {clean_first:.2f} nats): it copies from the context.",
    "context_no": "As it is, the model does not predict the second repeat better than the first "
    "({clean_second:.2f} against {clean_first:.2f} nats).",
    "verdict_holds": "Switching off the {k} induction heads raises the second-repeat loss to {zero_second:.2f} "
    "(zero) and {mean_second:.2f} (mean), while {k} random heads raise it at most to {zero_rand_max:.2f} and "
    "{mean_rand_max:.2f}: copying from the context rests on these few heads, and the first repeat, which "
    "nothing can predict, hardly moves.",
    "verdict_fails": "Switching off the {k} heads of highest score gives a second-repeat loss of {zero_second:.2f} "
    "(zero) and {mean_second:.2f} (mean); some draw of {k} random heads gives {zero_rand_max:.2f} and "
    "{mean_rand_max:.2f}: here the score alone does not single out the heads the copying rests on.",
    "headline": "{model}: {n_scoring} heads with induction score ≥ {scoring} (layers {scoring_layers}), best "
    "{best} {best_score:.3f}; second-repeat loss {clean_second:.2f} nats, with the top {k} off {zero_second:.2f} "
    "(zero) / {mean_second:.2f} (mean), with {k} random heads off ≤ {zero_rand_max:.2f} / {mean_rand_max:.2f}",
    "fig_title": "{model}: induction heads on repeated random tokens",
    "fig_scores_title": "induction score of every head",
    "fig_head": "head",
    "fig_layer": "layer",
    "fig_loss_title": "loss on the second repeat, {k} heads switched off",
    "fig_loss_y": "cross-entropy (nats)",
    "fig_first": "first repeat, as it is",
}

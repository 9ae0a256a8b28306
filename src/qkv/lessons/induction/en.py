"""Lesson "induction": induction heads form in two layers, not in one, and carry the in-context gain (English)."""

MESSAGES = {
    "title": "Induction heads: with a second layer the model learns to copy from its context",
    "text": "An induction head completes a pattern the text has already shown: in “… A B … A” it looks from the\n"
    "second A at the token that came after the first A, and predicts B. It takes two heads in two layers.\n"
    "A head of an earlier layer writes into each position which token stood just before it (a\n"
    "previous-token head); the induction head then matches its query (“my token is A”) against keys that\n"
    "carry “my previous token was A”. In a single layer the keys know only their own token and position,\n"
    "so no head can look for “the token after an earlier A”.\n"
    "\n"
    "The experiment, after Olsson et al. (2022, “In-context learning and induction heads”), small enough\n"
    "for a CPU: two attention-only models (no MLP: x ← x + Attn(LN(x)) in each block) of 1 and of 2\n"
    "layers, {n_heads} heads each, d_model = {d_model}, trained character by character on {source_text},\n"
    "a text of {characters:,} characters ({vocab} distinct), with the same seed, the same {steps} batches of\n"
    "{batch_size} windows of {n_ctx} characters and the same learning rate. Natural text repeats itself too\n"
    "rarely for copying to pay off within a minute of training (on it induction heads appear after many\n"
    "millions of tokens), so in every training window one stretch of {repeat_min} to {repeat_max} characters\n"
    "from its first half is written once more at a random later place; the model is never told where.\n"
    "Every {probe_every} steps both models are measured on {n_seqs} sequences of random characters,\n"
    "each repeated once: [f, r_1 … r_{half}, r_1 … r_{half}].\n"
    "- The induction score of a head is the attention weight it puts on the token after an earlier copy\n"
    "  of the current token, as a share of all its weight over all positions (TransformerLens's head\n"
    "  detector). A head that spreads its weight evenly scores {baseline:.3f}; a perfect induction head\n"
    "  about 0.5, since only the second half has earlier copies.\n"
    "- The in-context gap is the mean loss on r_2 … r_{half} the second time minus the first time (in\n"
    "  nats). Random tokens cannot be guessed the first time, so only what the context holds can make\n"
    "  the second time cheaper: a negative gap is learning from the context. (Olsson's in-context\n"
    "  learning score asks the same of natural text: the loss at token 500 minus the loss at token 50.)\n"
    "\n"
    "Over training (the best induction score of any head, and the gap):\n"
    "{curve_table}\n"
    "After training the two-layer model's loss is {first_two:.2f} on the first copy and {second_two:.2f} on\n"
    "the second (gap {gap_two:+.2f}); the one-layer model's is {first_one:.2f} and {second_one:.2f} (gap\n"
    "{gap_one:+.2f}).{surprise}\n"
    "\n"
    "Then each head of the two-layer model is switched off in turn (z_h = 0) and the same sequences are\n"
    "measured again:\n"
    "{ablation_table}\n"
    "\n"
    "{verdicts}\n"
    "\n"
    "{spread}",
    "source_shakespeare": "tiny Shakespeare",
    "short_shakespeare": "tiny Shakespeare",
    "short_python_docs": "Python's documentation",
    "short_corpus": "the built-in corpus",
    "source_python_docs": "Python's own documentation (the help texts every Python installation carries, "
    "pydoc_data; tiny Shakespeare, shared/data/tinyshakespeare.txt beside the repository, is not on this "
    "machine)",
    "source_corpus": "the package's built-in English corpus (neither tiny Shakespeare nor Python's "
    "documentation is on this machine; this text is so regular that copying pays little, and the induction "
    "head may not form in time)",
    "surprised": " On the first copy both are above ln {vocab} = {uniform_loss:.2f}, an even guess: trained on text, "
    "they expect text and are surprised by random characters.",
    "formed": "In the two-layer model an induction head formed: the best score stayed near the even spread "
    "({ind_from:.3f}) at first, then rose to {ind_to:.3f}, {formed_times:.0f} times the even spread; it covered "
    "10%, 50% and 90% of that rise by steps {rise_start}, {rise_middle} and {rise_end}, and the gap fell half of "
    "its way at step {gap_middle}.",
    "together": "Score and loss change together.",
    "apart": "Score and loss do not change at the same time.",
    "not_formed": "In the two-layer model no induction head formed: its best score only went from "
    "{ind_from:.3f} to {ind_to:.3f}, {formed_times:.1f} times the even spread.",
    "one_flat": "No head of the one-layer model ever scored above {best_one:.3f}, and its gap reached "
    "{gap_one:+.2f}, against the two-layer model's {gap_two:+.2f}: it can favour the characters it has already "
    "seen (the second copy holds no new one), but not tell which of them comes next.",
    "one_formed": "Even the one-layer model reached an induction score of {best_one:.3f}, with a gap of "
    "{gap_one:+.2f}.",
    "ablate_removes": "Switching off {ind_name}, the induction head (score {ind_score:.3f}), removes the gain: "
    "{kept_pct} of the gap is left, and the second copy costs about as much as the first.",
    "ablate_reduces": "Switching off {ind_name}, the induction head (score {ind_score:.3f}), leaves {kept_pct} "
    "of the gap: other heads share the work.",
    "previous_needed": "{prev_name}, the head of layer 0 that looks most at the previous token (score "
    "{prev_score:.2f}), is the other half of the circuit: without it {kept_previous_pct} of the gap is left.",
    "previous_not_needed": "Without {prev_name}, the head of layer 0 that looks most at the previous token "
    "(score {prev_score:.2f}), {kept_previous_pct} of the gap is left.",
    "others_keep": "Switching off any other head leaves at least {kept_other_pct}.",
    "headline": "On {source_short}, 2 layers: best induction score {ind_from:.3f} → {ind_to:.3f} (half of the "
    "rise by step {rise_middle}), in-context gap {gap_two:+.2f} nats; 1 layer: at most {best_one:.3f}, gap "
    "{gap_one:+.2f}; layer {ind_layer}'s induction head (H{ind_head} in this run) off: {kept_pct} of the gap left",
    "spread": "These numbers are one run's, with seed {seed}. Another seed gives others: over seeds {seed_lo} to "
    "{seed_hi} on tiny Shakespeare the best induction score ended between {score_lo:.2f} and {score_hi:.2f}, the "
    "gap between {gap_lo:+.2f} and {gap_hi:+.2f} nats, and switching the induction head off left {kept_lo} to "
    "{kept_hi} of the gap; which head of layer 1 became the induction head (H0 or H1) changed with the seed too. "
    "What held for every seed: layer 1 has an induction head, the one-layer model has none, and switching that "
    "head off takes most of the gain away. The lesson trains on one thread, so a machine's number of cores does "
    "not change its numbers, and other CPU kernels (AVX2 or plain SSE instead of AVX-512) changed no printed "
    "digit; another text does change them.",
    "spread_other": "These numbers are one run's, on {source_short}, with seed {seed}. The figures in qkv's "
    "documentation (docs/lessons.md) are for tiny Shakespeare, which a checkout of the repository keeps beside it "
    "(shared/data/tinyshakespeare.txt): trained on another text the models end elsewhere, and the induction head "
    "may be the other head of layer 1. Another seed moves the numbers too.",
    "head": "L{layer} H{head}",
    "row_head": "{which} ({role})",
    "role_induction": "induction",
    "role_previous": "previous token",
    "role_other": "other",
    "none": "none off",
    "col_step": "step",
    "col_best_two": "2 layers",
    "col_gap_two": "gap",
    "col_best_one": "1 layer",
    "col_gap_one": "gap",
    "col_off": "head off",
    "col_first": "1st copy",
    "col_second": "2nd copy",
    "col_gap": "gap",
    "col_kept": "gap left",
    "model_one": "1 layer",
    "model_two": "2 layers",
    "curve_head": "{model}, {which}",
    "even_spread": "even spread",
    "y_score": "induction score",
    "y_gap": "in-context gap (nats): 2nd copy − 1st",
    "x_step": "training step (shaded: the 2-layer model's rise, 10% to 90%)",
    "fig_title": "Repeated random characters: {n_heads} heads per layer, d_model = {d_model}",
    "first_half": "1st copy",
    "second_half": "2nd copy",
    "uniform": "even guess: ln {vocab} = {uniform_loss:.2f}",
    "y_loss": "loss (nats) on r_2 … r_n",
    "ablation_title": "2 layers after training, one head switched off at a time",
}

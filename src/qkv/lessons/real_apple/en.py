"""Lesson "real-apple": apple as a fruit and as a company, inside a real pretrained encoder (English)."""

MESSAGES = {
    "title": "A real model: apple the fruit and Apple the company, layer by layer (MiniLM)",
    "unnamed": "this encoder",
    "stage_embed": "embedding",
    "stage_block": "L{layer}",
    "col_stage": "stage",
    "col_across": "across",
    "col_within": "within",
    "model_pretrained": "pretrained",
    "model_random": "random",
    "model_shuffled": "shuffled",
    "position_count": "position {position}: {count}",
    "text": "The lesson “context” follows 苹果 through qkv's own small model. Here is the same question for a "
    "model trained by others on real text: {model}, a {n_layers}-layer BERT encoder (d_model {d_model}, "
    "{n_heads} heads per layer). Its tokenizer lower-cases everything, so the fruit and the company enter "
    "as one and the same token: “{company_example}” becomes {pieces}, and apple is token {token_id} in "
    "both senses.\n\n"
    "{n_fruit} sentences written for this lesson use apple as a fruit (such as “{fruit_example}”), "
    "{n_company} use it as the company (such as “{company_example}”). The word stands at the same "
    "positions, equally often, in both sets ({position_counts} sentences of each sense; [CLS] is "
    "position 0).\n\n"
    "At the embedding output, apple's vector is LN(W_E[apple] + W_pos[p] + W_type[0]): the token is the "
    "same, only the position p differs. After each block (L0 to L{last_layer}) attention has mixed in the "
    "other words of the sentence. The mean cosine between the apple of a fruit sentence and the apple of "
    "a company sentence (across), and between two sentences of the same sense (within):\n"
    "{cos_table}\n"
    "{verdict_cos}\n\n"
    "A linear probe reads the sense from apple's vector: least squares with a ridge penalty "
    "(λ = {ridge}) on standardised vectors, fitted on {train_n} sentences and scored on the other "
    "{test_n}, {k_folds} times over, so that every sentence is scored once, by a probe that never saw it. "
    "Sentences with apple at the same position are held out together, so position cannot help. "
    "Held-out accuracy (chance: 0.5):\n"
    "{probe_table}\n"
    "{verdict_probe}\n\n"
    "“random” is the same architecture as it is before any training, initialised as BERT is (weights drawn "
    "from N(0, {init_std}²), biases 0, LayerNorm scale 1 and shift 0; seed {seed}). “shuffled” is MiniLM "
    "with the entries of each weight matrix put in a random order (seed {seed}): every matrix keeps its "
    "numbers and their sizes, and loses the arrangement training gave them.",
    "cos_embed": "At the embedding output the two cosines are the same up to {pre_emb_gap:+.3f} (within − across): "
    "only the position varies there, and it is balanced.",
    "cos_pre_holds": "In the pretrained model, from the first block on, two apples of the same sense are "
    "closer to each other than a fruit apple is to a company apple: within − across lies between {pre_min_gap:.3f} and "
    "{pre_max_gap:.3f} (largest at {pre_max_gap_stage}). All the cosines stay high (the lowest is "
    "{pre_min_cos:.3f}): the vectors keep much of their direction, and the sense lies in the difference.",
    "cos_pre_fails": "In the pretrained model, within − across is not positive after every block: its "
    "smallest value is {pre_min_gap:.3f}, its largest {pre_max_gap:.3f} (at {pre_max_gap_stage}).",
    "cos_controls_flat": "With random weights the two cosines never differ by more than "
    "{rand_abs_gap:.3f}, with shuffled weights by more than {shuf_abs_gap:.3f}: there, apple's vector does not "
    "group by sense.",
    "cos_controls": "With random weights the two cosines differ by up to {rand_abs_gap:.3f}, with "
    "shuffled weights by up to {shuf_abs_gap:.3f}.",
    "probe_embed": "At the embedding output every model's probe is at {pre_emb_probe:.3f}: equal positions give equal "
    "vectors there, one of each sense.",
    "probe_pre_all": "The pretrained model's apple carries its sense after every block: at least {pre_min_probe:.3f}, "
    "and {pre_best:.3f} at {pre_best_stage}.",
    "probe_pre": "The pretrained model's best stage is {pre_best_stage} ({pre_best:.3f}); its weakest block gives "
    "{pre_min_probe:.3f}.",
    "probe_random": "With random weights the probe still reaches {rand_best:.3f} (at {rand_best_stage}): random "
    "attention also averages the neighbouring words into apple's vector, and a probe fitted on "
    "labelled sentences can pick up a trace of them.",
    "probe_shuffled": "With shuffled weights it reaches {shuf_best:.3f} at best (at {shuf_best_stage}).",
    "probe_training": "Both are below the pretrained model's weakest block: the formula mixes context in any case, "
    "but it is the trained weights that make apple's vector say which apple it is.",
    "headline": "apple, fruit vs company ({n_fruit} + {n_company} sentences): after the last block cosine across "
    "{pre_across_last:.3f} vs within {pre_within_last:.3f}; held-out probe, best stage: pretrained "
    "{pre_best:.3f}, random {rand_best:.3f}, shuffled {shuf_best:.3f}",
    "fig_title": "apple as fruit ({n_fruit}) and as company ({n_company}) in {model}",
    "fig_x": "stage (embedding output, then after each block)",
    "fig_cos_y": "mean cosine",
    "fig_probe_y": "held-out accuracy",
    "fig_cos_title": "across the senses (solid) and within a sense (dashed)",
    "fig_probe_title": "linear probe: fruit or company? ({k_folds} folds)",
    "fig_across": "{model}, across",
    "fig_within": "{model}, within",
    "fig_chance": "chance",
}

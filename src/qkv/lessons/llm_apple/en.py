"""Lesson "llm-apple": apple the fruit and apple the company inside a real LLM (English)."""

MESSAGES = {
    "title": "A real LLM: apple the fruit and apple the company, layer by layer (SmolLM2)",
    "reads_why": "it follows a word through a model that reads left to right and predicts the next token",
    "unnamed": "this model",
    "stage_embed": "embedding",
    "stage_block": "L{layer}",
    "col_stage": "stage",
    "col_across": "across",
    "col_within": "within",
    "col_gap": "gap",
    "col_probe": "probe",
    "text": "The source article says that apple in “I ate an apple” and in “I invested in apple” enters the model "
    "as one and the same vector, and that attention is what lets the context tell the two apart. Here is the "
    "claim measured in {model}, a Llama-architecture LLM ({n_layers} layers, {n_heads} query heads per layer, "
    "d_model {d_model}) that reads English.\n\n"
    "Its tokenizer keeps upper and lower case apart: “{word}” is token {word_ids}, the capitalised word other "
    "tokens ({other_case_ids}), which would tell the model “company” before any attention. So all "
    "{n_pairs} pairs of sentences written for this lesson end in the same lower-case word (“{fruit_example}” "
    "and “{company_example}”), and a model that reads from left to right sees only the words before apple: "
    "each sentence puts its cue word (ate, shares, iPhone, ...) before it.\n\n"
    "At apple's token, the table gives the mean cosine between a fruit and a company sentence (across), "
    "between two sentences of the same sense (within), their difference (gap = within − across), and the "
    "accuracy of a linear probe (ridge least squares on standardised vectors) on held-out pairs: {k_folds} "
    "folds of {test_pairs} pairs each, so every sentence is scored by a probe that saw neither it nor its "
    "partner (chance: 0.5). “embedding” is the vector before block 0; L0 to L{last} are the outputs of "
    "the blocks.\n"
    "{stage_table}\n"
    "{verdict_layers}\n\n"
    "Which heads read the cue? For every head, the weight pattern[apple, cue] that apple's query gives the "
    "cue word, averaged over the {n_sentences} sentences. The largest: {top_heads}. {verdict_heads}\n\n"
    "What the model predicts after each sentence (its three most probable next tokens):\n"
    "{next_table}\n"
    "In {differ} of the {n_pairs} pairs the most probable next token differs between the fruit and the "
    "company sentence. That the vectors part by sense (the probe above) does not yet say how much the "
    "prediction moves: the lists show it sentence by sentence, and a lower-case apple after a company cue "
    "may still be continued as a fruit.",
    "emb_same": "At the embedding every apple is the same vector (cosine {emb_across:.3f}; a Llama adds no "
    "position vector to the token), so the probe is at chance there ({emb_probe:.3f}).",
    "parted": "From {parted} on, the held-out probe reads the sense ({parted_probe:.3f} there):",
    "not_parted": "The held-out probe never reaches 0.9 after a block:",
    "full": "it is right on every held-out sentence from {first_full} to the last block.",
    "gap": "The cosines fall as the blocks add context, and faster across the senses than within one: the gap "
    "grows to {max_gap:.3f} (largest at {max_gap_stage}; after the last block across {last_across:.3f}, "
    "within {last_within:.3f}). The vectors keep much of a common direction, and the sense lies in what differs.",
    "heads": "The strongest, {top_head}, gives the cue {top_weight:.3f} of its weight, averaged over "
    "sentences of both senses.",
    "heads_sink": "The mean head gives it only {mean_cue:.3f}, less than the {uniform_cue:.3f} a head spreading "
    "its weight evenly over the words before apple would: most heads of an LLM put most of their weight on "
    "the first token, and a few read the words that matter.",
    "heads_even": "The mean head gives it {mean_cue:.3f}; a head spreading its weight evenly over the words "
    "before apple would give {uniform_cue:.3f}.",
    "headline": "{model}, apple in {n_pairs} fruit/company pairs: embedding cosine {emb_across:.3f}, probe "
    "{emb_probe:.2f}; after the last block across {last_across:.3f} vs within {last_within:.3f}, held-out "
    "probe {last_probe:.2f}; the head reading the cue most: {top_head} ({top_weight:.3f})",
    "fig_title": "{model}: apple as fruit and as company ({n_pairs} pairs)",
    "fig_x": "stage (embedding, then after each block)",
    "fig_cos_y": "mean cosine",
    "fig_probe_y": "held-out accuracy",
    "fig_cos_title": "across the senses and within a sense",
    "fig_probe_title": "linear probe: fruit or company? ({k_folds} folds of pairs)",
    "fig_heads_title": "weight from apple to the cue word",
    "fig_head": "head",
    "fig_layer": "layer",
}

"""Lesson "heads": where each head looks, averaged over many sentences (English)."""

MESSAGES = {
    "title": "Different heads look at different things: attention mass over many sentences",
    "label_cue": "the cue verb",
    "label_previous": "the previous token",
    "label_start": "the sentence start (position 0)",
    "label_self": "itself",
    "short_cue": "cue",
    "short_previous": "previous",
    "short_start": "start",
    "short_self": "self",
    "headline_part": "{short}: layer {layer} head {head} {mass:.3f}",
    "headline": "{parts} (uniform baseline {baseline:.3f}, {n_sentences} sentences)",
    "line": "- {label}: layer {layer}, head {head}, mean {mass:.3f} ({ratio:.1f}× the uniform baseline)",
    "split_all": "The {categories} categories peak in {distinct_heads} different heads: the heads split the "
    "work, which is what having several of them buys.",
    "split_some": "The {categories} categories peak in only {distinct_heads} different heads: some heads "
    "do several jobs.",
    "cue_weak": "The cue verb gets at most {cue:.3f}, far less than the previous token's {previous:.3f}: "
    "at this position no head watches the verb the way one watches the previous token.",
    "faint": "But for {names} even the best head gives less than {ratio}× the uniform share: no head has "
    "made that its job.",
    "and": " and ",
    "learned": "The split is learned, not prescribed.",
    "text": "Multi-head attention gives every head its own q, k and v, so each head can learn to look somewhere else. "
    "Rather than one example, this lesson averages over {n_sentences} held-out word-sense sentences "
    "(such as “{example}”, where the verb that decides the sense is “{example_cue}”). The query is the "
    "last position of the prompt, which ends with the comma: it has to guess the next word, and that word depends on "
    "whether the verb was about eating or about investing.\n\n"
    "A head that spread its weight evenly over the tokens it can see would give each category "
    "{baseline:.3f} on average. The head with the most weight in each category:\n{lines}\n\n{verdict}",
    "head": "head",
    "layer": "layer",
    "colorbar": "mean attention weight",
    "fig_title": "Where the query at the comma looks (uniform baseline {baseline:.3f})",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": (
        "it reads the query after the comma of the corpus's sense probes, in a "
        "causal model; real-heads is this lesson on an encoder"
    ),
}

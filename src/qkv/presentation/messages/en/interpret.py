"""Interpretability, in English: the logit lens, direct logit attribution and the head detector (the same
keys as zh/interpret.py). Refusals of qkv.analysis.lens, .attribution and .head_scores, the text of
qkv.presentation.heads_table, and the names of the head detector's kinds on the explorer's head labels; the
short_ names are the kinds' names everywhere (the page's head labels and the tables of qkv heads)."""

MESSAGES = {
    # ------------------------------------------------------------------ refusals
    "one_sequence": "give one sequence of token ids, shaped (T,) or (1, T); got {shape}",
    "lens_family": "the logit lens reads a GPT's residual stream through its final norm and unembedding; "
    "{title} has none to read it through",
    "attribution_family": "direct logit attribution splits a GPT's logit into its parts; {title} has no such logit",
    "attribution_post_norm": "a post-norm model has no direct path to the logit: every block ends in a LayerNorm "
    "that rescales everything written before it, so the logit does not split into one term per part",
    "attribution_no_residual": "without residual connections there is no residual stream to split: "
    "each block replaces what came before",
    "scores_family": "the head detector measures a GPT's attention heads; {title} is not one",
    "scores_short": "the head detector needs sequences of at least {need} tokens; this model reads at most "
    "n_ctx = {n_ctx}",
    "scores_vocab": "the head detector draws random tokens from the vocabulary, and only {n} ordinary tokens are left",
    "scores_tokens": "tokens must be whole-number ids shaped (B, T) with 2 <= T <= n_ctx = {n_ctx}, each in "
    "0..{last}; got shape {shape}",
    "top_k": "k must be a whole number of at least 1; got {k}",
    "token_needs_tokenizer": "the token {word} is a word: give the tokenizer too (tokenizer=...), or its id",
    "token_pieces": "{word} is {n} tokens for this tokenizer ({pieces}); a logit belongs to one token: give one id",
    "token_type": "the token must be an id (a whole number) or a word; got {token}",
    "token_range": "token id {id} is out of range: the vocabulary has ids 0..{last}",
    # ------------------------------------------------------------------ the head detector's kinds
    "short_previous": "previous",
    "short_duplicate": "duplicate",
    "short_induction": "induction",
    "short_first": "first",
    "label_previous": "the previous token",
    "label_duplicate": "earlier copies of its own token",
    "label_induction": "the token after an earlier copy of its own token",
    "label_first": "the first token (position 0)",
    "means_previous": "the share of the head's weight on the token just before each query",
    "means_duplicate": "the share on earlier copies of the query's own token",
    "means_induction": "the share on the token that followed an earlier copy of the query's token (A B … A → B)",
    "means_first": "the share on position 0",
    # ------------------------------------------------------------------ qkv heads (presentation.heads_table)
    "header": "Head detector on {n} sequences of {T} tokens: a first token, {half} random tokens, then the same "
    "{half} again (seed {seed}). Score = Σ A·D / Σ A, the share of a head's attention on the keys the "
    "detection pattern D marks, averaged over every query.",
    "header_given": "Head detector on the {n} given sequences of {T} tokens. Score = Σ A·D / Σ A, the share of a "
    "head's attention on the keys the detection pattern D marks, averaged over every query.",
    "table_title": "“{kind}” score: {means}. A head spreading its weight evenly scores {baseline:.3f}.",
    "corner": "layer",
    "col_head": "H{head}",
    "row_layer": "L{layer}",
    "strongest": "Strongest “{kind}” head: layer {layer}, head {head}, {score:.3f} ({ratio:.1f}× a head spreading "
    "evenly)",
    "none_stands_out": "No head stands out as a head of kind “{kind}” (the best, layer {layer}, head {head}, scores "
    "{score:.3f}, only {ratio:.1f}× a head spreading evenly)",
}

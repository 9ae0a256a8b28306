"""Lesson "embedding": an index, a one-hot vector and a learned embedding (English)."""

MESSAGES = {
    "title": "Index, one-hot and learned embeddings: which words are close?",
    "holds": "holds",
    "fails": "does not hold",
    "headline": "id({w1}) − id({w0}) = {id_difference}; one-hot cosines all {onehot_max_offdiag:.0f}; "
    "learned: fruit–fruit mean cosine {within_fruit_mean:.3f} vs fruit–{other} {fruit_other_mean:.3f} "
    "(claim {verdict}); nearest to {a}: {nn_word} {nn_cosine:.3f}",
    "arrow": "“{tok}”",
    "no_token": "(no token at all)",
    "text_holds": "holds: the fruits are closer to each other",
    "text_fails": "does not hold: in this model the fruits are not closer to each other than to {other}",
    "text": "The cheapest code gives every word a number: {id_list}. The number is only a label, and arithmetic on it "
    "means nothing: id({w1}) − id({w0}) = {id_difference}, which happens to be the id of {arrow}, "
    "unrelated to either word.\n\n"
    "One-hot coding gives every word a vector with a single 1 ({d_vocab} entries long). Any two different words "
    "are orthogonal: every cosine similarity measured is {onehot_max_offdiag:.0f}. They are independent, and "
    "for the same reason nothing in them says that apple and banana are both fruit.\n\n"
    "A learned embedding is a row of W_E ({d_model} numbers); training pushes words that are used alike "
    "towards similar directions. Cosine similarities: {pairs}. The mean over pairs of fruits is "
    "{within_fruit_mean:.3f}; between a fruit and {other} it is {fruit_other_mean:.3f}, so the claim that "
    "fruits sit together, away from atomic energy, {verdict}.\n\n"
    "The nearest tokens to “{a}” in the whole vocabulary: {nn_a}; to “{other}”: {nn_other}.",
    "caveat": "A caveat: these distances depend on how often each word occurs in the training text. In {source}: "
    "{counts}; a rare word's embedding gets few updates.",
    "source_bundled": "the bundled model's training text ({corpus_lines} lines: the built-in corpus and the HSK "
    "training sentences)",
    "source_builtin": "the built-in corpus ({corpus_lines} lines; the rest of the bundled model's training text, the "
    "HSK sentences, is not installed)",
}

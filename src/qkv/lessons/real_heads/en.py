"""Lesson "real-heads": where every head of a real pretrained encoder looks (English)."""

MESSAGES = {
    "title": "A real model's heads: where each of MiniLM's 72 heads looks",
    "unnamed": "this encoder",
    "label_cls": "[CLS] (position 0)",
    "label_sep": "[SEP] (the last position)",
    "label_previous": "the previous token",
    "label_next": "the next token",
    "label_same": "the same token elsewhere",
    "label_self": "itself",
    "short_cls": "[CLS]",
    "short_sep": "[SEP]",
    "short_previous": "previous",
    "short_next": "next",
    "short_same": "same token",
    "short_self": "self",
    "line_some": "- {label}: {count} heads, {heads}",
    "line_one": "- {label}: one head, {head} {mass:.3f}",
    "line_none": "- {label}: no head; the most is {head} {mass:.3f}",
    "text": "The lesson “heads” measures the bundled model's heads; here are the {n_total} heads of {model} "
    "({n_layers} layers × {n_heads} heads), a model trained by others. Each head has its own W_Q, W_K and W_V, "
    "so each can learn to look somewhere else; an encoder's heads see the whole sentence, the words after a "
    "token as well as those before it.\n\n"
    "Over {n_sentences} English sentences written for this lesson (such as “{example}”), every token with a "
    "word on both sides is a query ({n_queries} queries), and for every head the weight it gives is added up on "
    "six kinds of key, all different positions: [CLS] (position 0), [SEP] (the last position), the previous "
    "token, the next token, the token itself, and the same token elsewhere: every other position, two or more "
    "away and not [CLS] or [SEP], that holds the same token id (the same word, or word piece, again; this "
    "column is averaged over the {n_same_queries} queries whose token comes back). A head that spread its "
    "weight evenly would give each single position {baseline:.3f} on average.\n\n"
    "The heads that give one kind of key more than {threshold} of their weight, on average "
    "(LxHy: layer x, head y, counted from 0):\n{lines}\n\n{verdict}",
    "previous_head": "{best_previous} puts {best_previous_mass:.3f} of its weight on the previous token, "
    "nearly all of it: a head that reads the token before.",
    "next_head": "{best_next} gives the next token {best_next_mass:.3f}: a head that reads ahead, which a GPT's heads "
    "cannot do.",
    "cls_many": "Most of the heads that specialise ({n_cls}) choose [CLS]; they sit in layers {cls_layers}.",
    "weak_rest": "No head gives more than {threshold} to [SEP] (at most {best_sep_mass:.3f}, {best_sep}), to the same "
    "token elsewhere ({best_same_mass:.3f}, {best_same}) or to itself ({best_self_mass:.3f}, {best_self}).",
    "caveat": "The weights say where a head looks, not what it takes from there: if [CLS]'s value vector in a head is "
    "small, a head that puts its weight on [CLS] adds little; one common reading is that such a head has "
    "nothing to gather for that token and parks its weight there. The weights alone cannot show that.",
    "headline": "{n_specialised_heads} of {n_total} heads give one kind of key more than {threshold}: previous token "
    "{best_previous} {best_previous_mass:.3f}, next token {best_next} {best_next_mass:.3f}, [CLS] "
    "{best_cls} {best_cls_mass:.3f} ({n_cls} heads on [CLS]); {n_sentences} sentences, {n_queries} queries",
    "colorbar": "mean attention weight",
    "fig_title": "{model}: where each head looks ({n_sentences} sentences)",
}

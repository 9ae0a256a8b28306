"""The token-embedding map (qkv figure embedding) (English)."""

MESSAGES = {
    "axis1": "principal direction 1 ({share:.0%} of the variance)",
    "axis2": "principal direction 2 ({share:.0%} of the variance)",
    "title": "Token embeddings W_E ({n} tokens, d_model = {d}), PCA to 2-D",
    "lines": "lines: each token's {k} nearest by cosine similarity in all {d} dimensions",
    "two_senses": "Why {words} need not sit with the other fruits: in qkv's built-in corpus each of these words "
    "names both a food (a fruit or a grain) and a company. Its sense sentences put the same word after verbs such "
    "as 吃了 / 洗了 (ate, washed), followed by how it tasted or looked, and after 投资了 / 加入了 (invested in, "
    "joined), followed by share prices and profits. A token has one row of W_E, trained by both kinds of sentence, "
    "so it can land between the fruits and the companies, or near the companies; 香蕉 and 梨, which appear only in "
    "fruit sentences, feel no such pull. (This is "
    "about the built-in corpus's sense sentences; a model trained on other text may differ.)",
}

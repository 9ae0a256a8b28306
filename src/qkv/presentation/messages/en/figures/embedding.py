"""The token-embedding map (qkv figure embedding) (English)."""

MESSAGES = {
    "axis1": "principal direction 1 ({share:.0%} of the variance)",
    "axis2": "principal direction 2 ({share:.0%} of the variance)",
    "title": "Token embeddings W_E ({n} tokens, d_model = {d}), PCA to 2-D",
    "lines": "lines: each token's {k} nearest by cosine similarity in all {d} dimensions",
}

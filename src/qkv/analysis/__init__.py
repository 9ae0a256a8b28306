"""The analysis layer: plain data in, plain data out (dicts and arrays, JSON-ready).

attend, explain, cross_attention, word_similarity, position_mean, prediction_diff, origin, ablate, transform,
transform_cloud, vocab, numbers, representations, probing, schema; what they share: inputs (reading a text or
ids, checked), packing (arrays in a document), model_info. Imports only qkv.core.
"""

"""The analysis layer: plain data in, plain data out (dicts and arrays, JSON-ready).

attend, explain, cross, view, translation_view, compare, position_mean, side, origin, ablate, transform,
transform_cloud, vocab, numbers, representations, probing, schema. Imports only qkv.core.
"""

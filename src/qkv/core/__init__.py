"""The core layer: the Transformer, its training, and every number it computes.

config, tokenizers, data, corpus, nn, models, trace, checks, geometry, sample, train, checkpoint,
bundled. Nothing here imports from qkv.analysis, qkv.presentation or qkv.apps.
"""

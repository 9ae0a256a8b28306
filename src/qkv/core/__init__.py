"""The core layer: the Transformer, its data, its training, and every number it computes.

One concept per sub-package, each importing only those before it in this list (tests/test_layers.py):
io, machine, text, spec, see, model, decode, hub, train. Nothing here imports from qkv.analysis,
qkv.presentation, qkv.lessons or qkv.apps.
"""

"""The analysis layer: plain data in, plain data out (dicts and arrays, JSON-ready).

attend, explain, view, compare, numbers, representations, probing, schema. Imports only qkv.core.
"""

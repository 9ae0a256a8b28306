"""Seeing the computation: named taps (tap), the names a model's modules declare (names), hooks that
edit (hooks), the trace of a forward pass (trace), its invariants (invariants), the convex-hull test
(hull), and the rule for layer, head and token indices (indices). Nothing here knows a model class:
it reads any module that taps."""

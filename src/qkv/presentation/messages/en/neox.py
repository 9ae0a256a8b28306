"""What qkv says when it reads GPT-NeoX / Pythia and Phi-3 directories (hub/adapters/neox.py, phi3.py), in
English (the same keys as zh/neox.py). Each is a phrase inside hub's "field {name} must be {wants}; got {got}"."""

MESSAGES = {
    "wants_attention_bias": "true (qkv's GPT-NeoX has biases on attention and on the MLP alike)",
    "wants_rotary_pairs": "a fraction of d_head ({d_head}) that rotates an even number of dimensions, at least 2",
    "wants_phi3_rope": (
        "'default' (Phi-3's long-context RoPE, {kind}, is not built: its 128k models do not load; "
        "the 4k ones, rope_scaling null, do)"
    ),
}

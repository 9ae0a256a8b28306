"""What qkv says when it reads a Gemma 2, Gemma 3 or OLMo-2 directory (hub/adapters/gemma.py, olmo2.py),
in English (the same keys as zh/gemma.py)."""

MESSAGES = {
    "multimodal": (
        "this is Gemma 3 with images (model_type gemma3, {architectures}); qkv reads Gemma 3's text model: "
        "a directory of model_type gemma3_text"
    ),
    "wants_no_bias": "false (a Gemma with attention biases is not built)",
    "wants_layer_types": "null or a list of 'sliding_attention' and 'full_attention'",
    "wants_causal": "false or null (qkv builds Gemma as a causal language model)",
    "layer_types_count": "field 'layer_types' names {got} layers; the model has {n} (num_hidden_layers)",
    "rope_type": (
        "RoPE of type {kind} on {where} layers is not built (qkv builds default RoPE, and linear on full_attention)"
    ),
    "no_window": "field 'sliding_window' must be a number: layer_types has sliding_attention layers",
    "olmo2_bias": "field 'attention_bias' must be false (an OLMo-2 with attention biases is not built)",
}

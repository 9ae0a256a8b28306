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
    "gpt2_export": "GPT-2 has no {name} (a switch of Gemma and OLMo-2)",
    "attribution": (
        "direct logit attribution reads the logit as a sum of what each head and MLP adds to the residual stream; "
        "with {what} (Gemma, OLMo-2) a norm or a tanh lies between them, so the logit is no such sum"
    ),
    "explain_window": (
        "This layer attends within a sliding window: the tokens before position {first} are hidden from this query, "
        "as the causal mask hides the later ones."
    ),
    "layer_sep": ", ",
    "explain_window_entropy": (
        "Layers {layers} attend within a sliding window of {w} tokens: their rows spread over those only, "
        "so their most even spread is {max:.3f} bits."
    ),
    "explain_scale": (
        "This model divides q·k_j by {s} (the square root of its query_pre_attn_scalar), not by √d_head = √{d}: "
        "the q·k/√d_head column and √d_head above are that number."
    ),
    "explain_soft_cap": (
        "The scores are soft-capped: s_j = {cap}·tanh(q·k_j / {s} / {cap}), close to q·k_j / {s} when that is small "
        "and never beyond ±{cap} (the q·k/√d_head column shows s_j)."
    ),
}

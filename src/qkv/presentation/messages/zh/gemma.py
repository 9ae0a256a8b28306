"""qkv 读取 Gemma 2、Gemma 3 或 OLMo-2 目录时说的话（hub/adapters/gemma.py、olmo2.py），中文版。

键与 en/gemma.py 相同。"""

MESSAGES = {
    "multimodal": (
        "这是能看图的 Gemma 3（model_type gemma3，{architectures}）；qkv 只读 Gemma 3 的文本模型："
        "请给 model_type 为 gemma3_text 的目录"
    ),
    "wants_no_bias": "false（qkv 不搭建带注意力偏置的 Gemma）",
    "wants_layer_types": "null，或由 'sliding_attention' 和 'full_attention' 组成的列表",
    "wants_causal": "false 或 null（qkv 把 Gemma 当作因果语言模型来搭建）",
    "layer_types_count": "字段 'layer_types' 列出了 {got} 层，而模型有 {n} 层（num_hidden_layers）",
    "rope_type": (
        "{where} 层上 {kind} 类型的 RoPE 还搭不出来（qkv 搭的是默认 RoPE，以及 full_attention 层上的 linear 缩放）"
    ),
    "no_window": "字段 'sliding_window' 必须是数字：layer_types 里有 sliding_attention 层",
    "olmo2_bias": "字段 'attention_bias' 必须是 false（qkv 不搭建带注意力偏置的 OLMo-2）",
}

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
    "gpt2_export": "GPT-2 没有 {name}（Gemma 和 OLMo-2 的开关）",
    "attribution": (
        "直接 logit 归因把 logit 读成每个头和每个 MLP 往残差流里加的量之和；"
        "有了 {what}（Gemma、OLMo-2），它们和 logit 之间隔着一个归一化或一个 tanh，logit 就不再是这样的和"
    ),
    "explain_window": (
        "这一层只在滑动窗口内做注意力：位置 {first} 之前的词元对这个 query 不可见，就像因果掩码遮住后面的词元一样。"
    ),
    "layer_sep": "、",
    "explain_window_entropy": (
        "层 {layers} 只在 {w} 个词元的滑动窗口内做注意力：它们的每一行只分布在这些词元上，"
        "所以最均匀时的熵是 {max:.3f} 比特。"
    ),
    "explain_scale": (
        "这个模型把 q·k_j 除以 {s}（它的 query_pre_attn_scalar 的平方根），而不是 √d_head = √{d}："
        "上面的 √d_head 和 q·k/√d_head 那一列用的都是这个数。"
    ),
    "explain_soft_cap": (
        "分数经过了软上限（soft-cap）：s_j = {cap}·tanh(q·k_j / {s} / {cap})；q·k_j / {s} 较小时两者几乎相等，"
        "但 s_j 永远不会超出 ±{cap}（q·k/√d_head 那一列显示的就是 s_j）。"
    ),
}

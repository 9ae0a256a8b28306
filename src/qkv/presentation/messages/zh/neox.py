"""qkv 读取 GPT-NeoX / Pythia 和 Phi-3 目录时说的话（hub/adapters/neox.py、phi3.py），中文（键与 en/neox.py 相同）。
每一条都是放进 hub 的“字段 {name} 必须是 {wants}；实际是 {got}”里的一段。"""

MESSAGES = {
    "wants_attention_bias": "true（qkv 的 GPT-NeoX 在注意力和 MLP 上都带偏置）",
    "wants_rotary_pairs": "d_head（{d_head}）的一个比例，使旋转的维数是偶数且至少为 2",
    "wants_phi3_rope": (
        "'default'（qkv 没有搭建 Phi-3 的长上下文 RoPE {kind}：它的 128k 模型读不了；"
        "rope_scaling 为 null 的 4k 模型可以读）"
    ),
}

"""微调（`qkv train --init`，qkv.core.train.init）以及 Llama 布局模型的导出
（qkv.core.hub.adapters.llama_export），中文（与 en/finetune.py 同键）。"""

MESSAGES = {
    "data_tokenizer": "这份词元数据是用另一个分词器写的，不是 {ref} 的分词器；请用它重新切分（qkv tokenize --tokenizer "
    "{ref}），或者直接用 --text 在文本上训练",
    "task": "--init 用来微调 GPT（续写文本的模型）；qkv train --task translate 没有 --init",
    "flags": "{flags} 用来训练新的分词器；用了 --init，这次训练沿用起点模型的分词器：请去掉 {flags}",
    "model_settings": (
        "用了 --init，模型就是起点模型本身：--set 不能改 {names}；模型的设置里只能改 {allowed}"
        "（训练设置如 lr、steps、batch_size、block_size 都可以改）"
    ),
    "missing": (
        "--init {ref}：没有这个文件或目录（请给出 qkv 的训练目录、Hugging Face 目录、.gguf 文件、smollm2 或 hf:名称）"
    ),
    "not_gpt": "--init {ref} 是{family}，它不续写文本：微调要从 GPT 开始",
    "too_large": (
        "微调 {ref} 大约需要 {need}（float32 的权重、梯度、AdamW 的两组动量，外加一批数据的 logits），"
        "超过了可用的 {have}：请减小 batch_size 或 block_size"
    ),
    "block_size": "block_size={block_size} 比模型的上下文长度（n_ctx={n_ctx}）还长：block_size 最多只能是 {n_ctx}",
    "preset_needs_init": "预设 finetune 只有训练设置：请和 --init（作为起点的模型）一起用",
    # Llama 布局模型的导出（hub/adapters/llama_export.py）
    "llama_cannot_export": (
        "qkv export --hf 只写两种布局：GPT-2 的（学出来的位置嵌入、LayerNorm、普通 MLP）和 Llama 的"
        "（按两半旋转的 RoPE、RMSNorm、SwiGLU、分组查询注意力，嵌入可绑定也可不绑定）；"
        "这个模型用了 RMSNorm，但 Llama 算不了：{problems}"
    ),
    "llama_rope": "pos={pos}、rope_layout={layout}、rotary_dim 或 RoPE 系数（Llama 把每个头整个按两半旋转）",
    "llama_block": "不是前置归一化、残差、因果、values=v、带门控 silu MLP 的块",
    "llama_parts": "q/k 归一化、只有 q、k、v 带偏置、嵌入缩放，或反嵌入带偏置",
    "llama_window": "{name}（Gemma 或 Mistral 的开关）",
    "export_differs": "导出的 Llama 算出的 logits 和 qkv 模型不同（相差 {gap}）；这个模型的某项设置在 Llama 里没有对应",
}

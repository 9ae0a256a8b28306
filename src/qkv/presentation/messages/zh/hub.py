"""qkv 读取别人的模型（qkv.core.hub）时说的话，中文版（与 en/hub.py 同样的键、同样的 {字段}）。

{path} 是文件或目录，{kind}、{name} 按 Python repr 的写法照录，{error} 是在里面发现的错误（已编目的
按所在句子的语言说出，库自己的错误照原文）。model_type、config.json、safetensors 这类名字原样照写。
"""

MESSAGES = {
    # ------------------------------------------------------------------ 目录归哪个模型家族读
    "unknown_model_type": "{path}：不支持 model_type {kind}（{architectures}）；qkv 能读的是 {supported}",
    "unknown_architecture": "架构不明",
    "family_first": "{titles}（model_type {types}）",
    "family": "{titles}（{types}）",
    "and": "{some} 和 {last}",
    "in_file": "{path}：{error}",
    "dtype": "dtype 只能是 {choices} 之一，收到的是 {got}",
    # ------------------------------------------------------------------ config.json 的字段
    "field_missing": "缺少字段 {name}（它应当是{wants}）",
    "field_wrong": "字段 {name} 必须是{wants}，收到的是 {got}",
    "not_divisible": "字段 {width}（{w}）不能被 {heads}（{h}）整除",
    "wants_integer": "从 {low} 到 {high} 的整数",
    "wants_number": "从 {low} 到 {high} 的数",
    "wants_one_of": "以下之一：{choices}",
    "wants_or_null": "{wants}，或 null",
    "wants_probability": "区间 [0, 1) 里的数",
    "wants_epsilon": "区间 [0, 1] 里的数",
    "wants_bool": "布尔值 true 或 false",
    "wants_string": "字符串",
    "wants_class_names": "由类名（字符串）组成的列表",
    "wants_object_or_null": "对象，或 null",
    # 某个家族的配置映射才会拒绝的（gpt2、llama、bert）
    "gpt2_activation": "不支持激活函数 {got}；请用以下之一：{choices}",
    "gpt2_scaling": "只支持 GPT-2 标准的 1/sqrt(d_head) 注意力缩放",
    "wants_no_tensor_parallel": "数值 1（qkv 不读按张量并行切开的权重）",
    "wants_full_rotary": "数值 1（qkv 不搭建只在每个头的一部分上做 RoPE 的模型）",
    "wants_rope_type": "以下之一：{choices}（qkv 能搭建的 RoPE 类型）",
    "llama3_scaling": "llama3 类型的字段 'rope_scaling' 必须以数字给出 {name}",
    "heads_not_multiple": "字段 'num_attention_heads'（{heads}）不是 'num_key_value_heads'（{kv}）的倍数",
    "llama_biases": "字段 'attention_bias' 和 'mlp_bias' 必须相同（qkv 用一个开关同时管这两处偏置）",
    "qwen3_bias": "字段 'attention_bias' 必须是 false（qkv 不搭建带注意力偏置的 Qwen3）",
    "wants_bert_encoder": "布尔值 false（BERT 解码器会遮住后面的词，qkv 的编码器不会）",
    # ------------------------------------------------------------------ 模型太大，这台机器放不下
    "too_large": "{source} 描述的模型有 {n} 个参数（按 {dtype} 要 {need}）；这台机器只有 {have} 可用内存",
    "too_large_tables": (
        "{source} 描述的模型有 {n} 个参数，外加 {tables} 个数的固定表（按 {dtype} 要 {need}）；"
        "这台机器只有 {have} 可用内存"
    ),
    # ------------------------------------------------------------------ 目录从哪里来
    "not_a_directory": "{path} 不是目录（要用 Hugging Face hub 上的模型，请写 hf:NAME）",
    "no_config": "{path} 里没有 config.json：这不是 Hugging Face 的模型目录",
    "fetch_failed": "无法从 Hugging Face hub 获取 {name}：{reason}",
    "fetch_offline": (
        "无法从 Hugging Face hub 获取 {name}：本地缓存里没有它，也连不上 hub（没有网络，或设置了 HF_HUB_OFFLINE）"
    ),
    "fetch_needs_hf": "从 Hugging Face hub 下载需要 transformers：pip install 'qkv[hf]'",
    "minilm_missing": "没有安装 MiniLM 模型：{install}",
    "eos_ids": "{path}：字段 'eos_token_id' 必须是一个词元 id，或由词元 id 组成的列表",
    # ------------------------------------------------------------------ 分词器
    "no_bpe_tokenizer": "{path} 里既没有 tokenizer.json，也没有 vocab.json 和 merges.txt：读不出它的 GPT-2 分词器",
    "no_tokenizer_json": "{path} 里没有 tokenizer.json（只有 SentencePiece 的 tokenizer.model 是读不了的）",
    "no_wordpiece_tokenizer": "{path} 里既没有 tokenizer.json，也没有 vocab.txt：读不出它的 WordPiece 分词器",
    "vocab_larger": "{path}：分词器有 {n} 个词元，模型却只有 {d_vocab} 个",
    # ------------------------------------------------------------------ 权重文件
    "weights_unnamed": (
        "{path} 里既没有 model.safetensors，也没有 {index}（里面有的是 {found}）：请把权重文件命名为 model.safetensors"
    ),
    "no_safetensors": (
        "{path} 里没有 .safetensors 格式的权重（找到的 .bin 文件：{found}）；保存时请加 safe_serialization=True"
    ),
    "none": "无",
    "weight_map": "{path}：字段 'weight_map' 必须把每个张量名对应到存放它的文件",
    "weight_map_file": "{path}：weight_map[{tensor}] = {name} 不是 {directory} 里的文件名",
    "shard_missing": "{path} 提到了 {name}，但这个文件不存在",
    "shard_lacks": "{path} 说 {tensor} 存放在 {name} 里，可那个文件里没有它",
    "shard_extra": "{path} 里有 {tensor}，但 {index} 并没有把它对应到这个文件",
    "not_safetensors": "{path} 不是有效的 safetensors 文件：{error}",
    "ends_inside": "{path} 在张量 {name} 中途就结束了，文件不完整",
    "stored_dtype": "{path}：张量 {name} 的类型是 {dtype}，不是浮点类型",
    "stored_shape": "{path}：张量 {name} 的形状是 {shape}，不是 {wanted}",
    "stored_size": "{path}：张量 {name} 占 {size} 字节，和它的形状所需的大小对不上",
    # ------------------------------------------------------------------ 张量与配置是否相符
    "tensor_missing": "{path}：缺少张量 {name}",
    "tensor_unused": "{path}：张量 {name} 不属于 qkv 搭建的这种架构（这样的张量共 {n} 个）",
    "tensor_shape": "{path}：{name} 对应的张量形状是 {shape}，而按 config.json 应当是 {expected}",
    "tensor_dtype": "{path}：{name} 对应的张量类型是 {dtype}，不是浮点类型",
    # ------------------------------------------------------------------ 把 qkv 的 GPT 写成 GPT-2（导出）
    "in_turn": "{first}；{rest}",
    "gpt2_cannot_export": "无法导出为 GPT-2：{problems}",
    "gpt2_pos": "pos={pos}（GPT-2 用的是学出来的位置嵌入）",
    "gpt2_block": "GPT-2 要求 norm=pre、bias=true、causal=true、residual=true、values=v、parallel_attn_mlp=false",
    "gpt2_parts": "GPT-2 用普通的 MLP，每个头有自己的键/值头，没有 q/k 归一化，处处都有偏置",
    "gpt2_d_head": "GPT-2 要求 d_head * n_heads == d_model",
    "gpt2_embed_scale": "embed_scale=true（GPT-2 不会把词元嵌入乘以 sqrt(d_model)）",
    "gpt2_line_up": "权重对不上：缺少 {missing}，多出 {unexpected}",
    "export_needs_hf": "导出为 Hugging Face 格式需要 transformers：pip install 'qkv[hf]'",
    "export_cannot_write": "无法写入 {out}：{reason}",
    "export_above_file": "无法写入 {out}：{above} 是文件，不是目录",
    "export_not_empty": "{out} 是一个非空目录：导出只写入新目录或空目录，不会覆盖任何东西",
    "export_file_or_link": "{out} 是文件或链接：导出只写入新目录或空目录，不会覆盖任何东西",
    "export_no_safetensors": "transformers 没有写出 safetensors 文件；请把 transformers 升级到 4.45 或更新的版本",
    "export_not_gpt": "只有 GPT（因果语言模型）才能导出为 AutoModelForCausalLM；这个模型是{family}",
    "export_vocab_larger": "分词器有 {n} 个词元，模型却只有 {d_vocab} 个",
    "export_differs": (
        "导出的 GPT-2 算出的结果和 qkv 模型不同（logits 相差 {gap}）；这个模型的某项设置在 GPT-2 里没有对应"
    ),
    # ------------------------------------------------------------------ qkv 自带的模型，以及 torch 的 nn.Transformer
    "bundled_missing": "自带的模型不在 {path}；请重新安装 qkv，或运行 scripts/train_bundled.py",
    "bundled_translate_missing": "自带的翻译模型不在 {path}；请重新安装 qkv，或运行 scripts/train_bundled_translate.py",
    "torch_no_counterpart": "{name} 在这个模型里没有对应的张量（{target}）；它的配置对得上吗？",
    "torch_shape": "{name} 的形状是 {shape}，而 {target} 的形状是 {want}",
}

"""qkv 拒绝了什么、为什么：qkv.core.io.refusal 的中文说法（与 en/errors.py 同样的键、同样的 {字段}）。

每条消息只有一行，网页服务器的错误回答（{"error": ..., "status": ...}）和命令行都用它。{字段}
由拒绝的代码填入：数字、词元字符串（已按 Python repr 加上引号）、文件路径、字段名，两种语言里
原样照写；或者本文件里的短语（unit_*、what_*、noun_*、family_*），按所在句子的语言说出。列表
字段用 "comma"（顿号）连接。

写法约定：位置从 0 开始数，写作“位置 N”，不写“第 N 个”；层和头写作“层 0”“头 2”。行号和
条目号与英文一样从 1 开始数，写作“第 N 行”“第 N 项”。命令行的错误行以 `qkv: 错误：` 开头
（cli_prefix）；不加 --lang zh 时仍是英文的 `qkv: error:`。
"""

MESSAGES = {
    # ------------------------------------------------------------------ 拼句子用的零件
    "comma": "、",
    "and_more": "{items} 等，另有 {n} 个",
    "none": "一个也没有",
    "in": "{where}：{error}",
    "cli_prefix": "qkv: 错误：{message}",
    "cli_internal": "qkv: 内部错误：{kind}: {detail}（设置环境变量 QKV_DEBUG=1 可以看到完整的调用栈）",
    "one_of": "{name} 只能是 {choices} 之一，收到的是 {got}",
    # ------------------------------------------------------------------ 模型家族和它们的部分
    "family_gpt": "一个 GPT",
    "family_bert": "一个编码器（encoder）",
    "family_seq2seq": "一个翻译模型（编码器-解码器）",
    "stack_encoder": "编码器",
    "stack_decoder": "解码器",
    # ------------------------------------------------------------------ 层、头、位置
    "what_layer": "层",
    "what_head": "头",
    "what_token": "位置",
    "unit_tokens": "这段文字只有 {n} 个词元",
    "unit_layers": "模型只有 {n} 层",
    "unit_stack_layers": "{stack}只有 {n} 层",
    "unit_heads": "每层只有 {n} 个头",
    "unit_steps": "译文只有 {n} 步",
    "index_type": "{what}必须是整数，收到的是 {value}",
    "index_range": "{what} {value} 超出范围：{unit}（可用 0..{last}，或用 {neg}..-1 从末尾倒着数）",
    "head_pair": "一个头要写成一对 [layer, head]，收到的是 {pair}",
    "top_type": "top 必须是不小于 1 的整数，收到的是 {top}",
    "top_range": "top 必须在 1..{max} 之间，收到的是 {top}",
    # ------------------------------------------------------------------ 文字和词元
    "text_type": "文字必须是字符串，不能是 {type}",
    "text_empty": "文字是空的：请至少输入一个词元",
    "text_no_tokens": "这段文字切不出任何词元：请至少输入一个词元",
    "text_too_long": "这段文字有 {T} 个词元，而这个模型一次最多只读 n_ctx = {n_ctx} 个",
    "text_or_ids": "文字（text）和词元编号（ids）请二选一，只给其中一个",
    "ids_empty": "没有词元编号：请至少给一个",
    "ids_range": "词元编号 {id} 超出范围：词表的编号是 0..{last}",
    "ids_too_long": "{T} 个词元，而这个模型一次最多只读 n_ctx = {n_ctx} 个",
    "token_id_range": "词元编号 {id} 超出范围（词表只有 {n} 个词元）",
    "view_too_large": (
        "{T} 个词元在 {L} 层 × {H} 个头上会产生 {cells:,} 个注意力权重，超过了页面能显示的上限"
        "（{max:,}）：请最多用 {most} 个词元"
    ),
    "unknown_one": "有 {n} 个{noun}不在分词器的词表里：{listed}",
    "unknown_many": "有 {n} 个{noun}不在分词器的词表里：{listed}",
    "noun_token": "词元",
    "noun_tokens": "词元",
    "noun_character": "字符",
    "noun_characters": "字符",
    "noun_word": "词",
    "noun_words": "词",
    "nearest_words": "{piece}（最接近的已知词：{words}）",
    "no_near": "没有哪个已知词和它有相同的字",
    "cut_words": "{piece}（切开后是这些已知词：{cut}）",
    "fit_empty": "文字是空的：请至少给一个词元",
    "fit_only_special": "这段文字只切出了特殊词元：请至少给一个真正的词",
    "fit_too_long": (
        "这段文字有 {T} 个词元，而这个模型一次最多只读 n_ctx = {n_ctx} 个；它没有因果掩码，要把全部词元同时"
        "读进去，所以不能只截取最后几个"
    ),
    "explain_empty": "文字是空的：请至少给一个要解释的词元",
    # ------------------------------------------------------------------ 各个视图拒绝的情况
    "word_only_special": "词 {word} 只切出了特殊词元：请输入一个真正的词",
    "word_not_in_sentence": "句子 {text} 里没有词 {word}",
    "ablate_family": "关掉注意力头只适用于 GPT 或编码器，而这是{title}",
    "ablate_no_next_token": "关掉注意力头的效果要看 GPT 对下一个词元的概率，而这个模型不预测下一个词元",
    "ablate_too_many": "给了 {n} 对，而模型一共只有 {heads} 个头：每个头只需列一次",
    "origin_family": "q、k、v 的来历只对 GPT 或编码器展示，而这是{title}",
    "transform_family": "变换视图读取的是 GPT 或编码器的自注意力，而这是{title}",
    "transform_panel_family": "变换面板读取的是 GPT 或编码器的自注意力，而这是{title}",
    "head_matrix": "层 {layer} 头 {head} 的 {name}",
    "cloud_words": "这个词表里能单独成为一个词元的“词云”用词太少（找到的：{found}）",
    "vocab_range": "limit 必须在 1..{max} 之间，offset 不能小于 0，收到的是 {limit} 和 {offset}",
    "compare_translation": "翻译模型不在这里做两句对比：它的页面展示的是译文对原文的注意力",
    "side_translation": "翻译模型本身就跨着两个句子展示；页面上的“并排对比”面板是给只读一段文字的模型用的",
    "view_translation_ids": "翻译模型读的是原文文字，不是词元编号",
    # ------------------------------------------------------------------ 翻译模型读什么
    "mt_the_sentence": "要翻译的句子",
    "mt_the_source": "原文",
    "mt_the_target": "译文",
    "mt_role_source": "源语言",
    "mt_role_target": "目标语言",
    "mt_empty": "{what}是空的",
    "mt_special": "句子里有特殊词元 {token}（<pad>、<s> 和 </s> 是模型自己用的）",
    "mt_unknown": "句子里有这个模型从没见过的词（它认识 {n} 个词）",
    "mt_unknown_words": "句子里有这个模型从没见过的词：{words}（它认识 {n} 个词）",
    "mt_no_chinese": "这个模型的{role}是中文，可这句话里没有汉字",
    "mt_latin": "这个模型的{role}是中文，可这句话里有拉丁字母写的词：{words}",
    "mt_chinese_in_english": "这个模型的{role}是英文，可这句话里有汉字",
    "mt_too_long": "这句话有 {n} 个词；这个模型最多读 {n_ctx} 个",
    # ------------------------------------------------------------------ 翻译模型
    "not_translation_model": "这不是翻译模型，而是{title}",
    "not_translation_tokenizer": "这个模型的分词器里没有 <pad> <s> </s>：它不是翻译用的分词器",
    "source_type": "原文必须是字符串，不能是 {type}",
    "target_type": "译文必须是字符串，不能是 {type}",
    "source_too_long": "原文有 {n} 个词，而这个模型一次最多只读 n_ctx = {n_ctx} 个",
    "target_too_long": "译文有 {n} 个词，加上 <s> 后超过了这个模型一次能读的 n_ctx = {n_ctx} 个",
    "translation_too_large": (
        "原文 {n_src} 个词元、译文 {n_tgt} 个词元会产生 {cells:,} 个注意力权重，超过了页面能显示的上限"
        "（{max:,}）：请换一个短一点的句子"
    ),
    # ------------------------------------------------------------------ 生成文字
    "temperature_range": "temperature 必须在 0 到 100 之间，收到的是 {got}",
    "top_k_range": "top_k 必须 >= 1，收到的是 {got}",
    "top_p_range": "top_p 必须在 (0, 1] 之间，收到的是 {got}",
    "max_new_tokens_range": "max_new_tokens 必须在 0 到 1000000 之间，收到的是 {got}",
    "no_next_token": (
        "这个模型是{title}：它为每个词元输出一个向量，而不是下一个词元的概率分布，所以不能生成文字"
        "（qkv explain 和 qkv serve 可以展示它算了什么）"
    ),
    "translates_not_generates": "这个模型做翻译：它为原文写出译文，而不是接着提示往下写（请用 qkv translate）",
    "does_not_generate": "这个模型是{title}：它不会接着提示往下写",
    "prompt_empty": "提示是空的：请至少给一个词元",
    "text_fills_context": "这段文字已经占满了 n_ctx = {n_ctx} 个词元：请缩短它，才能继续生成",
    # ------------------------------------------------------------------ 不是有限数的数
    "logits": "下一个词元的 logits",
    "not_finite": "{what} 中有 NaN 或无穷大",
    "not_finite_because": "{what} 中有 NaN 或无穷大；{why}",
    "weights_not_finite": "模型的权重不是有限数：共有 {bad:,} 个 NaN 或无穷大，第一个出现在 {name}",
    "weights_not_finite_one": "模型的权重不是有限数：有 {bad:,} 个 NaN 或无穷大，出现在 {name}",
    # ------------------------------------------------------------------ 人们输入的数（qkv attend）
    "number_type": "这里要的是文字，收到的是 {type}",
    "number_empty": "数是空的",
    "number_too_long": "这个数太长了（{n} 个字符）：{text}...",
    "number_unreadable": "无法把 {text} 读成一个数",
    "number_because": "无法把 {text} 读成一个数：{why}",
    "number_too_large": "数值太大了",
    "number_not_real": "结果不是有限的实数",
    "number_too_deep": "括号套得太深了",
    "number_domain": "超出了函数的定义域（例如负数开平方、对非正数取对数）",
    "number_zero_division": "除数为零",
    "number_name": "不认识的名字 {name}（可以用：{allowed}）",
    "number_call": "不能调用 {name}（可以调用：{functions}，参数按位置给出）",
    "number_arguments": "{name}() 要 {count} 个参数",
    "number_empty_entry": "{text} 的第 {j} 项是空的",
    "number_empty_matrix": "矩阵是空的：行与行之间用 ';' 分开，同一行的数用 ',' 分开",
    "number_empty_row": "{text} 的第 {i} 行是空的",
    "number_in_row": "第 {i} 行（{row}）：{error}",
    "number_ragged": "第 {i} 行（{row}）有 {n} 个数，而第 1 行有 {first} 个",
    "attend_one_vector": "{name} 是一个向量：各个数之间用 ',' 分开（不要用 ';'）",
    "attend_ragged": "{name} 的各行长短不一，或者有的条目不是数",
    "attend_empty_vector": "{name} 是空的：请至少给一个数",
    "attend_empty_matrix": "{name} 是空的：请至少给一行",
    "attend_not_vector": "{name} 必须是向量，收到的形状是 {shape}",
    "attend_not_matrix": "{name} 必须是矩阵（每个 Key 一行），收到的形状是 {shape}",
    "attend_not_finite": "{name} 里有一个数不是有限数",
    "attend_long_q": "q 有 {n:,} 个数，而 attend 每个向量最多只接受 {max:,} 个",
    "attend_long_value": "每个 Value 有 {n:,} 个数，而 attend 每个向量最多只接受 {max:,} 个",
    "attend_too_many": "q、K、V 一共有 {n:,} 个数，而 attend 最多只能一步一步推导 {max:,} 个",
    "attend_term": "q·k{j}：乘积项 {a}·{b}",
    "attend_sum": "q·k{j}：求和",
    "attend_overflow": "{what} 溢出了：它超过了浮点数能表示的最大值 ±{max}（请用小一些的数）",
    "attend_columns": "K 有 {columns} 列，而 q 有 {entries} 个数：每个 Key 的长度要和 q 一样",
    "attend_rows": "V 有 {v} 行，而 K 有 {k} 行：每个 Key 要对应一个 Value",
    "attend_dk": "d_k 必须是正数，收到的是 {d_k}",
    # ------------------------------------------------------------------ 检查点和文件
    "ckpt_no_dir": "检查点目录 {path} 不存在",
    "ckpt_is_file": "{path} 是一个文件，而不是检查点目录",
    "ckpt_file_missing": "缺少 {path}：这不是 qkv 的检查点（{what}）",
    "ckpt_no_config": "没有 config.json",
    "ckpt_no_state": "没有 state.json：还没有写完任何一个检查点",
    "ckpt_not_json": "{path} 不是合法的 JSON：{error}",
    "ckpt_not_object": "{path} 里应该是一个 JSON 对象",
    "ckpt_field_missing": "{path} 的格式不对：缺少字段 {field}",
    "ckpt_field_bad": "{path} 的格式不对：字段 {field} = {value}",
    "ckpt_not_config": "{path} 不是 qkv 检查点的配置文件",
    "ckpt_version": "{path}：不支持检查点版本 {version}（这个版本的 qkv 只读版本 {reads}）",
    "ckpt_no_model": "{path}：缺少字段 'model'",
    "ckpt_no_tokenizer": "无法加载分词器：{path} 不存在",
    "ckpt_incomplete": "缺少 {path}：这个检查点不完整",
    "ckpt_not_safetensors": "{path} 不是合法的 safetensors 文件：{error}",
    "ckpt_meta": "模型的权重在 meta 设备上（只有形状，没有数值）：没有可保存的东西；请先加载或初始化权重",
    "ckpt_not_written": "{why}；这样的检查点无法加载，所以没有向 {out} 写入任何东西",
    "ckpt_other_run": "{path} 来自另一次训练（run {run}；state.json 记的是 run {state_run}）",
    "ckpt_state_run": "{path} 与 {config} 来自不同的训练（run {run} 与 {config_run}）",
    "ckpt_step": "{path} 保存的是第 {step} 步，而 state.json 记的是第 {state_step} 步",
    "ckpt_tensors": "{path} 与 config.json 不符：缺少 {missing}，多出 {unexpected}",
    "ckpt_shape": "{path}：张量 {name} 的形状是 {shape}，而 config.json 要求 {want}",
    "ckpt_dtype": "{path}：张量 {name} 的类型是 {dtype}，不是浮点类型",
    "ckpt_tensor_not_finite": "{path}：张量 {name} 含有 NaN 或无穷大",
    "ckpt_param_groups": "{path}：它的元数据里没有有效的 param_groups（JSON）",
    "ckpt_optimizer_name": "{path}：张量 {name} 的名字不是 state.<index>.<key> 的形式",
    "ckpt_tokenizer_kind": "{path} 里是 {kind} 分词器，而 {config} 写的是 {says}",
    "ckpt_tokenizer_sha": "{path} 不是训练这个模型时用的分词器（它的 sha256 与 {config} 记录的不同）",
    "ckpt_vocab": "{path}：分词器有 {n} 个词元，而模型只有 {d_vocab} 个（d_vocab）",
    # ------------------------------------------------------------------ 命令行
    "cpu_only": (
        "qkv {command} 在 CPU 上计算，它的解释要在那里读取每一个权重和激活值；"
        "--device {device} 是给 qkv train 和 qkv generate 用的"
    ),
    "figure_suffix": "图片文件名必须以 .png 或 .svg 结尾，收到的是 {path}",
    "export_lang": "lang 只能是 zh 或 en，收到的是 {got}",
    "export_dir": "{path} 是一个目录：请给页面一个文件名，例如 {example}",
    # ------------------------------------------------------------------ 计算设备
    "device_type": "device 只能是 {choices} 之一，收到的是 {got}",
    "device_no_mps": "这里用不了 mps 设备（没有苹果 GPU，或者这个 torch 编译时没带 MPS）：请用 --device cpu 或 auto",
    "device_no_cuda": (
        "这里用不了设备 {name}（没有 CUDA GPU，或者这个 torch 编译时没带 CUDA）：请用 --device cpu 或 auto"
    ),
    "device_no_gpu": "这里用不了设备 {name}：这台机器只有 {n} 块 CUDA GPU",
    "device_unknown": "不认识的设备 {name}：请从 {choices} 里选一个（或者 cuda:N）",
}

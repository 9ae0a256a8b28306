"""命令行说的话（与 en/cli.py 同样的键、同样的 {字段}）：用法错误（argparse 自己的错误，从这里说出）、
系统拒绝的操作（errno）、命令行自己的拒绝、结果之外打印的话（进度、“已写入 ...”），以及
`qkv trace --check` 的报告。

选项名（--layer）、命令名（qkv train）、文件路径和用户输入的值都原样照写。
"""

MESSAGES = {
    # ------------------------------------------------------------------ 用法错误（argparse）
    "usage": "qkv: 错误：{message}（用法见 {prog} --help）",
    "argument": "参数 {name}：{message}",
    "invalid_value": "无效的{type}：{value}",
    "type_int": "整数",
    "type_float": "数值",
    "type_seed": "整数",
    "invalid_choice": "无效的选项值：{value}（可选：{choices}）",
    "required": "缺少必需的参数：{names}",
    "unrecognized": "无法识别的参数：{args}",
    "ambiguous": "选项 {option} 有歧义，可能是 {matches}",
    "expected_one": "需要一个值",
    "expected_at_most_one": "最多只能给一个值",
    "expected_at_least_one": "至少需要一个值",
    "explicit_ignored": "这个选项不带值，却给了 {value}",
    "seed_range": "必须在 0 到 {max}（2**63 - 1）之间，收到的是 {got}",
    # ------------------------------------------------------------------ 系统拒绝的操作（errno）
    "os_at": "{error}：{path}",
    "os_not_found": "没有这个文件或目录",
    "os_permission": "没有权限",
    "os_is_directory": "这是一个目录，不是文件",
    "os_not_directory": "路径中有一段不是目录",
    "os_no_space": "设备上的空间不足",
    "os_read_only": "文件系统是只读的",
    "os_exists": "文件已存在",
    "os_not_empty": "目录不是空的",
    "os_name_too_long": "文件名太长",
    "os_address_in_use": "地址已被占用",
    "os_address_not_available": "无法使用这个地址",
    # ------------------------------------------------------------------ 命令行自己的拒绝
    "nproc_under_torchrun": "--nproc 会自己启动训练进程；在 torchrun 之下请不要给它",
    "flag_for_gpt": (
        "{flags} 是训练 GPT 用的；--task translate 读取句对（内置语料，或 --pairs FILE.tsv），词表也从句对中得出"
    ),
    "flags_for_gpt": (
        "{flags} 是训练 GPT 用的；--task translate 读取句对（内置语料，或 --pairs FILE.tsv），词表也从句对中得出"
    ),
    "flag_for_translate": "{flags} 只用于 --task translate",
    "flags_for_translate": "{flags} 只用于 --task translate",
    "translate_on_cpu": "--task translate 在 CPU 上以 float32 训练（--device 和 --precision 是训练 GPT 用的）",
    "samples_range": "--samples 必须在 1 到 1024 之间，收到的是 {got}",
    "prompt_empty": "提示为空：请至少给一个字符",
    "max_len": "--max-len 至少为 1，收到的是 {got}",
    "not_translation": (
        "{ckpt} 不是翻译模型（它是{title}）：qkv translate 需要编码器-解码器，例如用 qkv train --task translate "
        "训练出的模型"
    ),
    "n_range": "-n 必须在 1 到 1000000 之间，收到的是 {got}",
    "corpus_seed_range": "--seed 必须在 0 到 {max} 之间，收到的是 {got}",
    "probes_alone": "--probes 打印某个现象的探测句，不能与 --pairs 或 --heldout 同用",
    "pairs_lang": "--pairs 会打印两种语言和它们的对齐，不需要 --lang",
    "port_range": "端口必须在 0 到 65535 之间，收到的是 {port}",
    # ------------------------------------------------------------------ 结果之外打印的话
    "interrupted": "已中断",
    "rank_error": "qkv: 错误（进程 {rank}）：{message}",
    "wrote": "已写入 {path}",
    "wrote_page": "已写入 {path}（{size}）：用浏览器直接打开即可，不需要服务器",
    "wrote_hf": (
        "已写入 {path}：transformers 的 AutoModelForCausalLM.from_pretrained 和 "
        "AutoTokenizer.from_pretrained 可以加载它"
    ),
    "cropped_prompt": "警告：提示有 {n} 个词元，只用了最后 {n_ctx} 个（n_ctx）",
    "cropped_text": "警告：这段文字有 {n} 个词元，只追踪了最后 {n_ctx} 个（n_ctx）",
    "past_context": (
        "提示：{prompt} 个提示词元加 {new} 个新词元超过了 n_ctx = {n_ctx}：从新词元 {first} 起，"
        "每个都只根据最后 {n_ctx} 个词元选出"
    ),
    "sample": "--- 样本 {i} / {n} ---",
    "trained": (
        "已训练到第 {step} 步，用时 {seconds} 秒（每秒 {rate} 个词元）：训练损失 {train_loss}{val}；检查点在 {out}"
    ),
    "trained_val": "，验证损失 {val_loss}",
    # ------------------------------------------------------------------ qkv trace --check 的报告
    "check_head": "{passed}/{total} 项检查通过，{mode}",
    "check_half": "，按模型的半精度检查（偏差不超过 {tol} 即通过）",
    "check_training": "训练模式（dropout 生效）",
    "check_evaluation": "评估模式",
    "check_weights_ok": "通过 模型的权重都是有限数",
    "check_weights_bad": "失败 {note}",
    "check_ok": "通过",
    "check_fail": "失败",
    "check_item": "{mark} {where} {name}：最大偏差 {worst}，共检查 {checked} 处{extra}",
    "check_failing": "；{n} 处失败，例如 {first}",
    "check_layer": "层 {layer}",
    "check_site_layer": "{site}层 {layer}",
    "check_site_encoder": "编码器",
    "check_site_decoder": "解码器",
    "check_site_decoder_cross": "解码器交叉注意力",
    "check_rows_sum": "每行之和为 1",
    "check_non_negative": "权重都不为负",
    "check_masked": "被遮住的权重为 0",
    "check_padding_keys": "填充位置的键权重为 0",
    "check_source_padding": "源句填充位置的权重为 0",
    "check_hull": "z 落在各值向量的凸包内",
    "check_hull_source": "z 落在源句各值向量的凸包内",
    "check_heads_sum": "各头结果 + b_O = {out}",
    "check_norm_scale": "{ln} 的缩放 = {formula}",
    "check_norm_out": "{ln} 的输出 = {formula}",
    "probe": "{prompt} [{expected}]  不是：{others}",
    # ------------------------------------------------------------------ qkv info
    "info_gpt": "{ref}：第 {step} 步，{params} 个参数，{kind} 分词器，{n} 个词元",
    "info_warning": "  警告：{note}",
    "info_source": "源语言",
    "info_target": "目标语言",
    "info_translation": "{ref}：翻译模型 {source} -> {target}（编码器-解码器），第 {step} 步，{params} 个参数",
    "info_stacks": (
        "  编码器：{encoder} 个块，对整个源句做自注意力；解码器：{decoder} 个块，先做因果自注意力，"
        "再对编码器的输出做交叉注意力；每层 {heads} 个头"
    ),
    "info_mt_tokenizer": "  {kind} 分词器，{n} 个词元（<pad> <s> </s> 和两种语言的词），{shared}",
    "info_shared": "两种语言共用一张嵌入表",
    "info_separate": "源语言和目标语言各有一张嵌入表",
    "info_trained_on": "  训练数据：{pairs} 个句对，来自{where}；{val} 个验证句对{held}{left}",
    "info_builtin": "内置语料",
    "info_builtin_hsk": "内置语料和 HSK 训练句",
    "info_held": "（留出的句式）",
    "info_held_hsk": "（留出的句式和 HSK 句子）",
    "info_left_out": "（另有 {n} 个未用：含有任何训练句对都没有的词）",
    "info_pretrained": "{ref}：预训练模型 {name}，{kind}，{params} 个参数{size}",
    "info_tokenizer": "，{kind} 分词器，{n} 个词元",
    "info_size": "，权重 {size}",
    "info_lm_head": "{title}，带 LM 头的{design}",
    "info_no_lm_head": "{title}（没有 LM 头：不能生成文字）",
    "info_design_decoder": "解码器",
    "info_design_encoder": "编码器",
    "info_design_encoder_decoder": "编码器-解码器",
    "info_from": "  来自 {path}（model_type {arch}）",
    # qkv serve：第一行（它的网址；browser_util.py 和测试读它）、警告、拒绝
    "serve_ready": "qkv 浏览器页面：{url}  （模型：{name}；按 Ctrl-C 停止）",
    "serve_open": "警告：正在监听 {host}，不只是这台电脑：网络上的其他人也能用它",
    "serve_port_taken": (
        "无法在 {host}:{port} 上监听：这个端口已经被别的程序占用了；"
        "请先关掉它，或者用 --port 换一个端口（例如 --port {other}）"
    ),
    "serve_cannot_listen": "无法在 {host}:{port} 上监听：{why}",
}

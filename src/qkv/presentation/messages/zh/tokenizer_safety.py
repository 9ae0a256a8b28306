"""qkv 拒绝运行某个 tokenizer.json、或编码出错时所说的话，以及途中遇到的损坏输入（失效的链接、
不是整数的 id）（中文；键与 en/tokenizer_safety.py 相同）。{step} 是文件里写的流水线步骤类型（Replace、Split）。"""

MESSAGES = {
    # ------------------------------------------------------------------ 读 tokenizer.json 时拒绝
    "growth": "这个模型的 tokenizer.json 的规范化步骤能把文本变长到 {factor} 倍（最多允许 {most} 倍）：{steps}",
    "insert_too_long": "这个模型的 tokenizer.json 的 {step} 规范化步骤要插入 {n:,} 个字符（最多 {most} 个）",
    "empty_pattern": "这个模型的 tokenizer.json 的 {step} 模式 {pattern} 能匹配空文本，tokenizers 库无法执行它",
    "nested_regex": "这个模型的 tokenizer.json 的 {step} 正则表达式 {pattern} 重复了一个本身就在重复的分组"
    "（像 (a+)+ 那样）：匹配它可能要花指数级的时间",
    "deep_regex": "这个模型的 tokenizer.json 的 {step} 正则表达式 {pattern} 分组嵌套得太深，qkv 无法读懂它",
    "unknown_step": "这个模型的 tokenizer.json 有一个 {kind} 类型的规范化步骤，qkv 无法估计它会把文本变长多少",
    "special_beyond": "这个模型的 tokenizer.json 的后处理器把词元 {token} 加成 id {id}，超出了词表的 {n} 个词元",
    "too_many_specials": "这个模型的 tokenizer.json 的后处理器给每段文本加 {n} 个 id（最多 {most} 个）",
    # ------------------------------------------------------------------ 编码时拒绝
    "panicked": "分词器处理这段文本时出错（tokenizers 库中止了：{detail}）；"
    "这个模型的 tokenizer.json 要求了该库做不到的事",
    "too_many_ids": "分词器把 {chars:,} 个字符的文本变成了 {n:,} 个 id（最多 {most:,} 个）："
    "这个模型的 tokenizer.json 会成倍放大文本",
    "id_beyond": "分词器给出了 id {id}（词元 {token}），超出了它的词表的 {n} 个词元",
    # ------------------------------------------------------------------ 别处的 Rust 库 panic
    "library_panic": "内部错误：qkv 用到的一个库崩溃了（panic：{detail}）",
    # ------------------------------------------------------------------ 措辞
    "broken_link": "{path} 是一个失效的链接：它指向的 {target} 并不存在",
    "ids_dtype": "词元 id 必须是整数；得到的张量类型是 {dtype}",
}

"""可解释性（中文）：logit lens、直接 logit 归因和注意力头检测器（与 en/interpret.py 同样的键）。
qkv.analysis.lens、.attribution、.head_scores 的拒绝信息，qkv.presentation.heads_table 的文字，以及探索页上
注意力头标签所用的各类名称；
short_ 是各类头在所有地方的名称（网页上的头标签和 qkv heads 的表）。"""

MESSAGES = {
    # ------------------------------------------------------------------ 拒绝
    "one_sequence": "请给一个词元编号序列，形状为 (T,) 或 (1, T)；收到的是 {shape}",
    "lens_family": "logit lens 通过 GPT 的最终归一化层和反嵌入矩阵来读残差流，而{title}没有这一步可读",
    "attribution_family": "直接 logit 归因把 GPT 的一个 logit 拆成各部分的贡献，而{title}没有这样的 logit",
    "attribution_post_norm": "后归一化（post-norm）的模型没有通向 logit 的直接路径：每个块都以 LayerNorm 结尾，"
    "会重新缩放之前写入的一切，所以 logit 拆不成每部分一项",
    "attribution_no_residual": "没有残差连接就没有可拆分的残差流：每个块都替换掉了之前的内容",
    "scores_family": "注意力头检测器测量的是 GPT 的注意力头，而{title}不是 GPT",
    "scores_short": "注意力头检测器需要至少 {need} 个词元的序列，而这个模型一次最多只读 n_ctx = {n_ctx} 个",
    "scores_vocab": "注意力头检测器要从词表里随机抽词元，但去掉特殊词元后只剩 {n} 个普通词元",
    "scores_tokens": "tokens 必须是形状为 (B, T) 的整数编号，2 <= T <= n_ctx = {n_ctx}，每个都在 0..{last} "
    "之间；收到的形状是 {shape}",
    "top_k": "k 必须是不小于 1 的整数，收到的是 {k}",
    "token_needs_tokenizer": "词元 {word} 是一个词：请同时给出分词器（tokenizer=...），或者直接给它的编号",
    "token_pieces": "{word} 在这个分词器里是 {n} 个词元（{pieces}）；一个 logit 只属于一个词元：请给一个编号",
    "token_type": "词元必须是编号（整数）或一个词，收到的是 {token}",
    "token_range": "词元编号 {id} 超出范围：词表的编号是 0..{last}",
    # ------------------------------------------------------------------ 检测器的几类头
    "short_previous": "前一词元",
    "short_duplicate": "重复词元",
    "short_induction": "归纳",
    "short_first": "首词元",
    "label_previous": "前一个词元",
    "label_duplicate": "更早出现的、与自己相同的词元",
    "label_induction": "与自己相同的那个更早词元的下一个词元",
    "label_first": "第一个词元（位置 0）",
    "means_previous": "这个头放在每个查询紧前面那个词元上的权重占比",
    "means_duplicate": "放在与查询词元相同的更早词元上的权重占比",
    "means_induction": "放在“与查询相同的更早词元”后面那个词元上的权重占比（A B … A → B）",
    "means_first": "放在位置 0 上的权重占比",
    # ------------------------------------------------------------------ qkv heads（presentation.heads_table）
    "header": "注意力头检测器，测了 {n} 个 {T} 个词元的序列：一个开头词元、{half} 个随机词元，再把这 {half} 个"
    "重复一遍（随机种子 {seed}）。分数 = Σ A·D / Σ A，即一个头的注意力落在检测模式 D 所标出的键上的占比，"
    "对所有查询取平均。",
    "header_given": "注意力头检测器，测了给定的 {n} 个 {T} 个词元的序列。分数 = Σ A·D / Σ A，即一个头的注意力"
    "落在检测模式 D 所标出的键上的占比，对所有查询取平均。",
    "table_title": "“{kind}”分数：{means}。把权重平均分配的头得分 {baseline:.3f}。",
    "corner": "层",
    "col_head": "头{head}",
    "row_layer": "层 {layer}",
    "strongest": "最强的“{kind}”头：层 {layer}、头 {head}，{score:.3f}（是平均分配权重的头的 {ratio:.1f} 倍）",
    "none_stands_out": "没有哪个头明显是“{kind}”头（最好的是层 {layer}、头 {head}，{score:.3f}，"
    "只是平均分配权重的头的 {ratio:.1f} 倍）",
}

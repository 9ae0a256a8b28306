"""Lesson "heads": where each head looks, averaged over many sentences (Chinese)."""

MESSAGES = {
    "title": "不同的头看不同的东西：在许多句子上量出注意力的去向",
    "label_cue": "决定词义的动词",
    "label_previous": "前一个词元",
    "label_start": "句首（位置 0）",
    "label_self": "自己",
    "short_cue": "动词",
    "short_previous": "前一个",
    "short_start": "句首",
    "short_self": "自己",
    "headline_part": "{short}：层 {layer} 头 {head} {mass:.3f}",
    "headline": "{parts}（均匀基线 {baseline:.3f}，{n_sentences} 个句子）",
    "line": "- {label}：层 {layer} 头 {head}，平均 {mass:.3f}（均匀基线的 {ratio:.1f} 倍）",
    "split_all": "这 {categories} 类各由不同的头拿到最多的注意力（{distinct_heads} 个不同的头）：头与头之间有分工，"
    "这就是“多头”的意义。",
    "split_some": "这 {categories} 类只落在 {distinct_heads} 个不同的头上：有的头同时承担了几类。",
    "cue_weak": "决定词义的动词最多只得到 {cue:.3f}，比“前一个词元”的 {previous:.3f} 少得多："
    "在这个位置上，没有哪个头像盯住前一个词元那样盯住动词。",
    "faint": "不过对{names}来说，就连最关注的那个头也不到均匀基线的 {ratio} 倍：没有哪个头专门看这些。",
    "and": "和",
    "learned": "这些分工是训练出来的，不是预先规定的。",
    "text": "多头注意力让每个头各算一套 q、k、v，于是每个头可以学会关注不同的位置。这里不看单个例子，"
    "而是在 {n_sentences} 个留出的词义句子上取平均（例如「{example}」，其中决定词义的动词是「{example_cue}」）。"
    "查询位置是句子前半截的最后一个位置（以逗号结尾），它要猜下一个词，而下一个词取决于前面的动词是“吃”还是“投资”。\n\n"
    "如果一个头把权重平均分给所有能看到的词元，每一类平均只能得到 {baseline:.3f}。"
    "各类里注意力最多的头：\n{lines}\n\n{verdict}",
    "head": "头",
    "layer": "层",
    "colorbar": "平均注意力权重",
    "fig_title": "逗号处的查询位置把注意力放在哪里（均匀基线 {baseline:.3f}）",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "它读取语料里词义探针句中逗号之后的查询，要求模型是因果的；real-heads 是这一课在编码器上的版本",
}

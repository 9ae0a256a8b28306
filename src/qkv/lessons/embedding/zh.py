"""Lesson "embedding": an index, a one-hot vector and a learned embedding (Chinese)."""

MESSAGES = {
    "title": "序号、独热编码与学到的词嵌入：谁离谁近？",
    "holds": "成立",
    "fails": "不成立",
    "headline": "id({w1}) − id({w0}) = {id_difference}；独热编码的余弦全为 {onehot_max_offdiag:.0f}；"
    "学到的嵌入：水果之间平均余弦 {within_fruit_mean:.3f}，水果与{other} {fruit_other_mean:.3f}（{verdict}）；"
    "离{a}最近：{nn_word} {nn_cosine:.3f}",
    "arrow": "「{tok}」",
    "no_token": "（不是任何词元）",
    "text_holds": "成立：水果彼此之间更接近",
    "text_fails": "不成立：在这个模型里，水果之间并不比水果与{other}更接近",
    "text": "最省事的编码是给每个词一个序号：{id_list}。序号只是标签，做算术没有意义——"
    "id({w1}) − id({w0}) = {id_difference}，恰好是{arrow}的序号，和这两个词毫无关系。\n\n"
    "独热编码给每个词一个只有一位是 1 的向量（这里长 {d_vocab} 位）。"
    "任何两个不同的词都互相正交：量到的余弦相似度全是 {onehot_max_offdiag:.0f}。它们彼此独立，"
    "但也因此看不出“苹果和香蕉都是水果”。\n\n"
    "模型学到的词嵌入是 W_E 的一行（{d_model} 维），训练让用法相近的词指向相近的方向。"
    "余弦相似度：{pairs}。水果两两之间的平均值是 {within_fruit_mean:.3f}，"
    "水果与{other}之间是 {fruit_other_mean:.3f}，所以“水果彼此更近、离原子能更远”这一说法在这里{verdict}。\n\n"
    "在整个词表里离「{a}」最近的词元：{nn_a}；离「{other}」最近的：{nn_other}。",
    "caveat": "提醒：这些距离取决于训练语料里每个词出现了多少次。在{source}中："
    "{counts}；出现得少的词，嵌入得到的训练也少。",
    "source_bundled": "内置模型的训练语料（{corpus_lines} 行：内置语料加上 HSK 训练句）",
    "source_builtin": "内置语料（{corpus_lines} 行；内置模型训练语料的另一部分，即 HSK 例句，没有安装）",
}

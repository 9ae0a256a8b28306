"""Lesson "real-heads": where every head of a real pretrained encoder looks (Chinese)."""

MESSAGES = {
    "title": "真实模型的头：MiniLM 的 72 个头各看哪里",
    "unnamed": "这个编码器",
    "label_cls": "[CLS]（位置 0）",
    "label_sep": "[SEP]（最后一个位置）",
    "label_previous": "前一个词元",
    "label_next": "后一个词元",
    "label_same": "别处的同一个词元",
    "label_self": "自己",
    "short_cls": "[CLS]",
    "short_sep": "[SEP]",
    "short_previous": "前一个",
    "short_next": "后一个",
    "short_same": "同一词元",
    "short_self": "自己",
    "line_some": "- {label}：{count} 个头，{heads}",
    "line_one": "- {label}：一个头，{head} {mass:.3f}",
    "line_none": "- {label}：没有；最多的是 {head} {mass:.3f}",
    "text": "“heads”一课量的是内置模型的头；这里看的是 {model} 的全部 {n_total} 个头（{n_layers} 层 × 每层 "
    "{n_heads} 个），一个由别人训练的模型。每个头有自己的 W_Q、W_K、W_V，所以每个头都可以学会看不同的地方；"
    "编码器的头看得到整个句子，既看得到一个词元前面的词，也看得到后面的词。\n\n"
    "在为这一课写的 {n_sentences} 个英文句子上（例如“{example}”），每个两边都是词的词元都当一次查询"
    "（共 {n_queries} 个查询），对每个头，把它给出的权重按六类键分别加起来，六类键各是不同的位置：[CLS]（位置 0）、"
    "[SEP]（最后一个位置）、前一个词元、后一个词元、词元自己，以及别处的同一个词元：距离至少为 2、又不是 [CLS] 或 "
    "[SEP]、而词元编号相同的其他位置（同一个词或词片再次出现；"
    "这一列只在 {n_same_queries} 个词元会再次出现的查询上取平均）。如果一个头把权重平均分给所有位置，"
    "每个位置平均只能得到 {baseline:.3f}。\n\n"
    "平均把超过 {threshold} 的权重给了某一类键的头（LxHy 表示层 x、头 y，都从 0 数起）：\n{lines}\n\n{verdict}",
    "previous_head": "{best_previous} 把 {best_previous_mass:.3f} 的权重放在前一个词元上，几乎是全部："
    "这是一个专门读前一个词元的头。",
    "next_head": "{best_next} 给后一个词元 {best_next_mass:.3f}：这个头往后看，而 GPT 的头做不到这一点。",
    "cls_many": "专门化的头里大多数（{n_cls} 个）选的是 [CLS]，它们在层 {cls_layers}。",
    "weak_rest": "没有哪个头给 [SEP] 超过 {threshold}（最多 {best_sep_mass:.3f}，{best_sep}），给别处的同一个词元"
    "（{best_same_mass:.3f}，{best_same}）或给自己（{best_self_mass:.3f}，{best_self}）也都没有。",
    "caveat": "权重说明一个头看向哪里，却不说明它从那里拿走了什么：如果某个头里 [CLS] 的值向量很小，"
    "把权重放在 [CLS] 上的头其实加进来的东西很少；一种常见的解读是，这样的头对这个词元没有什么要收集的，"
    "就把权重停在那里。单凭权重证明不了这一点。",
    "headline": "{n_total} 个头里有 {n_specialised_heads} 个把超过 {threshold} 的权重给了某一类键："
    "前一个词元 {best_previous} {best_previous_mass:.3f}，后一个词元 {best_next} {best_next_mass:.3f}，"
    "[CLS] {best_cls} {best_cls_mass:.3f}（{n_cls} 个头看 [CLS]）；{n_sentences} 个句子，{n_queries} 个查询",
    "colorbar": "平均注意力权重",
    "fig_title": "{model}：每个头看哪里（{n_sentences} 个句子）",
}

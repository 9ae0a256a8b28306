"""Lesson "align": cross-attention as word alignment, on a zh→en translation model (Chinese)."""

MESSAGES = {
    "title": "交叉注意力对齐词语：解码器每写一个英文词时读的是哪个中文词",
    "layer_acc": "层 {layer} {acc:.3f}",
    "kind_acc": "{kind} {best:.3f}，对角线 {diagonal:.3f}（{n} 个词）",
    "kind_sense": "词义句",
    "kind_order": "施受句（谁对谁做了什么）",
    "kind_drug": "药物与反应句",
    "kind_job": "职业与工作地点句",
    "link_single": "只对应一个中文词",
    "link_phrase": "对应一个多词短语",
    "link_punct": "标点",
    "single_beats": "当一个英文词只对应一个中文词时，最好的头找对的比例是 {single_best:.3f}，对角线只有 "
    "{single_diagonal:.3f}：在这里它按内容对齐，而不是按位置。",
    "single_not": "即使一个英文词只对应一个中文词，最好的头找对的比例也只有 {single_best:.3f}，对角线是 "
    "{single_diagonal:.3f}。",
    "phrase_diagonal": "在短语内部对角线更好（{phrase_diagonal:.3f} 对 {phrase_best:.3f}）：长短语里的每个词都算对，"
    "只要落在正确位置附近就够了。",
    "comma_ahead": "写逗号的那一行在 {commas} 次中有 {comma_missed} 次没有落在中文逗号上，其中 {comma_ahead} 次落在源句"
    "更靠后的位置、即逗号后面的内容上：解码器已经在读它接下来要写的东西。",
    "comma_elsewhere": "写逗号的那一行在 {commas} 次中有 {comma_missed} 次没有落在中文逗号上，其中只有 {comma_ahead} 次"
    "落在源句更靠后的位置。",
    "sense_food": "食物",
    "sense_company": "公司",
    "sense_cell": "{sense}（{en}）：词 {word_ok}/{n}，后半句 {tail_ok}/{n}，整句 {exact}/{n}",
    "sense_line": "- {word}：{cells}",
    "far_above": "最好的头远高于未训练的模型（{best_acc:.3f} 对 {untrained_best_acc:.3f}）：对齐是训练出来的，"
    "注意力公式本身给不出对齐。",
    "not_far_above": "最好的头并没有明显高于未训练的模型（{best_acc:.3f} 对 {untrained_best_acc:.3f}）。",
    "beats_diagonal": "它也高于对角线（{diagonal:.3f}），所以它跟随的是词本身，而不只是词所在的位置。",
    "not_beats_diagonal": "不过在全部词上它没有超过对角线（{diagonal:.3f}），而对角线根本不看注意力；"
    "下面按对齐方式分开，看它输在哪里。",
    "mean_below": "所有头平均后得到 {acc_mean:.3f}，低于最好的头：并不是每个头都在对齐，有的头在读别的内容。",
    "mean_not_below": "所有头平均后得到 {acc_mean:.3f}，与最好的头差不多：平均并没有把对齐冲淡。",
    "reads_lower": "如果改为给晚一个位置的行打分（输入是 w_j 的那一行，即刚读完这个词、而不是正在写它的那一行），"
    "最好的头只有 {reads_best_acc:.3f}（层 {reads_layer} 头 {reads_head}）：对齐出现在写出这个词的那一行。",
    "reads_higher": "如果改为给晚一个位置的行打分（输入是 w_j 的那一行），最好的头达到 {reads_best_acc:.3f}"
    "（层 {reads_layer} 头 {reads_head}），高于正在写这个词的那一行：这个模型是在写完一个词之后才去查它的来源。",
    "swap_cue": "在 {swap_n} 个句子中，有 {swap_cue} 个的英文词跟着动词走（跟着后半句走的 {swap_tail} 个，"
    "两者都不是的 {swap_neither} 个）：决定词义的是动词。",
    "swap_tail": "在 {swap_n} 个句子中，有 {swap_tail} 个的英文词跟着后半句走（跟着动词走的 {swap_cue} 个，"
    "两者都不是的 {swap_neither} 个）：决定词义的是后半句，而不是动词。",
    "swap_mixed": "在 {swap_n} 个句子中，英文词跟着动词走的有 {swap_cue} 个，跟着后半句走的有 {swap_tail} 个，"
    "两者都不是的有 {swap_neither} 个：两条线索都不能单独决定词义。",
    "tail_faithful": "后半句本身在 {swap_faithful}/{swap_n} 个句子里按原文译出（换成动词词义的后半句的有 "
    "{swap_verb_tail} 个），例如「{swap_zh}」被译成「{swap_en}」。",
    "tail_unfaithful": "后半句本身只在 {swap_faithful}/{swap_n} 个句子里按原文译出："
    "有 {swap_verb_tail} 个句子里，解码器改写了一个符合动词词义的后半句，例如「{swap_zh}」被译成「{swap_en}」。"
    "写过多义词之后，它更相信自己已经写出的英文，而不是它读到的中文；翻译模型同时也是目标语言的语言模型。",
    "tail_mixed": "后半句只在 {swap_faithful}/{swap_n} 个句子里按原文译出，"
    "换成动词词义的后半句的有 {swap_verb_tail} 个；其余两者都不是，例如「{swap_zh}」被译成「{swap_en}」。",
    "rows": "用参考译文做 teacher forcing 时，写出 {millet} 的那些行（对所有头取平均）把 {food_word_w:.3f} 的权重放在 "
    "{split_word} 本身，{food_cue_w:.3f} 放在动词上，{food_tail_w:.3f} 放在后半句；写出 {xiaomi} 时分别是 "
    "{company_word_w:.3f}、{company_cue_w:.3f} 和 {company_tail_w:.3f}。最关注动词的那个头给动词 "
    "{food_cue_head:.3f} 和 {company_cue_head:.3f}。",
    "rows_cue_least": "可见决定词义的动词在三者中得到的最少：交叉注意力不必再读它，因为解码器自己的前文里已经有它上一步"
    "写下的英文动词，自注意力在那里就能读到。",
    "rows_cue_most": "决定词义的动词在三者中得到的最多：交叉注意力读的正是决定词义的线索。",
    "rows_cue_between": "决定词义的动词在三者中既不是最多也不是最少；解码器自己的前文里已经有英文动词，"
    "这是线索传过来的另一条路。",
    "text": "翻译模型的解码器在每个块里有第二种注意力：交叉注意力。它的查询来自正在写的英文，键和值来自编码器对中文句子"
    "算出的向量，所以注意力图的每一行都说明：解码器写一个英文词时读了哪些中文词。qkv 的语料用同一张短语表同时"
    "生成两种语言的句子，因此知道哪个词译成哪个词，于是可以给这些行打分。\n\n"
    "这个模型的解码器有 {n_layers} 层，每层 {n_heads} 个交叉注意力头（d_model = {d_model}）。它读 {n_pairs} "
    "个留出的句对（训练时从未见过的句式），并把参考英文喂给解码器（teacher forcing）。目标位置 j 的那一行"
    "负责写出英文词 w_j，它的输入是前一个词（句首是 <s>）。对 {n_words} 个有标准对齐的英文词，取这一行里权重最大"
    "的中文词作为这个头的判断；如果语料把这两个词连在一起，就算对。\n"
    "- 最好的头：层 {layer} 头 {head}：{best_acc:.3f}\n"
    "- 每层所有头平均成一张图：{layers}\n"
    "- 所有头平均：{acc_mean:.3f}\n"
    "- 同样结构但未训练的模型（固定随机种子的初始权重）：最好的头 {untrained_best_acc:.3f}，所有头平均 "
    "{untrained_mean:.3f}\n"
    "- 完全不看注意力：取相对位置相同的中文词（对角线）{diagonal:.3f}，随机取一个中文词 {chance:.3f}\n\n"
    "{verdict}\n\n"
    "按对齐方式（最好的头，对比对角线）：{links}。在短语里，中文短语的每个词都和英文短语的每个词相连，"
    "所以一行只要落在对的短语里就算对。{link_verdict}按句子类型：{kinds}。\n\n"
    "用贪心解码翻译 {n_pairs} 个留出的中文句子，语料级 BLEU（sacrebleu，按语料自己的词计算）为 {bleu_greedy:.1f}；"
    "逐词与参考译文完全相同的占 {exact_greedy:.1%}。束搜索（束宽 {beam}）一次只能解一个句子，所以只在每 {beam_every} "
    "个句子里取一个（共 {n_beam} 个）：BLEU {bleu_beam:.1f}，同样这些句子贪心解码为 {bleu_greedy_some:.1f}"
    "（逐词相同 {exact_beam:.1%} 对 {exact_greedy_some:.1%}）。\n\n"
    "留出的词义句中的多义词（词：译成该词义的英文词；后半句：逗号后面的分句与参考译文相同）：\n{senses}\n\n"
    "{split_word} 在中文里只是一个词，英文里作食物是 {millet}，作公司是 {xiaomi}，只有上下文能分辨。"
    "把 {swap_n} 个 {split_word} 句子的后半句互换（食物的动词配公司的后半句，反之亦然），两条线索就分开了："
    "{split_verdict}",
    "headline": "对齐：最好的头（层 {layer} 头 {head}）{best_acc:.3f}，所有头平均 {acc_mean:.3f}，未训练 "
    "{untrained_best_acc:.3f}，对角线 {diagonal:.3f}；BLEU 贪心 {bleu_greedy:.1f}（{n_pairs} 句），"
    "束宽 {beam} {bleu_beam:.1f}（{n_beam} 句）；{split_word}：{millet} {millet_ok}/{millet_n}，"
    "{xiaomi} {xiaomi_ok}/{xiaomi_n}",
    "fig_pick": "每行权重最大处",
    "fig_source": "被读的中文词（源）",
    "fig_target": "正在写的英文词（目标）",
    "fig_head": "层 {layer} 头 {head}（最好的头）",
    "fig_mean": "所有头平均",
    "fig_matrix_title": "一个留出句对上的交叉注意力；方框是标准对齐",
    "fig_trained": "训练后",
    "fig_untrained": "未训练",
    "fig_mean_line": "所有头平均 {acc:.3f}",
    "fig_diagonal": "对角线 {acc:.3f}",
    "fig_chance": "随机 {acc:.3f}",
    "fig_acc": "对齐准确率",
    "fig_heads_title": "每个交叉注意力头的对齐准确率（{n_words} 个词，{n_pairs} 个留出句对）",
    "fig_cue_head": "层 {layer} 头 {head}（最关注动词）",
    "fig_split_panel": "在「{prefix}」之后写「{written}」",
    "fig_weight": "交叉注意力权重",
    "fig_split_title": "解码器写出 {word} 的英文时读了什么",
}

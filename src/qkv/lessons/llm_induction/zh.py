"""Lesson "llm-induction": the induction heads of a real LLM (Chinese)."""

MESSAGES = {
    "title": "真实大语言模型的归纳头：按注意力模式找出来，再关掉它们来检验（SmolLM2）",
    "reads_why": "它测量的是模型凭上下文预测下一个词元的能力",
    "unnamed": "这个模型",
    "mode_zero": "置零",
    "mode_mean": "取均值",
    "col_head": "头",
    "col_induction": "归纳分数",
    "col_previous": "前一词分数",
    "col_first": "第一遍",
    "col_second": "第二遍",
    "col_gap": "差",
    "row_clean": "原样的模型",
    "row_top": "前 {k} 个，{mode}",
    "row_random": "随机 {k} 个 ×{r}，{mode}",
    "bar_top": "前几名\n{mode}",
    "bar_random": "随机\n{mode}",
    "text": "“induction”一课看着一个在这里训练的两层模型长出归纳头。真实的大语言模型里也有吗？"
    "{model}（{n_layers} 层 × {n_heads} 个头）读 {n_seqs} 条随机词元序列，每条是一个起始词元、{half} 个随机词元，"
    "再把这 {half} 个重复一遍（共 {T} 个词元）。训练中学到的任何东西都预测不了随机词元，除非它前面出现过："
    "“A B … A → B”。\n\n"
    "前缀匹配：一个头的归纳分数，是它从每个词元出发、分给“这个词元上一次出现时紧跟其后的那个词元”的权重所占的比例"
    "（在这里，完美的归纳头约为 0.5，把权重平均分开的头为 {baseline:.3f}）。{n_total} 个头里有 {n_scoring} 个"
    "得分不低于 {scoring}，分布在层 {scoring_layers}；最高的是 {best}（{best_score:.3f}）。得分最高的 {k} 个头，"
    "以及它们的前一词分数（放在紧挨着的前一个词元上的权重）：\n"
    "{heads_table}\n\n"
    "上下文内的损失：随机词元第一次出现时与再次出现时的平均交叉熵（单位 nat）；差 = 第二遍 − 第一遍。"
    "然后关掉这 {k} 个头：一种是置零消融（把它们的 z 设为 0，什么也不写），一种是均值消融（把它们的 z 换成它在这些序列"
    "所有位置上的平均：照常写出平时的输出，但不再读上下文）。作为对照，从其余的头里随机抽 {k} 个，抽 {n_random} 次"
    "（平均 [最低, 最高]）：\n"
    "{loss_table}\n"
    "{context}{verdict}",
    "context_helps": "原样的模型预测第二遍远比第一遍准（{clean_second:.2f} 对 {clean_first:.2f} nat）："
    "它在从上下文里复制。",
    "context_no": "原样的模型预测第二遍并不比第一遍准（{clean_second:.2f} 对 {clean_first:.2f} nat）。",
    "verdict_holds": "关掉这 {k} 个归纳头，第二遍的损失升到 {zero_second:.2f}（置零）和 {mean_second:.2f}（取均值），"
    "而关掉随机的 {k} 个头最多只升到 {zero_rand_max:.2f} 和 {mean_rand_max:.2f}：从上下文复制靠的就是这少数几个头；"
    "第一遍本来就无从预测，几乎不变。",
    "verdict_fails": "关掉得分最高的 {k} 个头，第二遍的损失为 {zero_second:.2f}（置零）和 {mean_second:.2f}（取均值）；"
    "而某一次随机抽到的 {k} 个头给出 {zero_rand_max:.2f} 和 {mean_rand_max:.2f}："
    "在这里，单看分数挑不出复制所依赖的头。",
    "headline": "{model}：归纳分数 ≥ {scoring} 的头有 {n_scoring} 个（层 {scoring_layers}），最高 {best} "
    "{best_score:.3f}；第二遍损失 {clean_second:.2f} nat，关掉前 {k} 个后 {zero_second:.2f}（置零）/ "
    "{mean_second:.2f}（取均值），关掉随机 {k} 个后 ≤ {zero_rand_max:.2f} / {mean_rand_max:.2f}",
    "fig_title": "{model}：重复随机词元上的归纳头",
    "fig_scores_title": "每个头的归纳分数",
    "fig_head": "头",
    "fig_layer": "层",
    "fig_loss_title": "关掉 {k} 个头后第二遍的损失",
    "fig_loss_y": "交叉熵（nat）",
    "fig_first": "第一遍（原样）",
}

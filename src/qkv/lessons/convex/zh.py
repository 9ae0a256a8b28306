"""Lesson "convex": one head's z in the hull of its values, and the residual that takes it out (Chinese)."""

MESSAGES = {
    "title": "单头输出 z 在 Value 的凸包内，残差把它带出去",
    "inside": "在凸包内",
    "outside": "在凸包外",
    "where": "{side}（距离 {d}）",
    "headline": "例子：a = {a}，z = {z}，{ex_at}；层 {layer} 头 {head}「{tok}」的 z：{z_at}；"
    "z·W_O：{zW_at}；x + z·W_O：{x_at}；x + 注意力的输出 attn_out：{mid_at}",
    "text": "一个注意力头把各位置的 Value 按权重相加：z = Σ a_j v_j。softmax 给出的权重都不小于 0，加起来正好是 1，"
    "所以 z 只能落在这些 Value 张成的凸包里——它是它们的一个“加权平均”。\n\n"
    "先看手算的小例子：缩放后的分数 s = {s}，softmax 得到 a = {a}，"
    "z = {z}。线性规划的结论：{ex_side}（三个 Value 围成的三角形，距离 {ex_d}）。\n\n"
    "再看训练好的模型。句子「{text}」，最后一个词元「{tok}」在层 {layer} 头 {head} 上的权重是：{w}"
    "（这个头对「{cue}」的权重 {cue_weight:.3f}，是所有头里最大的）。它的 z 有 {d_head} 维，"
    "线性规划的结论：{z_side}，距离 {z_d}。\n\n"
    "z 乘上 W_O[h] 进入 {d_model} 维的残差空间后，仍然是 v_j·W_O[h] 的同一组凸组合——线性映射不改变系数，"
    "所以{zW_side}（距离 {zW_d}）。\n\n"
    "但残差连接还要加上原来的 x（|x| = {norm_x:.3f}，而 |z·W_O| = {norm_zW:.3f}）："
    "x + z·W_O 到这个凸包的 L1 距离是 {x_d}（欧氏距离 {residual_l2_distance:.3f}），"
    "{x_side}。把所有头和偏置都加上的 x + attn_out 同样{mid_side}"
    "（距离 {mid_d}）。凸包的保证只属于单个头、归一化后的那一步。",
    "head_title": "层 {layer} 头 {head}：「{tok}」的 z 在 Value 的凸包内",
    "fig_hull": "v_j·W_O[h] 的凸包",
    "fig_zW": "z·W_O[h]（在内）",
    "fig_x_new": "x + z·W_O[h]（在外）",
    "fig_x": "x（残差流）",
    "fig_plane": "把二者分开的平面",
    "fig_x_axis": "从凸包最近点指向 x + z·W_O 的方向",
    "fig_y_axis": "Value 的主方向（与横轴正交）",
    "fig_title": "加上残差之后，点离开了凸包",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": (
        "它的句子、查询和线索词是为内置的词级 GPT 挑选的，它的残差一步是前置归一化（pre-norm）块的；"
        "real-hull 是这一课在编码器上的版本"
    ),
}

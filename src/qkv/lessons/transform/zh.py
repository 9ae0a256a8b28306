"""Lesson "transform": a matrix is a transformation of space (Chinese)."""

MESSAGES = {
    "title": "矩阵就是变换：W_Q、W_K、W_V、W_O 对词向量空间做了什么",
    "holds": "成立",
    "fails": "不成立",
    "trained": "训练后",
    "random": "随机（未训练）",
    "group_fruit": "水果",
    "group_company": "公司",
    "group_energy": "能源",
    "group_ambiguous": "既是水果又是公司",
    "headline": "层 {layer} 头 {head}：W_Q 的拉伸比 σ_1/σ_{r} = {q_cond:.1f}（随机模型 {rq_cond:.1f}）；"
    "训练后的条件数 {t_min:.1f}–{t_max:.1f}，随机模型 {r_min:.1f}–{r_max:.1f}，"
    "{n_places} 个位置中 {more_uneven} 个更大（说法{verdict}）；"
    "词组的组间/组内距离比：变换前 {before_ratio:.2f}，x·W_Q 之后 {ratios_q}",
    "intro": "向量乘以矩阵，得到的是一个挪了位置的新向量；同一个矩阵乘遍所有向量，等于把整个空间一起搬动。"
    "任何矩阵都能拆成 W = U Σ Vᵀ（奇异值分解）：对行向量来说，x W = ((x U) Σ) Vᵀ，"
    "先把 x 转到一组互相垂直的方向上（U），再把方向 i 拉长或压短 σ_i 倍（Σ），"
    "最后转进输出空间（Vᵀ）——转、拉、转。把所有 σ_i 都换成 1，剩下的 R = U Vᵀ 就是“旋转部分”：只转不拉。\n\n"
    "内置模型里，每个头的 W_Q、W_K、W_V 是 {d_model} × {d_head}（从 {d_model} 维的残差流到 {d_head} 维的头），"
    "W_O 是 {d_head} × {d_model}。层 {layer} 头 {head} 的四个矩阵，把 U Σ Vᵀ 乘回去与原矩阵相差不超过 "
    "{reconstruction_error:.1e}，旋转部分正交到 {orthogonality_error:.1e} 以内：这个分解是精确的，不是近似。",
    "stretch": "先看拉伸。这个头的 W_Q 把最强的方向拉长 σ_1 = {q_s1:.3f} 倍，最弱的方向只有 σ_{r} = {q_sr:.3f}，"
    "两者之比（条件数）为 {q_cond:.1f}。{r} 个方向里前 4 个占了全部能量（Σσ²）的 {q_top4:.0%}；"
    "有效秩 {q_erank:.1f}；W_Q 与它的旋转部分之间的余弦为 {q_cos:.3f}（等于 1 才是“纯旋转再乘一个数”）。"
    "下面是全部 {n_layers} × {n_heads} 个头的平均值（括号里是条件数的范围），"
    "与一个形状相同、只做了初始化（种子 {seed}）的模型对比：",
    "row": "  {matrix}：条件数 {t_condition_mean:.1f}（{t_condition_min:.1f}–{t_condition_max:.1f}），随机 "
    "{r_condition_mean:.1f}（{r_condition_min:.1f}–{r_condition_max:.1f}）；有效秩 {t_effective_rank_mean:.1f}，"
    "随机 {r_effective_rank_mean:.1f}；前 4 个方向的能量 {t_top4_mean:.0%}，随机 {r_top4_mean:.0%}；"
    "cos(W, R) {t_rotation_cos_mean:.3f}，随机 {r_rotation_cos_mean:.3f}",
    "stretch_verdict": "这种形状的随机矩阵，拉伸最强的方向也只有最弱方向的 {r_min:.1f} 到 {r_max:.1f} 倍，"
    "比训练后的矩阵均匀得多。“训练让拉伸变得不均匀”——即在每个位置（层、头、矩阵）上，训练后矩阵的条件数都大于未训练模型"
    "同一位置上的矩阵——实测在 {n_places} 个位置中有 {more_uneven} 个更大，所以这一说法{verdict}。",
    "stretch_means": "有些方向被拉伸得比其他方向多得多，所以一个头对残差流里的某些方向格外看重：上面的有效秩，"
    "满分是 {d_head}。",
    "cloud_before": "再看同样的变换作用在词上。一个词的向量，取的是文本只有这一个词时这个头实际读到的输入"
    "（{input}：{input_how}）。"
    "三组词：水果（{fruit_words}）、公司（{company_words}）、能源（{energy_words}）；"
    "{ambiguous_words} 在训练语料里既指水果又指公司，单独标出。"
    "分得开不开，用两个数衡量：各组中心之间的平均距离除以每个词到本组中心的平均距离；"
    "以及去掉这个词后重新算中心、离它最近的中心恰好是本组的词所占的比例。"
    "变换之前的 x：距离比 {before_ratio:.2f}，{before_accuracy:.0%} 的词离本组中心最近。",
    "input_pre": "词嵌入的那一行加上位置 0 的向量，再经过本块的 LayerNorm",
    "input_plain": "进入本块时的残差流，注意力不经 LayerNorm 直接读取它",
    "cloud_after": "x·W_Q 之后，逐个头：距离比 {ratios_q}；x·W_K 之后：{ratios_k}；x·W_V 之后：{ratios_v}。",
    "q_sorts": "在 {n_heads} 个头中有 {hq} 个，W_Q 把这几组词推得更开了。",
    "q_not_sorts": "在 {n_heads} 个头中只有 {hq} 个，W_Q 把这几组词推得更开：在这些头里，一个词的查询想找什么，"
    "并不是“它属于哪类词”的加强版。",
    "kv_counts": "在 {n_heads} 个头中，W_K 有 {hk} 个、W_V 有 {hv} 个做到了这一点。",
    "kv_sort": "在多数头里，这些词的键和值比它们的输入向量更清楚地按话题分开。",
    "kept": "这些变换都只读取 {d_model} 个方向中的 {d_head} 个（U 的各列）。词云的离散程度落在这些方向里的比例，"
    "逐个头：W_Q {shares_q}，W_K {shares_k}，W_V {shares_v}；随便取 {d_head} 个方向，平均能占 {random_share:.0%}。",
    "nearest": "一词两义的词，按最近的组中心看，头 {head} 的 x·W_Q 前 → 后：{words}。",
    "nearest_word": "{word} {before} → {after}",
    "twin": "在形状相同但未训练的模型里，同样这些词的距离比在变换前是 {twin_before_ratio:.2f}，经过它的 W_Q 之后是 "
    "{twin_q_ratio:.2f}：它的词嵌入是随机的，本来就没有可供变换搬动的分组。",
    "caveat": "说明：两幅图是各自词云的前两个主成分，只是 {d_model} 维和 {d_head} 维空间投下的一个平面影子；"
    "距离比和比例都是在完整空间里量的（只看图上这两维，头 {head} 的距离比变换前是 {before_ratio_2d:.2f}，"
    "变换后是 {q_ratio_2d:.2f}）。分组里只有 {n_group_words} 个词，所以准确率以 1/{n_group_words} 为一档跳动。"
    "偏置 b_Q 只是把整个词云平移，不改变词与词之间的距离，所以没有计入；trace 里的 q 减去 b_Q 与 x·W_Q "
    "相差不超过 {trace_max_diff:.1e}。",
    "fig_matrix": "{matrix}（$\\sigma_1/\\sigma_r$ = {cond:.1f}）",
    "fig_index": "方向 i（σ_i 的序号，从 1 数起）",
    "fig_sigma": "奇异值 σ_i（拉伸倍数）",
    "fig_spectra": "层 {layer} 头 {head} 的拉伸倍数：训练后 vs 未训练",
    "fig_before": "变换前：x（组间/组内 {ratio:.2f}）",
    "fig_after": "变换后：头 {head} 的 x·W_Q（组间/组内 {ratio:.2f}）",
    "fig_pc1": "主成分 1",
    "fig_pc2": "主成分 2",
}

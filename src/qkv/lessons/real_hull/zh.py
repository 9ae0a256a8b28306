"""Lesson "real-hull": z in the hull of its values on every head of a real encoder, and where that ends (Chinese)."""

MESSAGES = {
    "title": "真实模型的凸包：MiniLM 每个头的 z 都在值向量的凸包里，以及这一保证在哪里结束",
    "unnamed": "这个编码器",
    "text": "一个注意力头的输出 z = Σ_j a_j v_j，权重 a_j ≥ 0 且加起来等于 1，所以 z 落在这个头的值向量 v_j 的凸包里。"
    "“convex”一课在内置模型的一个头上验证了这一点；这里把 {model} 的每个头都验证一遍（共 {n_total} 个头："
    "{n_layers} 层 × {n_heads}），句子是“{text}”（连同 [CLS] 和 [SEP] 共 {T} 个词元）。每次验证都是一个线性规划："
    "寻找能重现这个点的凸组合权重，答案是点到凸包的 L1 距离（0 表示在里面，相对容差 1e-5）。\n\n"
    "{steps}\n\n"
    "所以这条保证对 z 严格成立，对值向量也做同样的线性变换或平移时依然成立；一旦点和值向量不再被同样对待，它就结束了："
    "拿加上残差的点去和原来的值向量比，或者经过 LayerNorm。第二张图画的是其中一个头 {ex_head} 在“{query}”处的情形"
    "（它给“{cue}”的权重是 {cue_weight:.3f}，比其他任何头都多），值向量投影到它们的两个主方向上。",
    "z_all": "1. z 与值向量的凸包（每个头 {d_head} 维），句中每个位置都验证：{z_points} 个点里 {z_inside} 个在里面，"
    "最大距离为 {z_max}。真实模型严格遵守这条规则：不管训练把 W_Q、W_K、W_V 变成什么样，softmax 权重给出的总是凸组合。",
    "z_some": "1. z 与值向量的凸包（每个头 {d_head} 维），句中每个位置都验证：{z_points} 个点里有 {z_outside} 个在外面"
    "（最大距离 {z_max}），超出了浮点舍入应有的范围。",
    "zW_all": "2. 下面都在“{query}”处（位置 {position}）测量。乘上 W_O[h] 之后，z 进入 {d_model} 维的残差空间，"
    "而 z·W_O[h] = Σ_j a_j (v_j·W_O[h])，权重不变，所以它仍在各点 v_j·W_O[h] 的凸包里：{n_total} 个头里 "
    "{zW_inside} 个在里面（最大距离 {zW_max}）。",
    "zW_some": "2. 下面都在“{query}”处（位置 {position}）测量。乘上 W_O[h] 之后，"
    "拿 z·W_O[h] 与各点 v_j·W_O[h] 的凸包比较：{n_total} 个头里有 {zW_outside} 个在外面（最大距离 {zW_max}）。",
    "x_all": "3. 残差连接把残差流 x 加了进来（在这个位置上，各层的 |x| 在 {norm_x_min:.1f} 到 {norm_x_max:.1f} 之间，"
    "而一个头写入的 |z·W_O[h]| 中位数只有 {norm_zW_median:.2f}，最大 {norm_zW_max:.2f}）。与同一个 v_j·W_O[h] "
    "的凸包相比，全部 {n_total} 个头的 x + z·W_O[h] 都在外面，L1 距离从 {x_zW_min} 到 {x_zW_max}："
    "原文的说法在真实模型的每个头上都成立。",
    "x_some": "3. 残差连接把残差流 x 加了进来（在这个位置上各层的 |x| 在 {norm_x_min:.1f} 到 {norm_x_max:.1f} 之间；"
    "|z·W_O[h]| 中位数为 {norm_zW_median:.2f}）。与同一个凸包相比，{n_total} 个头里有 {x_zW_outside} 个的 "
    "x + z·W_O[h] 在外面（距离最大 {x_zW_max}）。",
    "sum_all": "4. 这个“在外面”取决于拿哪个凸包来比。把每个值向量也像 z·W_O[h] 那样移动：给每个 v_j·W_O[h] 加上 "
    "c = x + b_O + 其他头的输出。那么 x + attn_out = c + z·W_O[h] 对 {n_total} 个头里的 {sum_inside} 个都落在"
    "移动后的凸包里（最大距离 {sum_max}）：给每个点加上同一个向量，凸包也跟着一起移动。",
    "sum_some": "4. 把每个值向量也像 z·W_O[h] 那样移动（加上 c = x + b_O + 其他头的输出）之后，{n_total} 个头里仍有 "
    "{sum_outside} 个的 x + attn_out 在移动后的凸包外面（最大距离 {sum_max}）。",
    "mid_all": "5. {model} 是后归一化（post-norm）的：一个块的注意力部分以 resid_mid = LN1(x + attn_out) 结束"
    "（这里重算的结果与之相差不超过 {ln_gap}）。把移动后的值向量也送进 LN1，全部 {n_total} 个头的 resid_mid "
    "都在它们的凸包外面：L1 距离中位数为 {mid_median}，最小 {mid_min}（{mid_min_head}，它在“{query}”处最大的"
    "权重是 {mid_min_weight:.4f}），最大 {mid_max}（{mid_max_head}，最大权重 {mid_max_weight:.3f}）。",
    "mid_some": "5. {model} 是后归一化（post-norm）的：一个块的注意力部分以 resid_mid = LN1(x + attn_out) 结束"
    "（这里重算的结果与之相差不超过 {ln_gap}）。把移动后的值向量也送进 LN1，{n_total} 个头里有 {mid_outside} "
    "个的 resid_mid 在它们的凸包外面，{mid_inside} 个在里面（最近的是 {mid_min_head}，距离 {mid_min}，"
    "它在“{query}”处最大的权重是 {mid_min_weight:.4f}）。",
    "mid_why": "LayerNorm 不是仿射变换：它把每个向量减去均值，再除以这个向量自己的离散程度，"
    "所以所有输出都落在同一个椭球面上（去均值后长度为 √d_model，再按 γ 拉伸、按 β 平移）。"
    "椭球面上几个点的加权混合落在椭球内部，离开了曲面；而混合之后再做 LN1，结果又回到曲面上；"
    "曲面上一组点的凸包只在这些点本身处碰到曲面，所以只有当 resid_mid 恰好与某个变换后的值向量重合时，"
    "它才可能在凸包里。一个头把几乎全部权重都给一个词元时，情况就接近这样。",
    "headline": "{model}，{n_total} 个头：z 在凸包内 {z_inside}/{z_points}（头 × 位置）；在“{query}”处：z·W_O 在内 "
    "{zW_inside}/{n_total}；x + z·W_O 在外 {x_zW_outside}/{n_total}；x + attn_out 在移动后的凸包内 "
    "{sum_inside}/{n_total}；LN1(x + attn_out) 在变换后的凸包外 {mid_outside}/{n_total}",
    "head_title": "{head}：“{query}”的 z 在值向量的凸包里",
    "fig_inside": "{inside}/{total} 为 0",
    "fig_z": "z\n对 v_j",
    "fig_zW": "z·W_O\n对 v_j·W_O",
    "fig_x_zW": "x + z·W_O\n对 v_j·W_O",
    "fig_sum": "x + attn_out\n对移动后的值",
    "fig_mid": "LN1(x + attn_out)\n对 LN1(移动后的值)",
    "fig_y": "到凸包的 L1 距离（0 表示在里面）",
    "fig_title": "{model}：“{query}”处的每个头（z：每个位置中最大的）",
}

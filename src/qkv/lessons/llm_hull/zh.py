"""Lesson "llm-hull": z inside the hull of its values on every head of a real LLM (Chinese)."""

MESSAGES = {
    "title": "真实大语言模型的凸包：SmolLM2 每个头的 z 都在值向量的凸包里，以及这一保证在哪里结束",
    "reads_why": "它检查的是解码器的头在每句最后一个词元处的输出，那里能看到整句话",
    "unnamed": "这个模型",
    "col_text": "句子",
    "col_tokens": "词元数",
    "col_min_a": "最小 A",
    "col_sum": "max|ΣA−1|",
    "col_rebuild": "max|z−Av|",
    "col_lp": "LP 距离",
    "text": "原文最核心的一句话：一个头在乘 W_O 之前的输出 z_i = Σ_j a_ij v_j，其中 a_ij ≥ 0 且 Σ_j a_ij = 1，"
    "是值向量的凸组合，所以落在它们的凸包里。这里在 {model} 的每个头上验证它：{n_layers} 层 × {n_heads} 个查询头，"
    "共 {n_total} 个头（d_head = {d_head}；分组查询注意力：每 {group} 个查询头共用 {n_kv_heads} 个键/值头中的一个，"
    "所以它们用各自的权重混合同一组值向量），用 {n_texts} 个英文句子（共 {n_positions} 个词元）：\n{texts}\n\n"
    "做两种验证。“凭证”直接读模型自己的权重 A，覆盖每个头的每个位置：没有负的权重（最小 A），每一行加起来等于 1，"
    "而且 Σ_j a_ij v_j 能重建出 z（误差相对于最大的 |v|）。“独立验证”不看 A：在每句的最后一个词元处，"
    "用线性规划（qkv.core.see.hull）寻找任何能重现 z 的凸组合权重，答案是 z 到凸包的 L1 距离"
    "（0 表示在里面，相对容差 {tol}）。\n"
    "{table}\n"
    "{inside}\n\n"
    "{outside}\n\n"
    "第一张图画出每个头的这两种距离；第二张图画的是其中一个头 {ex_head} 在“{last_token}”处的情形"
    "（它的权重分得最均匀，最大的权重为 {ex_max:.3f}），值向量投影到它们的两个主方向上。",
    "inside_all": "每个权重都 ≥ 0（最小为 {min_weight:.3g}），每行之和与 1 相差不超过 {sum_error}，"
    "重建的 z 与模型算出的 z 相差不超过值向量大小的 {rebuild_error}；线性规划对全部 {lp_checked} 个"
    "（头, 句子）组合都判定 z 在凸包里（最大距离 {lp_max}）。不管训练把 W_Q、W_K、W_V 变成什么样，"
    "softmax 给出的总是凸组合：这句话在真实模型的每个头上都严格成立。",
    "inside_some": "最小的权重为 {min_weight:.3g}，每行之和与 1 相差不超过 {sum_error}，重建的 z 相差不超过 "
    "{rebuild_error}；线性规划在 {lp_checked} 个（头, 句子）组合里判定有 {lp_outside} 个在凸包外"
    "（最大距离 {lp_max}）。",
    "outside_all": "原文也提醒了凸包在哪里结束：输出投影和残差连接不受它约束。z W_O[h] 仍在各点 v_j W_O[h] 的凸包里"
    "（权重不变），但块会把它加到残差流 x 上：在“{first_text}”的最后一个词元处，全部 {n_total} 个头的 "
    "x + z W_O[h] 都在那个凸包外面。证据是一个分隔平面（从值向量的均值指向这个点的方向）：点到凸包至少有 "
    "{x_min:.3g}，中位数 {x_median:.3g}，远远超出舍入误差。",
    "outside_some": "输出投影和残差不受凸包约束：在“{first_text}”的最后一个词元处，分隔平面证明 {n_total} 个头里有 "
    "{x_outside} 个的 x + z W_O[h] 在各点 v_j W_O[h] 的凸包外（间隔从 {x_min:.3g} 起，中位数 {x_median:.3g}）；"
    "对其余的头，这个简单的平面给不出结论。",
    "headline": "{model}，{n_total} 个头 × {n_texts} 句：最小 A {min_weight:.3g}，|ΣA − 1| ≤ {sum_error}，"
    "|z − Σ a v| ≤ {rebuild_error}；线性规划：z 在凸包外 {lp_outside}/{lp_checked}；"
    "x + z·W_O 在 v·W_O 的凸包外 {x_outside}/{n_total}",
    "head_title": "{head}：“{token}”的 z 在值向量的凸包里",
    "fig_z": "z：到 conv{v_j} 的 L1 距离（线性规划）",
    "fig_x": "x + z·W_O：在 conv{v_j·W_O} 之外的间隔",
    "fig_layer": "层",
    "fig_y": "距离（0 表示在里面）",
    "fig_title": "{model}：每个头，在最后一个词元处",
}

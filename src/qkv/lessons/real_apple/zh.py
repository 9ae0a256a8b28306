"""Lesson "real-apple": apple as a fruit and as a company, inside a real pretrained encoder (Chinese)."""

MESSAGES = {
    "title": "真实的模型：水果 apple 与公司 Apple，逐层来看（MiniLM）",
    "unnamed": "这个编码器",
    "stage_embed": "嵌入",
    "stage_block": "层 {layer}",
    "col_stage": "阶段",
    "col_across": "跨词义",
    "col_within": "同词义",
    "model_pretrained": "预训练",
    "model_random": "随机",
    "model_shuffled": "打乱",
    "position_count": "位置 {position}：{count}",
    "text": "“context”一课在 qkv 自己训练的小模型里追踪“苹果”。这里把同一个问题拿到一个由别人在真实文本上训练的模型上："
    "{model}，一个 {n_layers} 层的 BERT 编码器（d_model = {d_model}，每层 {n_heads} 个头）。它的分词器会把所有字母"
    "转成小写，所以水果和公司进入模型时是同一个词元：“{company_example}”被切成 {pieces}，"
    "两种意思下 apple 都是编号为 {token_id} 的词元。\n\n"
    "为这一课写了 {n_fruit} 个把 apple 当水果用的句子（例如“{fruit_example}”），{n_company} 个把它当公司用的句子"
    "（例如“{company_example}”）。两组句子里 apple 出现在同样的位置上，次数也相同（{position_counts}，"
    "指每种意思各有几句；[CLS] 是位置 0）。\n\n"
    "在嵌入层的输出处，apple 的向量是 LN(W_E[apple] + W_pos[p] + W_type[0])：词元相同，只有位置 p 不同。"
    "经过每个块（层 0 到层 {last_layer}）之后，注意力已经把句中其他词混了进来。下表是水果句里的 apple 与公司句里的 "
    "apple 之间的平均余弦相似度（跨词义），以及同一词义的两个句子之间的平均余弦（同词义）：\n"
    "{cos_table}\n"
    "{verdict_cos}\n\n"
    "再用一个线性探针从 apple 的向量里读出词义：在标准化后的向量上做带岭惩罚（λ = {ridge}）的最小二乘，"
    "用 {train_n} 个句子拟合，在其余 {test_n} 个句子上打分，轮换 {k_folds} 次，于是每个句子恰好被一个从没见过它的"
    "探针打分一次。apple 位置相同的句子总是一起留出，所以位置帮不上忙。留出句子上的准确率（瞎猜为 0.5）：\n"
    "{probe_table}\n"
    "{verdict_probe}\n\n"
    "“随机”是同一结构在训练之前的样子，按 BERT 的方式初始化（权重取自 N(0, {init_std}²)，偏置为 0，LayerNorm 的"
    "缩放为 1、平移为 0；种子 {seed}）。“打乱”是把 MiniLM 每个权重矩阵里的元素随机重排（种子 {seed}）："
    "每个矩阵保留了原来那些数和它们的大小，却失去了训练赋予它们的排列。",
    "cos_embed": "在嵌入层输出处两种余弦几乎相等（同词义减跨词义为 {pre_emb_gap:+.3f}）：那里只有位置在变，"
    "而位置是平衡的。",
    "cos_pre_holds": "在预训练模型里，从第一个块起，同一词义的两个 apple 比水果 apple 与公司 apple 更接近："
    "同词义减跨词义在 {pre_min_gap:.3f} 到 {pre_max_gap:.3f} 之间（在 {pre_max_gap_stage} 最大）。"
    "所有余弦都很高（最低 {pre_min_cos:.3f}）：这些向量的方向大体一致，词义藏在它们的差别里。",
    "cos_pre_fails": "在预训练模型里，同词义减跨词义并不是在每个块之后都为正：最小 {pre_min_gap:.3f}，"
    "最大 {pre_max_gap:.3f}（在 {pre_max_gap_stage}）。",
    "cos_controls_flat": "权重随机时两种余弦之差从不超过 {rand_abs_gap:.3f}，权重打乱时不超过 {shuf_abs_gap:.3f}："
    "在那里，apple 的向量并不按词义聚在一起。",
    "cos_controls": "权重随机时两种余弦最多相差 {rand_abs_gap:.3f}，权重打乱时最多相差 {shuf_abs_gap:.3f}。",
    "probe_embed": "在嵌入层输出处，三个模型的探针都是 {pre_emb_probe:.3f}：那里位置相同的向量完全相同，"
    "而每个位置上两种词义各有一句。",
    "probe_pre_all": "预训练模型的 apple 在每个块之后都带着词义：准确率至少 {pre_min_probe:.3f}，"
    "在 {pre_best_stage} 达到 {pre_best:.3f}。",
    "probe_pre": "预训练模型最好的阶段是 {pre_best_stage}（{pre_best:.3f}）；最弱的块只有 {pre_min_probe:.3f}。",
    "probe_random": "权重随机时探针仍能达到 {rand_best:.3f}（在 {rand_best_stage}）："
    "随机的注意力同样会把相邻的词平均进 apple 的向量，而用带标签的句子拟合的探针能从中捡到一些痕迹。",
    "probe_shuffled": "权重打乱时最多达到 {shuf_best:.3f}（在 {shuf_best_stage}）。",
    "probe_training": "两者都低于预训练模型最弱的那个块：无论权重如何，公式都会混入上下文，"
    "但要让 apple 的向量说清自己是哪一个 apple，靠的是训练出来的权重。",
    "headline": "apple，水果对公司（{n_fruit} + {n_company} 句）：最后一个块之后跨词义余弦 {pre_across_last:.3f}，"
    "同词义 {pre_within_last:.3f}；留出探针（各取最好阶段）：预训练 {pre_best:.3f}，随机 {rand_best:.3f}，"
    "打乱 {shuf_best:.3f}",
    "fig_title": "{model} 中作水果（{n_fruit} 句）与作公司（{n_company} 句）的 apple",
    "fig_x": "阶段（嵌入输出，然后是每个块之后）",
    "fig_cos_y": "平均余弦",
    "fig_probe_y": "留出准确率",
    "fig_cos_title": "跨词义（实线）与同词义（虚线）",
    "fig_probe_title": "线性探针：水果还是公司？（{k_folds} 折）",
    "fig_across": "{model}，跨词义",
    "fig_within": "{model}，同词义",
    "fig_chance": "瞎猜",
}

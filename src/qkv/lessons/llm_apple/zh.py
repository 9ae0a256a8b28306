"""Lesson "llm-apple": apple the fruit and apple the company inside a real LLM (Chinese)."""

MESSAGES = {
    "title": "真实的大语言模型：水果 apple 与公司 apple，逐层来看（SmolLM2）",
    "reads_why": "它追踪的是一个从左往右读、预测下一个词元的模型里的词",
    "unnamed": "这个模型",
    "stage_embed": "嵌入",
    "stage_block": "层 {layer}",
    "col_stage": "阶段",
    "col_across": "跨词义",
    "col_within": "同词义",
    "col_gap": "差",
    "col_probe": "探针",
    "text": "原文说，“我刚吃了苹果”和“我投资了苹果”里的“苹果”进入模型时是同一个向量，正是注意力让上下文把两者区分开。"
    "这里在 {model} 上实测这一说法：它是 Llama 结构的大语言模型（{n_layers} 层，每层 {n_heads} 个查询头，"
    "d_model = {d_model}），读的是英文，所以下面的句子都是英文。\n\n"
    "它的分词器区分大小写：“{word}”是词元 {word_ids}，首字母大写的写法是另外的词元（{other_case_ids}），"
    "那样在任何注意力之前就已经告诉模型“这是公司”。所以为这一课写的 {n_pairs} 对句子都以同一个小写的词结尾"
    "（例如“{fruit_example}”和“{company_example}”）；而且从左往右读的模型只看得到 apple 前面的词，"
    "所以每句的线索词（ate、shares、iPhone 等）都放在 apple 之前。\n\n"
    "在 apple 这个词元处，下表给出水果句与公司句之间的平均余弦（跨词义）、同一词义的两句之间的平均余弦（同词义）、"
    "两者之差（差 = 同词义 − 跨词义），以及线性探针（在标准化后的向量上做岭回归最小二乘）在留出句对上的准确率："
    "分成 {k_folds} 折，每折 {test_pairs} 对，所以每个句子都由一个既没见过它、也没见过它的配对句的探针来打分"
    "（瞎猜为 0.5）。“嵌入”是进入层 0 之前的向量；层 0 到层 {last} 是各个块的输出。\n"
    "{stage_table}\n"
    "{verdict_layers}\n\n"
    "哪些头在读线索词？对每个头，取 apple 的查询给线索词的权重 pattern[apple, 线索词]，在 {n_sentences} "
    "个句子上求平均。最大的几个：{top_heads}。{verdict_heads}\n\n"
    "模型在每句之后的预测（概率最高的三个下一个词元）：\n"
    "{next_table}\n"
    "{n_pairs} 对句子里有 {differ} 对，水果句和公司句最可能的下一个词元不同。向量按词义分开了（见上面的探针），"
    "并不等于预测也随之改变了多少：上面逐句列出的下一个词元回答这一点；公司线索词之后的小写 apple，"
    "仍可能被当作水果接着往下写。",
    "emb_same": "在嵌入处，每个 apple 都是同一个向量（余弦 {emb_across:.3f}；Llama 不给词元加位置向量），"
    "所以那里的探针只是瞎猜（{emb_probe:.3f}）。",
    "parted": "从 {parted} 起，留出探针就能读出词义（那里为 {parted_probe:.3f}）；",
    "not_parted": "经过任何一个块之后，留出探针都没有达到 0.9；",
    "full": "从 {first_full} 到最后一个块，它对每个留出的句子都判断正确。",
    "gap": "随着各个块加入上下文，余弦逐渐下降，而且跨词义下降得比同词义快：差最大到 {max_gap:.3f}"
    "（在 {max_gap_stage}；最后一个块之后跨词义 {last_across:.3f}，同词义 {last_within:.3f}）。"
    "这些向量仍保留一个共同的方向，词义藏在它们的差别里。",
    "heads": "最强的 {top_head} 把 {top_weight:.3f} 的权重给了线索词（两种词义的句子一起平均）。",
    "heads_sink": "所有头的平均只有 {mean_cue:.3f}，比把权重平均分给 apple 之前各个词的头（{uniform_cue:.3f}）"
    "还少：大语言模型的多数头把大部分权重放在第一个词元上，只有少数头去读真正要紧的词。",
    "heads_even": "所有头的平均为 {mean_cue:.3f}；把权重平均分给 apple 之前各个词的头会给出 {uniform_cue:.3f}。",
    "headline": "{model}，{n_pairs} 对水果/公司句中的 apple：嵌入处余弦 {emb_across:.3f}，探针 {emb_probe:.2f}；"
    "最后一个块之后跨词义 {last_across:.3f}、同词义 {last_within:.3f}，留出探针 {last_probe:.2f}；"
    "最关注线索词的头：{top_head}（{top_weight:.3f}）",
    "fig_title": "{model}：作水果与作公司的 apple（{n_pairs} 对句子）",
    "fig_x": "阶段（嵌入，然后是每个块之后）",
    "fig_cos_y": "平均余弦",
    "fig_probe_y": "留出准确率",
    "fig_cos_title": "跨词义与同词义",
    "fig_probe_title": "线性探针：水果还是公司？（按句对分 {k_folds} 折）",
    "fig_heads_title": "apple 给线索词的权重",
    "fig_head": "头",
    "fig_layer": "层",
}

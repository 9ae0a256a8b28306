"""Lesson "context": one word, two contexts, and what attention makes of it (Chinese)."""

MESSAGES = {
    "title": "同一个词，两种语境：注意力让「苹果」的表示随上下文而变",
    "text": "词元进入模型时，只是嵌入表 W_E 里的一行，这一行并不知道自己在哪个句子里。拿“{fruit}”\n"
    "和“{company}”来说：苹果在两句中都位于位置 {position}（从 0 数起），输入向量完全一样，余弦相似度\n"
    "{embed_cosine:.6f}，坐标之差的最大值为 {embed_max_abs_diff:g}。任何固定的映射 x -> xW 都把相同的输入变成相同的\n"
    "输出，所以单凭这个向量，分不出它是水果还是公司。\n"
    "\n"
    "让其他词元参与进来的是注意力：z_i = Σ_j a_ij x_j W_V 把位置 i 及之前各词元的向量按权重\n"
    "混合，每个块再把结果加回去：x_i + z_i W_O。两个“苹果”向量在残差流各阶段的余弦相似度\n"
    "（“层 0 输入”是嵌入加位置，层从 0 数起）：\n"
    "{cos_table}\n"
    "训练后的模型里，两者从完全相同出发，从第一个块起开始分开；最低的余弦是 {cmin:.4f}，\n"
    "在“{cmin_at}”。它们仍然相近，因为每个向量的大部分仍是“苹果”自己带来的信息。注意力在\n"
    "“苹果”处写入的内容（hook_attn_out，即 Σ_h z_h W_O[h]）差别要大得多：\n"
    "{attn_table}\n"
    "训练后的注意力头也知道该看哪里：从“苹果”出发，某个头放在线索词（决定词义的动词）上的最大权重，在“吃了”上\n"
    "是 {cue_f:.2f}，在“投资了”上是 {cue_c:.2f}（层 {cue_layer}）；未训练的模型里，没有哪个头给线索词\n"
    "超过 {untrained_max_cue_weight:.2f}，约为 1/{n_visible}，相当于平均分配。\n"
    "\n"
    "这种差别里有没有词义？我们用线性探针（逻辑回归）检验：取歧义词（苹果、小米或黑莓）自身\n"
    "位置上的向量（此时还没看到后面的逗号），在 {n_probe_train} 个语料句子上拟合，标签按句子的后文\n"
    "定为水果或公司；再在 {n_probe_test} 个留出的探针句子上评分，这些句子的框架从未在语料中出现过\n"
    "（瞎猜为 0.5）：\n"
    "{probe_table}\n"
    "在纯嵌入处，探针只能瞎猜（{p_embed:.3f}）：同一个词永远给出同一个向量。训练后的模型在\n"
    "“{best}”处最好（{best_probe_accuracy:.3f}）。\n"
    "\n"
    "模型在逗号之后预测的下一个词（前 {top} 个）：\n"
    "  训练后，“{fruit} ，”   {nf}\n"
    "  训练后，“{company} ，” {nc}\n"
    "  未训练，“{fruit} ，”   {unf}\n"
    "  未训练，“{company} ，” {unc}\n"
    "（完全均匀时，{d_vocab} 个词元每个得到 {uniform_probability:.4f}）。"
    "在全部 {n_continuation_probes} 个留出的词义探针上，训练后\n"
    "的模型有 {continuation_accuracy:.1%} 给正确后文的概率高于另一词义的后文，"
    "未训练的模型是 {untrained_continuation_accuracy:.1%}。\n"
    "\n"
    "{patch_paragraph}\n"
    "\n"
    "光有公式，并不能让 z 变得有用。未训练的模型同样会混入上下文（最后的余弦是\n"
    "{ucos_last:.4f}）：随机、近乎平均的注意力照样会把前面的词元平均进来，所以一个本身用带标签的\n"
    "例子训练过的探针，最多能从中读出 {untrained_best_probe_accuracy:.3f}。但模型自己用不上它：它对下一个词的猜测\n"
    "几乎是平的{u_same}。z 只是一串数字，没有哪个坐标代表“水果”；是训练不断调整\n"
    "W_Q、W_K、W_V、W_O 以及其后的各层，直到注意力收集来的信息能够降低预测误差。",
    "headline": "两句中苹果的余弦相似度：嵌入处 {embed_cosine:.3f}，"
    "最后一个块之后 {clast:.3f}（未训练 {ucos_last:.3f}）；探针准确率 {best_probe_accuracy:.3f}，"
    "在“{best}”（未训练最高 {untrained_best_probe_accuracy:.3f}）；下一个词 {f1} 对 {c1}",
    "same_first": "，两种语境里排第一的词也相同",
    "col_stage": "阶段",
    "col_trained": "训练后",
    "col_untrained": "未训练",
    "stage_embed": "嵌入",
    "stage_layer": "层 {layer}",
    "stage_in": "层 {layer} 输入",
    "stage_out": "层 {layer} 输出",
    "cos_title": "“{a}”与“{b}”中的苹果",
    "cos_y": "余弦相似度",
    "probe_title": "线性探针：水果还是公司？（留出集）",
    "probe_y": "准确率",
    "x": "阶段（残差流）",
    "trained": "训练后",
    "untrained": "未训练",
    "chance": "瞎猜",
    "patch_intro": "词义到底由哪些头携带？A 里的权重只说明一个头看向哪里，不说明它的输出起"
    "什么作用，所以这里直接动手干预（激活修补，activation patching）。“{pf}”和“{pc}”一样长（{patch_len} 个"
    "词元）。运行其中一句，但把某一个头在所有位置上的 z 换成另一句运行时的值，然后在逗号处看下一个词的分布"
    "移动了多少：一是它与未修补时的总变差距离（两句未修补时相距 {clean_tv:.3f}），二是另一种词义的后文所得"
    "的概率，从本句的值朝另一句的值走了几成（0%：没动，100%：走到底；语料在逗号后接的第一个词：水果是 {fw}，"
    "公司是 {cw}）。未修补时，“{pf}”给水果的词 {m_ff:.3f}、给公司的词 {m_fc:.3f}；“{pc}”分别是 {m_cf:.3f} "
    "和 {m_cc:.3f}。每个头的比例（运行水果句、换入公司句的头 / 反过来）：",
    "patch_skipped": "（这个模型没有做激活修补实验：它的分词器没有把“{pf}”和“{pc}”分成同样多的词元，"
    "或者两种词义的后文里没有能作为单个词元的词。）",
    "patch_no_head_decides": "没有哪一个头能单独决定词义。最盯着线索词的头是层 {cue_layer} 头 {cue_head}（"
    "从逗号出发，放在“吃了”上的权重 {cue_wf:.2f}，放在“投资了”上 {cue_wc:.2f}），单独换掉它，预测只走了 {cue_sf} "
    "和 {cue_sc}；单个头走得最远的是层 {bh_layer} 头 {bh_head}，{bh_sf} 和 {bh_sc}（总变差 {bh_tf:.3f} 和"
    " {bh_tc:.3f}）。",
    "patch_one_head_decides": "一个头就携带了词义：单独换掉层 {bh_layer} 头 {bh_head}，预测就走了 {bh_sf} "
    "和 {bh_sc}（总变差 {bh_tf:.3f} 和 {bh_tc:.3f}）；最盯着线索词的头是层 {cue_layer} 头 {cue_head}（从逗"
    "号出发，放在“吃了”上的权重 {cue_wf:.2f}，放在“投资了”上 {cue_wc:.2f}），换掉它走了 {cue_sf} 和 {cue_sc}。",
    "patch_layer_switches": "可是把层 {bl_layer} 的所有头一起换掉，预测就换了词义：走了 {bl_sf} 和 "
    "{bl_sc}（总变差 {bl_tf:.3f} 和 {bl_tc:.3f}），而这些头单独换掉时的移动加起来是 {sum_f} 和 {sum_c}。词"
    "义存在于这几个头共同写入的内容里：只换一个，其余的头仍在写原来的词义。",
    "patch_layer_weak": "即使把层 {bl_layer} 的所有头一起换掉，预测也只走了 {bl_sf} 和 {bl_sc}（"
    "总变差 {bl_tf:.3f} 和 {bl_tc:.3f}）：词义并不集中在某一层的头里。",
    "patch_rest_small": "把其他任何一层的头一起换掉，最多只走 {rest}：它们不携带词义。",
    "patch_rest_large": "把另一层的头一起换掉，也能走到 {rest}。",
    "headline_patch": "；换入层 {bl_layer} 的所有头：朝另一词义走了 {bl_sf} / {bl_sc}",
    "col_head": "头 {head}",
    "patch_x_head": "头",
    "patch_y_layer": "层",
    "patch_map_title": "运行“{run}”：\n每次换一个头",
    "patch_share": "激活修补：预测朝另一词义走了几成",
    "patch_layer_title": "一层的所有头一起换",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "它比较模型预测的下一个词，而编码器没有下一个词元的输出头；real-apple 是这一课在编码器上的版本",
}

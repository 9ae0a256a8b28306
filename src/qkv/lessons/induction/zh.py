"""Lesson "induction": induction heads form in two layers, not in one, and carry the in-context gain (Chinese)."""

MESSAGES = {
    "title": "归纳头：有了第二层，模型学会从上下文里照抄",
    "text": "归纳头（induction head）能补全文本里已经出现过的模式：在“… A B … A”中，它从第二个 A 出发，\n"
    "看向第一个 A 后面的那个词元，于是预测 B。这需要两层里的两个头合作：前一层的某个头把“我前面\n"
    "一个词元是什么”写进每个位置（前一词元头，previous-token head）；归纳头再用自己的查询（“我是 A”）\n"
    "去匹配那些带着“我前面是 A”的键。只有一层时，键只知道自己的词元和位置，没有哪个头能去找\n"
    "“早先那个 A 后面的词元”。\n"
    "\n"
    "实验仿照 Olsson 等人（2022，《In-context learning and induction heads》），缩小到 CPU 上能跑：\n"
    "两个只有注意力的模型（没有 MLP，每块是 x ← x + Attn(LN(x))），分别是 1 层和 2 层，每层 {n_heads} 个头，\n"
    "d_model = {d_model}，在{source_text}上逐字符训练（这份文本共 {characters:,} 个字符，{vocab} 种）；"
    "种子、{steps} 个批次\n"
    "（每批 {batch_size} 段、每段 {n_ctx} 个字符）和学习率都相同。自然文本重复得太少，一分钟的训练里\n"
    "照抄划不来（在自然文本上，归纳头要在几百万乃至更多词元之后才出现），所以每段训练文本前半部分里\n"
    "有一截 {repeat_min} 到 {repeat_max} 个字符，会在后面随机的位置再写一遍；模型并不知道在哪里。\n"
    "每训练 {probe_every} 步，两个模型都在 {n_seqs} 条随机字符序列上测量，每条重复一次：\n"
    "[f, r_1 … r_{half}, r_1 … r_{half}]。\n"
    "- 一个头的归纳分数：它放在“当前词元早先那次出现的下一个词元”上的注意力权重，占它在所有位置上\n"
    "  全部权重的比例（TransformerLens 的头检测器）。平均分配权重的头得 {baseline:.3f}；完美的归纳头\n"
    "  约 0.5，因为只有后一半才有早先的副本。\n"
    "- 上下文差距：r_2 … r_{half} 第二次出现时的平均损失减去第一次的（单位 nat）。随机词元第一次无从\n"
    "  猜起，只有上下文里的内容能让第二次变便宜：差距为负，就是从上下文中学到了东西。（Olsson 的\n"
    "  上下文学习分数在自然文本上问同一件事：位置 500 处的损失减去位置 50 处的。）\n"
    "\n"
    "训练过程中（各头里最高的归纳分数，以及差距）：\n"
    "{curve_table}\n"
    "训练结束时，两层模型在第一遍上的损失是 {first_two:.2f}，第二遍 {second_two:.2f}（差距 {gap_two:+.2f}）；\n"
    "一层模型是 {first_one:.2f} 和 {second_one:.2f}（差距 {gap_one:+.2f}）。{surprise}\n"
    "\n"
    "然后把两层模型的每个头轮流关掉（z_h = 0），在同样的序列上再测一遍：\n"
    "{ablation_table}\n"
    "\n"
    "{verdicts}\n"
    "\n"
    "{spread}",
    "source_shakespeare": "莎士比亚剧本选段 tiny Shakespeare ",
    "short_shakespeare": " tiny Shakespeare ",
    "short_python_docs": " Python 文档",
    "short_corpus": "内置语料",
    "source_python_docs": " Python 自带的文档（每个 Python 安装都有的帮助文本，pydoc_data；本机没"
    "有 tiny Shakespeare，即仓库旁的 shared/data/tinyshakespeare.txt）",
    "source_corpus": "本包内置的英文语料（本机既没有 tiny Shakespeare，也没有 Python 的文档；"
    "这份语料太规整，照抄得益很少，归纳头可能来不及形成）",
    "surprised": "两者第一遍的损失都高于均匀乱猜的 ln {vocab} = {uniform_loss:.2f}：它们在文本上训练，预期看到文本，"
    "遇到随机字符反而更意外。",
    "formed": "两层模型里形成了归纳头：最高分数起初停在平均分配的水平附近（{ind_from:.3f}），随后升到 "
    "{ind_to:.3f}，是平均分配的 {formed_times:.0f} 倍；这段上升在第 {rise_start}、{rise_middle}、{rise_end} 步"
    "分别完成了 10%、50%、90%，而差距在第 {gap_middle} 步降到了一半。",
    "together": "分数和损失是一起变的。",
    "apart": "分数和损失并不是同时变的。",
    "not_formed": "两层模型里没有形成归纳头：最高分数只从 {ind_from:.3f} 升到 {ind_to:.3f}，"
    "是平均分配的 {formed_times:.1f} 倍。",
    "one_flat": "一层模型没有哪个头的分数超过过 {best_one:.3f}，它的差距只到 {gap_one:+.2f}，而两层模型是 "
    "{gap_two:+.2f}：它能偏向已经见过的字符（第二遍里没有新字符），却分不出下一个是其中哪一个。",
    "one_formed": "连一层模型的归纳分数也到了 {best_one:.3f}，差距 {gap_one:+.2f}。",
    "ablate_removes": "关掉归纳头 {ind_name}（分数 {ind_score:.3f}），增益就没了：差距只剩 {kept_pct}，"
    "第二遍和第一遍差不多一样难。",
    "ablate_reduces": "关掉归纳头 {ind_name}（分数 {ind_score:.3f}），差距还剩 {kept_pct}：还有别的头分担这件事。",
    "previous_needed": "{prev_name} 是层 0 里最爱看前一个词元的头（分数 {prev_score:.2f}），它是这条回路的另一半："
    "关掉它，差距只剩 {kept_previous_pct}。",
    "previous_not_needed": "关掉层 0 里最爱看前一个词元的头 {prev_name}（分数 {prev_score:.2f}），"
    "差距还剩 {kept_previous_pct}。",
    "others_keep": "关掉其他任何一个头，差距至少还剩 {kept_other_pct}。",
    "headline": "在{source_short}上，两层：最高归纳分数 {ind_from:.3f} → {ind_to:.3f}（第 {rise_middle} 步完成一半），"
    "上下文差距 {gap_two:+.2f} nat；一层：最多 {best_one:.3f}，差距 {gap_one:+.2f}；"
    "关掉层 {ind_layer} 的归纳头（这次是头 {ind_head}）：差距剩 {kept_pct}",
    "spread": "以上是种子 {seed} 这一次运行的数字。换一个种子，数字就会不同：在 tiny Shakespeare 上用种子 {seed_lo} "
    "到 {seed_hi} 各训练一次，最高归纳分数最后落在 {score_lo:.2f} 到 {score_hi:.2f} 之间，差距在 {gap_lo:+.2f} 到 "
    "{gap_hi:+.2f} nat 之间，关掉归纳头后差距还剩 {kept_lo} 到 {kept_hi}；层 1 的哪个头成为归纳头（头 0 还是头 1）"
    "也随种子而变。对每个种子都成立的是：层 1 里有一个归纳头，一层模型里没有，关掉这个头就拿走了大部分增益。"
    "本课只用一个线程训练，所以机器有几个核不影响结果；换一套 CPU 指令（用 AVX2 或普通的 SSE 代替 AVX-512）"
    "也没有改变任何一位打印出来的数字；换一份训练文本则会改变它们。",
    "spread_other": "以上是在{source_short}上、种子 {seed} 这一次运行的数字。qkv 文档（docs/lessons.md）里的数字是在 "
    "tiny Shakespeare 上测的，从仓库检出的代码旁边就有这份文本（shared/data/tinyshakespeare.txt）：换一份文本训练，"
    "模型会停在别处，归纳头也可能是层 1 的另一个头。换一个种子，数字同样会变。",
    "head": "层 {layer} 头 {head}",
    "row_head": "{which}（{role}）",
    "role_induction": "归纳头",
    "role_previous": "前一词元头",
    "role_other": "其他",
    "none": "都不关",
    "col_step": "步",
    "col_best_two": "两层",
    "col_gap_two": "差距",
    "col_best_one": "一层",
    "col_gap_one": "差距",
    "col_off": "关掉的头",
    "col_first": "第一遍",
    "col_second": "第二遍",
    "col_gap": "差距",
    "col_kept": "剩余差距",
    "model_one": "一层",
    "model_two": "两层",
    "curve_head": "{model}，{which}",
    "even_spread": "平均分配",
    "y_score": "归纳分数",
    "y_gap": "上下文差距（nat）：第二遍 − 第一遍",
    "x_step": "训练步数（阴影：两层模型分数上升的 10% 到 90%）",
    "fig_title": "重复的随机字符：每层 {n_heads} 个头，d_model = {d_model}",
    "first_half": "第一遍",
    "second_half": "第二遍",
    "uniform": "均匀乱猜：ln {vocab} = {uniform_loss:.2f}",
    "y_loss": "r_2 … r_n 上的损失（nat）",
    "ablation_title": "训练后的两层模型，每次关掉一个头",
}

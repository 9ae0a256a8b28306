"""qkv explain 用于翻译模型：译文的每个词在原文中读了哪些词（中文）。"""

MESSAGES = {
    # qkv translate 在译文旁（标准错误输出）给的提示，以及提示或错误所在的行
    "note": "qkv: 注意：{text}",
    "note_line": "第 {n} 行：",
    "note_left_out": "模型没见过标点{marks}，翻译时当它们不存在",
    "note_mark": "「{mark}」",
    "note_unsure": "模型对这句译文没有把握：它写下「{word}」时的概率只有 {p}（低于 {below}），是在几个词之间挑的，"
    "请把它当作猜测",
    "title": "翻译模型：译文的每个词在原文中读了哪些词（解码器层 {layer} 头 {head} 的交叉注意力）",
    "source": "原文（{n} 个词）：{text}",
    "translated": "模型的译文（{n} 个词；贪心解码：每一步都取最可能的词）：{text}",
    "given": "给定的译文（{n} 个词；原样送入解码器，不是模型自己译的）：{text}",
    "unfinished": "译文在 n_ctx = {ctx} 个目标词元之内没有以 </s> 结束：在那里被截断。",
    "rows": "解码器一次写出译文的一个词。目标步 i（从 0 数起）已经读过 <s> 和译文位置 i 之前的词；"
    "它的 query 去问原文（编码器的输出："
    "每个原文词一个 key、一个 value）接下来该翻译哪些词。所以下面每一行都以这一步写出的词命名；"
    "最后一步写出 </s>，表示结束。",
    "sharpest": "这里跟踪头 {head}，因为它是解码器层 {layer} 最集中的交叉注意力头：它各行的平均熵最小，"
    "为 {bits:.3f} 比特（0 表示每个目标词只读一个原文词，{max:.3f} 表示均匀分给 {n} 个原文词）。"
    "用 --head 可以换一个头。本层的每个头：",
    "entropies": "解码器层 {layer} 每个交叉注意力头各行的平均熵（0 表示每个目标词只读一个原文词，"
    "{max:.3f} 表示均匀分给 {n} 个原文词）：",
    "c_head": "头",
    "c_entropy": "平均熵（比特）",
    "overview": "每个目标词的交叉注意力最看重的原文词：头 {head} 的，以及本层所有头平均后的。",
    "c_step": "步",
    "c_written": "写出",
    "c_after": "之前读到",
    "c_most": "最关注（头 {head}）",
    "c_weight": "注意力权重 A",
    "c_mean": "最关注（各头平均）",
    "per_word": "每个目标词的完整一行（头 {head}）：q·k 是这一步的 query 与原文词 key 的原始点积，"
    "权重 A = softmax(q·k / √d_head) 在原文词上取，所以每一行加起来等于 1。",
    "word": "「{tok}」（目标步 {pos}，前一个词是「{reads}」）：",
    "c_source": "原文词",
    "steps_title": "逐步计算：目标步 {pos}，在「{reads}」之后写出「{tok}」（解码器层 {layer}，交叉注意力头 {head}）",
    "step1": "第一步：写出「{tok}」这一步的 query 来自解码器；key 来自编码器的输出，每个原文词一个。"
    "用 query 与每个 key 做点积：s_j = q·k_j / √d_head（d_head = {d}，√d_head = {s:.3f}），再取 A = softmax(s)。"
    "这里没有遮蔽：所有原文词都看得到。",
    "hull_in": "z 落在 {n} 个原文词的 value 的凸包之内（线性规划找到了给出 z 的凸组合权重）："
    "交叉注意力只能混合原文提供的内容。",
    "hull_out": "z 落在 {n} 个原文词的 value 的凸包之外，L1 距离为 {dist:.2e}，超出了 float32 舍入误差能解释的范围。",
    "step3": "第三步：把交叉注意力取回的信息加到解码器的残差流上：x_new = x + Σ_h z_h W_O[h] + b_O（本头贡献的是 "
    "z W_O），这里的 x 是解码器自注意力之后的残差流。",
    "step3_post": "这是后归一化（post-norm）的块：resid_mid_cross = LayerNorm(x + attn_out)。",
    "r_x": "|x|（resid_mid，交叉注意力之前）",
    "r_attn": "|attn_out|（所有交叉注意力头 + b_O）",
    "r_sum": "|x + attn_out|（即 resid_mid_cross）",
    "r_sum_post": "|x + attn_out|",
    "r_mid": "|resid_mid_cross| = |LayerNorm(x + attn_out)|",
    "next": "{step}经过解码器全部 {n} 层后，在目标步 {pos} 上 P(下一个词) = softmax({logits})，概率最高的 {k} 个：",
    "actual": "译文在这里写的是「{tok}」：概率 {p}，排第 {r} 名。",
}

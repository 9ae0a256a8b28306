"""Lesson "llm-ioi-lens": indirect-object patching and the logit lens in a real LLM (Chinese)."""

MESSAGES = {
    "title": "真实大语言模型如何做决定：饮料给谁（激活修补），以及“Paris”何时胜出（logit lens）",
    "reads_why": "它读取的是下一个词元的 logits",
    "unnamed": "这个模型",
    "row_block": "进入层 {layer}",
    "row_output": "输出",
    "col_p": "P({answer})",
    "col_rank": "名次",
    "col_top": "第一名",
    "text": "注意力在位置之间搬运信息；下面两个实验观察 {model}（{n_layers} 层 × {n_heads} 个头）"
    "把决定答案的信息放在哪里。模型读的是英文，所以提示语都是英文。\n\n"
    "1. 间接宾语。读到“{clean}”之后，模型说“{clean_top}”（P({answer}) = {p_answer:.3f}，"
    "P({wrong}) = {p_wrong:.4f}）：也就是没有被重复的那个名字。度量是最后一个词元处的 logit 差 "
    "m = logit({answer}) − logit({wrong})，这里为 {m_clean:.2f}。污染过的提示语把两个名字对调，"
    "“{corrupted}”，那里 m = {m_corrupted:.2f}。激活修补（qkv.analysis.patch）运行污染过的提示语，"
    "但把干净运行中的某一块放回去，看这一块恢复了多少差距：份额 = (m_修补 − m_污染) / (m_干净 − m_污染)，"
    "0 表示毫无作用，1 表示全部恢复。\n\n"
    "进入每个块的残差流，每次只修补一个位置（每行一层，每列是干净提示语的一个词元）：\n"
    "{resid_table}\n"
    "{verdict_resid}\n\n"
    "每个头的 z（一次修补所有位置）：恢复最多的头是 {top_heads}。{verdict_heads}\n\n"
    "2. Logit lens。读到“{lens_text}”之后，把进入每个块的残差流送进模型自己最后的 RMSNorm 和反嵌入，"
    "就像模型在那里停下：P_L = softmax(norm(x_L) W_U)。最后一行是模型真正的输出。\n"
    "{lens_table}\n"
    "{verdict_lens}",
    "resid": "进入层 0 时，把干净运行在“{first_token}”（位置 {first_pos}）处的那一块放回去，就恢复了 "
    "{first_share:.2f} 的差距：那里不同的只有名字所在的位置。进入最后一个块时，仅最后一个词元“{last_token}”"
    "就恢复了 {last_share:.2f}；所有单块中最大的份额是 {best_share:.2f}（在“{best_token}”，进入层 {best_layer} 时）："
    "只修补残差流的一个位置，就能把答案的大部分找回来。",
    "resid_small": "两个提示语的 logit 差相距不到 1：下面的份额意义不大。",
    "moves": "从层 {cross} 起，最后一个位置恢复得比其他任何位置都多："
    "决定已经由注意力从名字所在的位置搬到了负责预测的那个词元上。",
    "no_move": "在之后的所有层里，最后一个位置并没有始终比其他位置恢复得多。",
    "heads_mover": "最强的 {head} 单独就恢复了 {head_share:.2f} 的差距。在干净运行中，它从最后一个词元看向"
    "该得到饮料的名字（{answer}：权重 {head_on_answer:.2f}），而不是重复出现的那个（{wrong}，两处合计："
    "{head_on_wrong:.2f}）；Wang 等人在 GPT-2 中追踪这条回路时，把这样的头称为“名字搬运头”。",
    "heads_repeated": "最强的 {head} 单独就恢复了 {head_share:.2f} 的差距。在干净运行中，它从最后一个词元看向"
    "重复出现的那个名字（{wrong}，两处合计：{head_on_wrong:.2f}），几乎不看另一个（{answer}：{head_on_answer:.2f}）："
    "它带到最后一个词元的，是哪个名字出现了两次，也就是答案不该是的那个。（Wang 等人在 GPT-2 中追踪这条回路时，"
    "把从最后一个词元这样去看的头称为“主语抑制头”。）",
    "lens_output": "“{final_top}”是输出的第一名（P = {final_p:.3f}），但之前没有哪一行把它排第一："
    "进入最后一个块时它排第 {before_rank}（P = {before_p:.3f}），进入层 {mid} 时排第 {mid_rank}。"
    "在这个小模型里，答案是在最后几个块里拼出来的。",
    "lens_early": "“{lens_answer}”在“{top1_row}”处成为第一名，并一直保持到输出（那里 P = {final_p:.3f}）。",
    "lens_never": "“{lens_answer}”在这里不是模型的第一名（它说的是“{final_top}”）；它在输出处的概率为 {final_p:.3f}。",
    "headline": "{model}：m = logit({answer}) − logit({wrong})，干净时 {m_clean:.2f}，名字对调后 {m_corrupted:.2f}；"
    "残差流的单个位置最多恢复 {best_share:.2f}（层 {best_layer}，“{best_token}”），头 {head} 恢复 {head_share:.2f}；"
    "logit lens：输出处“{final_top}”P {final_p:.3f}，进入最后一个块时排第 {before_rank}",
    "fig_title": "{model}：激活修补（名字对调）与 logit lens",
    "fig_layer": "层",
    "fig_head": "头",
    "fig_resid_title": "残差流：恢复的份额",
    "fig_z_title": "各头的 z：恢复的份额",
    "fig_row": "行（进入每个块；最后一行是输出）",
    "fig_p": "P({answer})",
    "fig_lens_title": "“{text}”之后的 logit lens",
}

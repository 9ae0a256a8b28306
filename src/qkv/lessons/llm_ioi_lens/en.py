"""Lesson "llm-ioi-lens": indirect-object patching and the logit lens in a real LLM (English)."""

MESSAGES = {
    "title": "A real LLM deciding: who gets the drink (activation patching), and when “Paris” wins (logit lens)",
    "reads_why": "it reads the logits of the next token",
    "unnamed": "this model",
    "row_block": "enter L{layer}",
    "row_output": "output",
    "col_p": "P({answer})",
    "col_rank": "rank",
    "col_top": "top-1",
    "text": "Attention moves information between positions; these two experiments watch where {model} "
    "({n_layers} layers × {n_heads} heads) keeps what decides its answer.\n\n"
    "1. The indirect object. After “{clean}” the model says “{clean_top}” (P({answer}) = {p_answer:.3f}, "
    "P({wrong}) = {p_wrong:.4f}): the name that was not repeated. The measure is the logit difference "
    "m = logit({answer}) − logit({wrong}) at the last token: {m_clean:.2f} here. The corrupted prompt "
    "swaps the names, “{corrupted}”, and there m = {m_corrupted:.2f}. Activation patching "
    "(qkv.analysis.patch) runs the corrupted prompt but puts back one piece of the clean run, and measures "
    "how much of the difference that piece restores: share = (m_patched − m_corrupted) / (m_clean − "
    "m_corrupted), 0 nothing, 1 all.\n\n"
    "The residual stream entering each block, one position at a time (a row per layer, a column per "
    "token of the clean prompt):\n"
    "{resid_table}\n"
    "{verdict_resid}\n\n"
    "Each head's z (all positions at once): the heads restoring most are {top_heads}. {verdict_heads}\n\n"
    "2. The logit lens. After “{lens_text}” the residual stream entering each block is read through the "
    "model's own final RMSNorm and unembedding, as if the model stopped there: P_L = softmax(norm(x_L) W_U). "
    "The last row is the model's real output.\n"
    "{lens_table}\n"
    "{verdict_lens}",
    "resid": "Entering block 0 the clean run's piece at “{first_token}” (position {first_pos}) restores "
    "{first_share:.2f} of the difference: the only positions that differ there are the names. Entering the "
    "last block, the last token “{last_token}” alone restores {last_share:.2f}; the largest share of any "
    "piece is {best_share:.2f} (at “{best_token}”, entering L{best_layer}): patching one position of "
    "the stream brings most of the answer back.",
    "resid_small": "The two prompts' logit differences are less than 1 apart: the shares below mean little.",
    "moves": "From layer {cross} on, the last position restores more than any other: the decision has been moved, "
    "by attention, from the names to the token that predicts.",
    "no_move": "The last position never restores more than every other position in all later layers.",
    "heads_mover": "The strongest, {head}, restores {head_share:.2f} of the difference by itself. In the clean "
    "run it looks from the last token at the name to be given ({answer}: weight {head_on_answer:.2f}) rather "
    "than at the repeated one ({wrong}, both places: {head_on_wrong:.2f}), the behaviour Wang et al. named a "
    "“name mover” when they traced this circuit in GPT-2.",
    "heads_repeated": "The strongest, {head}, restores {head_share:.2f} of the difference by itself. In the clean "
    "run it looks from the last token at the repeated name ({wrong}, both places: {head_on_wrong:.2f}), hardly "
    "at the other ({answer}: {head_on_answer:.2f}): what it brings to the last token is which name came twice, "
    "the one the answer must not be. (Wang et al., tracing this circuit in GPT-2, call heads that attend "
    "this way from the last token “S-inhibition” heads.)",
    "lens_output": "“{final_top}” is the output's top-1 (P = {final_p:.3f}), but no earlier row has it first: "
    "entering the last block it ranks {before_rank} (P = {before_p:.3f}), entering L{mid} {mid_rank}. In this "
    "small model the answer is assembled in the last blocks.",
    "lens_early": "“{lens_answer}” becomes top-1 at “{top1_row}” and stays first to the output "
    "(P = {final_p:.3f} there).",
    "lens_never": "“{lens_answer}” is not the model's top-1 here (it says “{final_top}”); its probability at the "
    "output is {final_p:.3f}.",
    "headline": "{model}: m = logit({answer}) − logit({wrong}) {m_clean:.2f} clean, {m_corrupted:.2f} names "
    "swapped; one residual position restores up to {best_share:.2f} (L{best_layer} “{best_token}”), head "
    "{head} {head_share:.2f}; logit lens: “{final_top}” P {final_p:.3f} at the output, rank {before_rank} "
    "entering the last block",
    "fig_title": "{model}: activation patching (names swapped) and the logit lens",
    "fig_layer": "layer",
    "fig_head": "head",
    "fig_resid_title": "residual stream: share restored",
    "fig_z_title": "heads' z: share restored",
    "fig_row": "row (entering each block; last: the output)",
    "fig_p": "P({answer})",
    "fig_lens_title": "logit lens after “{text}”",
}

"""qkv explain on a translation model: what each target word reads in the source (English)."""

MESSAGES = {
    # qkv translate's notes beside a translation (on stderr), and the line a note or error is about
    "note": "qkv: note: {text}",
    "note_line": "line {n}: ",
    "note_left_out": "the model never saw {marks}: it translated the sentence without them",
    "note_mark": "'{mark}'",
    "note_unsure": "the model is unsure of this translation: it wrote “{word}” with probability {p} (below {below}), "
    "choosing between words; read it as a guess",
    "title": "Translation model: what each target word reads in the source (cross-attention of decoder layer "
    "{layer}, head {head})",
    "source": "Source ({n} words): {text}",
    "translated": "The model's translation ({n} words; greedy: the most likely word at every step): {text}",
    "given": "The translation given ({n} words; fed to the decoder as it is, not the model's own): {text}",
    "unfinished": "The translation did not end with </s> within n_ctx = {ctx} target tokens: it is cut there.",
    "rows": "The decoder writes the translation one word at a time. Step i has read <s> and the words before word i; "
    "its query asks the source (the encoder's output: one key and one value per source word) which words to translate "
    "next. So each row below is named by the word that step writes; the last step writes </s>, the end.",
    "sharpest": "Head {head} is followed because it is the sharpest cross-attention head of decoder layer {layer}: "
    "its rows have the smallest mean entropy, {bits:.3f} bits (0 = each target word reads one source word, "
    "{max:.3f} = spread evenly over the {n} source words). --head picks another. Every head of the layer:",
    "entropies": "The mean entropy of each cross-attention head's rows in decoder layer {layer} (0 = each target word "
    "reads one source word, {max:.3f} = spread evenly over the {n} source words):",
    "c_head": "head",
    "c_entropy": "mean entropy (bits)",
    "overview": "For each target word, the source word its cross-attention weighs most: in head {head}, and with the "
    "layer's heads averaged.",
    "c_step": "step",
    "c_written": "writes",
    "c_after": "after",
    "c_most": "reads most (head {head})",
    "c_weight": "weight A",
    "c_mean": "reads most (heads averaged)",
    "per_word": "Each target word's row in full, head {head}: q·k is the raw dot product of the step's query and the "
    "source word's key, and weight A = softmax(q·k / √d_head) over the source words, so each row adds up to 1.",
    "word": "“{tok}” (step {pos}, after “{reads}”):",
    "c_source": "source word",
    "steps_title": "Step by step: target step {pos}, which writes “{tok}” after “{reads}” (decoder layer {layer}, "
    "cross-attention head {head})",
    "step1": "Step 1. The query of the step that writes “{tok}” comes from the decoder; the keys come from the "
    "encoder's output, one per source word. Each key is matched with the query: s_j = q·k_j / √d_head (d_head = {d}, "
    "√d_head = {s:.3f}), then A = softmax(s). No mask: every source word is visible.",
    "hull_in": "z lies inside the convex hull of the {n} source words' values (a linear program finds the convex "
    "weights that give z): cross-attention can only mix what the source offers.",
    "hull_out": "z lies {dist:.2e} (L1 distance) outside the convex hull of the {n} source words' values, more than "
    "float32 rounding explains.",
    "step3": "Step 3. What cross-attention found is added to the decoder's stream: x_new = x + Σ_h z_h W_O[h] + b_O "
    "(this head's part is z W_O), where x is the stream after the decoder's own self-attention.",
    "step3_post": "This is a post-norm block: resid_mid_cross = LayerNorm(x + attn_out).",
    "r_x": "|x| (resid_mid, before cross-attention)",
    "r_attn": "|attn_out| (all cross-attention heads + b_O)",
    "r_sum": "|x + attn_out| (= resid_mid_cross)",
    "r_sum_post": "|x + attn_out|",
    "r_mid": "|resid_mid_cross| = |LayerNorm(x + attn_out)|",
    "next": "{step}After all {n} decoder layers: P(next word) = softmax({logits}) at step {pos}, the top {k}:",
    "actual": "The translation has “{tok}” here: probability {p}, rank {r}.",
}

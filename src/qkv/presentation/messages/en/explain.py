"""qkv explain: what one token attends to, step by step (English)."""

MESSAGES = {
    "title_head": "Layer {layer}, head {head}: what token {pos} “{tok}” looks at ({n} tokens)",
    "title_sum": "{scope}: what token {pos} “{tok}” looks at ({n} tokens)",
    "scope_all": "Every layer and head",
    "scope_layer": "Every head of layer {layer}",
    "scope_head": "Head {head} of every layer",
    "step1": "Step 1. The query of “{tok}” is matched with the key of each token it can see: s_j = q·k_j / √d_head "
    "(d_head = {d}, √d_head = {s:.3f}), then A = softmax(s).",
    "step1_end": "The weights are ≥ 0 and add up to {sum:.6f}; “{tok}” gets the most.",
    "step2": "Step 2. The values are mixed with these weights: z = Σ_j A_j v_j. |z| = {norm:.4f}; first coordinates "
    "{first} (of {d}); |z − Σ_j A_j v_j| ≤ {err:.1e}.",
    "step2_tab": "The values that weigh most in z (A_j·|v_j| and its share of the total):",
    "step3": "Step 3. What attention found is added to the residual stream: x_new = x + Σ_h z_h W_O[h] + b_O (this "
    "head's part is z W_O).",
    "step3_post": "This is a post-norm block: resid_mid = LayerNorm(x + attn_out).",
    "r_x": "|x| (resid_pre, before attention)",
    "r_head": "|z W_O| (this head)",
    "r_attn": "|attn_out| (all heads + b_O)",
    "r_sum": "|x + attn_out| (= resid_mid)",
    "r_sum_post": "|x + attn_out|",
    "r_mid": "|resid_mid| = |LayerNorm(x + attn_out)|",
    "next": "{step}After all {n} layers: P(next token) = softmax({logits}) at position {pos}, the top {k}:",
    "step4": "Step 4. ",
    "actual": "The token that actually follows is “{tok}”: probability {p}, rank {r}.",
    "sum_note": "Entropy of a row of A in bits: 0 = all weight on one token, {max:.3f} = spread evenly over the {n} "
    "visible tokens.",
    "join": "⁀ marks a WordPiece token that continues the word before it (the vocabulary writes it ##): “em ⁀bed ⁀ding "
    "⁀s” is one word.",
    "not_finite": "Warning: {count} of the numbers below are NaN or infinite (the first: {first}). This "
    'model\'s weights have probably diverged, so a "largest" weight, a ranking or a sum among them means '
    "nothing.",
    "bidirectional": "This model has no causal mask: every token sees every other one, those after it included, so "
    "each row lists all the tokens.",
    "no_next": "No next-token prediction: this model is an encoder, which outputs one vector per token (its meaning in "
    "context), not a probability for the token that comes next.",
    "crop": "The text has {n} tokens, more than n_ctx = {ctx}: the first {drop} are dropped.",
    "space": "␣ is a space: spaces are tokens too, and the model attends to them like any other.",
    "largest": "◀ largest",
    "c_pos": "pos",
    "c_tok": "token",
    "c_weight": "weight A",
    "c_share": "share",
    "c_rank": "rank",
    "c_prob": "probability",
    "c_qty": "quantity",
    "c_norm": "norm",
    "c_layer": "layer",
    "c_head": "head",
    "c_most": "attends most to",
    "c_ent": "entropy (bits)",
}

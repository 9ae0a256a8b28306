"""Lesson "residual": residual connections and LayerNorm in a deep stack (English)."""

MESSAGES = {
    "title": "Residual connections and LayerNorm: why a deep stack trains at all",
    "label_both": "residual + LayerNorm",
    "label_residual": "residual only",
    "label_norm": "LayerNorm only",
    "label_neither": "neither",
    "headline": "{n_layers} layers, {steps} steps: {parts} (word frequencies only: {unigram_loss:.2f})",
    "headline_part": "{label} val loss {val:.2f}",
    "row": "- {label}: {early:.2f} at step {early_step}, final train loss {train:.2f}, validation loss {val:.2f}. "
    "At initialisation: RMS leaving the last block {rms}, mean cosine similarity there between positions "
    "holding different tokens {cos:.3f}, gradient norm of the first / last block {grad_first} / {grad_last}",
    "best": "The lowest validation loss is reached by '{label}' ({val:.2f}).",
    "stuck": "'{label}' ends hardly better than guessing from word frequencies ({unigram_loss:.2f}): {why}.",
    "collapsed": "every position leaves the last block pointing almost the same way (cosine {cos:.3f}): "
    "with no shortcut, attention averages the tokens together layer after layer until what told them apart "
    "is gone, and the output no longer depends on the input",
    "collapsed_big_grad": "{collapsed} (the gradient itself is not small: {grad} at the first block)",
    "collapsed_again": "the positions collapse onto one direction in the same way (cosine {cos:.3f})",
    "vanished": "the gradient reaching the first block is {grad}, so the lower layers cannot learn",
    "no_cause": "the numbers at initialisation show no obvious cause",
    "above": "above",
    "below": "below",
    "layernorm_helps": "With residuals but no LayerNorm the model learns, but ends {gap:.2f} nats {direction} the full "
    "block ({early_loss_residual:.2f} against {early_loss_both:.2f} at step {early_step}). At "
    "initialisation its gradient is 1/{grad_ratio_residual:.0f} of the full model's: with no LayerNorm to "
    "bring vectors back to unit scale, the output layer sees tiny vectors and learning starts slowly.",
    "text": "A Transformer block does not replace x by f(x); it adds a correction to it: x ← x + f(LN(x)). That plain "
    "addition does two things. Going forward, the input reaches later layers unchanged, so each layer only has to "
    "learn what is still missing. Going backward, the gradient travels the same shortcut straight to the lower "
    "layers instead of through every layer's matrices. LayerNorm rescales each token's vector to mean 0 and "
    "variance 1 (then a learned scale), so every layer sees inputs of a steady size.\n\n"
    "The experiment: four models of {n_layers} layers and d_model = {d_model}, the same seed, the same "
    "built-in Chinese corpus ({tokens:,} tokens) and the same {steps} batches; they differ only in having "
    "residual connections and LayerNorm or not. For reference, a unigram model that ignores context and guesses "
    "from word frequencies reaches a validation loss of {unigram_loss:.2f} (a uniform guess over the "
    "{vocab} words: {uniform_loss:.2f}). The numbers at initialisation are computed in float64 on the "
    "first batch.\n"
    "{rows}\n\n"
    "{verdicts}",
    "unigram": "word frequencies only (unigram)",
    "fig_title": "{n_layers} layers, d_model = {d_model}: same data, seed and steps",
}

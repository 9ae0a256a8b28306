"""Lesson "next-token": next-token probabilities and temperature (English)."""

MESSAGES = {
    "title": "Next-token probabilities: softmax(h·W_out + b) and temperature",
    "headline": "top after “{prompt}”: {top}; entropy {entropies}; {greedy_at}",
    "entropy_at": "T={T:g}: {H:.2f} bits",
    "greedy_same": "greedy pick {greedy} at every T",
    "greedy_differs": "greedy picks {picks}",
    "temperature": "  T = {T:g}: {top}; entropy {H:.3f} bits",
    "rising": "The higher the temperature, the larger the entropy and the flatter the distribution; a low temperature "
    "piles the probability onto the first choice.",
    "not_rising": "This time the entropy did not rise with T.",
    "same": "Dividing by a positive number keeps the logits in the same order, so greedy decoding (take the most "
    "likely) picks “{greedy}” at every temperature; T only changes what random sampling does.",
    "changed": "The greedy pick changed with T, which should not happen.",
    "text": "After the last layer, the hidden vector h at the final position is multiplied by W_out and the "
    "bias b is added: one score (logit) per token of the vocabulary, which softmax turns into probabilities. After "
    "“{prompt}” (its last token is “{last}”), the {k} most likely next tokens:\n"
    "  rank  token  probability\n{rows}\n"
    "Together they hold {top_sum:.4f}; the entropy of the whole distribution is {entropy_bits:.3f} bits "
    "({max_entropy_bits:.2f} bits would mean an even spread over every token).\n\n"
    "Sampling may first divide the logits by a temperature T:\n{temps}\n{verdict}",
    "bar": "T = {T:g} (entropy {H:.2f} bits)",
    "y": "probability of the next token",
    "fig_title": "The top {k} next tokens at three temperatures",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "it turns the last position's vector into next-token probabilities, and an encoder has no such head",
}

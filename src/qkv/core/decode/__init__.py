"""From a model to text: sampling with the KV cache (sample), greedy and beam search for an
encoder-decoder (beam), and translation (translate)."""

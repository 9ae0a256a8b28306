"""Text in, ids and batches out: the tokenizers (tokenizers/), the built-in corpus and the HSK sentences
(corpus/), and the train/val split with its batches (batches)."""

"""Token shards, in English (the same keys as zh/shards.py): `qkv tokenize`, which writes a corpus larger
than memory as token ids on disk (qkv.core.text.prepare), and `qkv train --data`, which reads them
(qkv.core.text.shards, qkv.core.train.lm)."""

MESSAGES = {
    # progress bars and the line `qkv tokenize` ends with
    "bar_vocab": "learning the vocabulary",
    "bar_encode": "tokenizing",
    "wrote": "wrote {tokens} tokens ({dtype}, {shards} shards, tokenizer {kind} with {vocab} tokens) to {out} "
    "in {seconds} s ({rate} MB/s)",
    # refusals of qkv tokenize
    "no_txt": "{path} holds no .txt file",
    "empty": "{path} holds no text to tokenize (only whitespace, or nothing)",
    "tokenizer_kind": "unknown tokenizer {kind}: give char, word, bpe, a qkv run or a pretrained model",
    "char_vocab_size": "--vocab-size does not apply to a char tokenizer: its vocabulary is the text's characters",
    "vocab_size_range": "--vocab-size for a {kind} tokenizer must be from {low} to {high}, got {got}",
    "too_many_words": "the text has more than {most} distinct words: use --tokenizer bpe",
    "ref_vocab_size": "--vocab-size is for a new tokenizer; {ref} brings its own",
    "out_taken": "{path} is not empty: give a new folder for the token data",
    "shard_tokens": "tokens per shard must be at least 1, got {got}",
    # refusals of a data folder (qkv train --data)
    "missing": "data folder {path} does not exist",
    "not_data": "{path} is not a token data folder (no index.json): write one with qkv tokenize",
    "bad_index": "{path} cannot be read: {reason}",
    "shard_missing": "shard {path} is missing",
    "not_a_shard": "{path} is not a qkv token shard (its header is wrong)",
    "version": "{path} is a token shard of version {version}; this qkv reads version {expected}",
    "id_size": "{path} says its ids take {size} bytes each; a shard holds 2 or 4",
    "truncated": "{path} is cut short or too long: its header says {count} ids ({expected} bytes), the file has {size}",
    "shard_differs": "{path} does not match {index}: tokenize the text again",
    "id_beyond": "{path} holds the id {id}, beyond the model's {n} rows: tokenize the text again",
    "data_and_text": "--data and --text are two sources of training text: give one",
    "data_tokenizer": "--data brings its own tokenizer (the data folder's tokenizer.json): leave out {flags}",
}

"""What qkv says about the tokenizers it reads and the texts they cannot spell, in English (the same
keys as zh/tokenizer.py). {chars} lists characters as Python writes them, each with its code point."""

MESSAGES = {
    # ------------------------------------------------------------------ a text the vocabulary cannot spell
    "unspellable": "the tokenizer's vocabulary cannot spell {n} character(s) of the text: {chars}; "
    "its ids would leave them out",
    "unspellable_warning": "warning: the tokenizer's vocabulary cannot spell {n} character(s) of the text: {chars}; "
    "the model does not see them (they are left out of its tokens)",
    # ------------------------------------------------------------------ a tokenizer.json qkv cannot read exactly
    "model_unsupported": "its tokenizer is a {model} model: qkv reads BPE, Unigram and WordPiece tokenizers",
    "layout_unknown": "its {model} tokenizer writes neither bytes as GPT-2's byte-level characters nor spaces as "
    "SentencePiece's ▁: qkv cannot tell each token's text",
    "token_unreadable": "its tokenizer is laid out as {layout}, but a token is not written that way ({error})",
    # ------------------------------------------------------------------ a word typed as one token
    "chosen": "{token} (id {id})",
}

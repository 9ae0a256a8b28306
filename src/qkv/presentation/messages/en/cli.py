"""What the command line says, in English (the same keys as zh/cli.py): its usage errors (argparse's
own, said from here), what the system refuses (errno), the CLI's own refusals, what it prints beside
a result (progress, "wrote ..."), and the report of `qkv trace --check`.

The usage errors keep argparse's English words, and the other sentences the words qkv always printed:
tests and scripts match them.
"""

MESSAGES = {
    # ------------------------------------------------------------------ usage errors (argparse)
    "usage": "qkv: error: {message} (see {prog} --help)",
    "argument": "argument {name}: {message}",
    "invalid_value": "invalid {type} value: {value}",
    "type_int": "int",
    "type_float": "float",
    "type_seed": "int",
    "invalid_choice": "invalid choice: {value} (choose from {choices})",
    "required": "the following arguments are required: {names}",
    "unrecognized": "unrecognized arguments: {args}",
    "ambiguous": "ambiguous option: {option} could match {matches}",
    "expected_one": "expected one argument",
    "expected_at_most_one": "expected at most one argument",
    "expected_at_least_one": "expected at least one argument",
    "explicit_ignored": "ignored explicit argument {value}",
    "seed_range": "must be between 0 and {max} (2**63 - 1); got {got}",
    # ------------------------------------------------------------------ what the system refuses (errno)
    "os_at": "{error}: {path}",
    "os_not_found": "No such file or directory",
    "os_permission": "Permission denied",
    "os_is_directory": "Is a directory",
    "os_not_directory": "Not a directory",
    "os_no_space": "No space left on device",
    "os_read_only": "Read-only file system",
    "os_exists": "File exists",
    "os_not_empty": "Directory not empty",
    "os_name_too_long": "File name too long",
    "os_address_in_use": "Address already in use",
    "os_address_not_available": "Cannot assign requested address",
    # ------------------------------------------------------------------ the CLI's own refusals
    "nproc_under_torchrun": "--nproc starts the training processes itself; under torchrun, leave it out",
    "flag_for_gpt": (
        "{flags} is for a GPT; --task translate reads sentence pairs (the built-in corpus, or --pairs FILE.tsv) "
        "and makes its word list from them"
    ),
    "flags_for_gpt": (
        "{flags} are for a GPT; --task translate reads sentence pairs (the built-in corpus, or --pairs FILE.tsv) "
        "and makes its word list from them"
    ),
    "flag_for_translate": "{flags} is for --task translate",
    "flags_for_translate": "{flags} are for --task translate",
    "translate_on_cpu": "--task translate trains on the CPU in float32 (--device and --precision are for a GPT)",
    "samples_range": "--samples must be between 1 and 1024; got {got}",
    "prompt_empty": "the prompt is empty: give at least one character",
    "max_len": "--max-len must be at least 1; got {got}",
    "not_translation": (
        "{ckpt} is not a translation model ({title}): qkv translate needs an encoder-decoder, e.g. one trained "
        "by qkv train --task translate"
    ),
    "n_range": "-n must be between 1 and 1000000, got {got}",
    "corpus_seed_range": "--seed must be between 0 and {max}, got {got}",
    "probes_alone": "--probes prints the probes of a phenomenon; it does not go with --pairs or --heldout",
    "pairs_lang": "--pairs prints both languages and their alignment; --lang does not apply",
    "port_range": "port must be between 0 and 65535, got {port}",
    # ------------------------------------------------------------------ what it prints beside a result
    "interrupted": "interrupted",
    "rank_error": "qkv: error (rank {rank}): {message}",
    "wrote": "wrote {path}",
    "wrote_page": "wrote {path} ({size}): open it in a browser, no server needed",
    "wrote_hf": (
        "wrote {path}: transformers' AutoModelForCausalLM.from_pretrained and AutoTokenizer.from_pretrained load it"
    ),
    "cropped_prompt": "warning: the prompt has {n} tokens; only the last {n_ctx} (n_ctx) are used",
    "cropped_text": "warning: the text has {n} tokens; only the last {n_ctx} (n_ctx) are traced",
    "past_context": (
        "note: {prompt} prompt + {new} new tokens pass n_ctx = {n_ctx}: from new token {first} on, each is "
        "picked from the last {n_ctx} tokens only"
    ),
    "sample": "--- sample {i} of {n} ---",
    "trained": (
        "trained to step {step} in {seconds} s ({rate} tokens/s): train loss {train_loss}{val}; checkpoint in {out}"
    ),
    "trained_val": ", val loss {val_loss}",
    # ------------------------------------------------------------------ the report of qkv trace --check
    "check_head": "{passed}/{total} checks pass, {mode}",
    "check_half": ", at the model's half precision (deviations up to {tol} pass)",
    "check_training": "training mode (dropout active)",
    "check_evaluation": "evaluation mode",
    "check_weights_ok": "ok   the model's weights are finite",
    "check_weights_bad": "FAIL {note}",
    "check_ok": "ok  ",
    "check_fail": "FAIL",
    "check_item": "{mark} {where} {name}: worst deviation {worst} over {checked}{extra}",
    "check_failing": "; {n} failing, e.g. {first}",
    "check_layer": "layer {layer}",
    "check_site_layer": "{site} layer {layer}",
    "check_site_encoder": "encoder",
    "check_site_decoder": "decoder",
    "check_site_decoder_cross": "decoder cross-attention",
    "check_rows_sum": "rows sum to 1",
    "check_non_negative": "weights are non-negative",
    "check_masked": "masked weights are 0",
    "check_padding_keys": "padding keys get weight 0",
    "check_source_padding": "source padding gets weight 0",
    "check_hull": "z lies in the convex hull of the values",
    "check_hull_source": "z lies in the convex hull of the source's values",
    "check_heads_sum": "heads' results + b_O = {out}",
    "check_norm_scale": "{ln}'s scale = {formula}",
    "check_norm_out": "{ln}'s out = {formula}",
    "probe": "{prompt} [{expected}]  not: {others}",  # qkv corpus --probes: a probe, its answer, the wrong ones
    # ------------------------------------------------------------------ qkv info
    "info_gpt": "{ref}: step {step}, {params} parameters, {kind} tokenizer with {n} tokens",
    "info_warning": "  warning: {note}",
    "info_source": "source",
    "info_target": "target",
    "info_translation": (
        "{ref}: translation model {source} -> {target} (encoder-decoder), step {step}, {params} parameters"
    ),
    "info_stacks": (
        "  encoder: {encoder} blocks of self-attention over the whole source; decoder: {decoder} blocks of causal "
        "self-attention, then cross-attention to the encoder's output; {heads} heads each"
    ),
    "info_mt_tokenizer": (
        "  {kind} tokenizer with {n} tokens (<pad> <s> </s> and the words of both languages), {shared}"
    ),
    "info_shared": "one embedding table for both languages",
    "info_separate": "separate source and target embeddings",
    "info_trained_on": "  trained on {pairs} pairs from {where}; {val} validation pairs{held}{left}",
    "info_builtin": "the built-in corpus",
    "info_builtin_hsk": "the built-in corpus and the HSK training sentences",
    "info_held": " (held-out frames)",
    "info_held_hsk": " (held-out frames and HSK sentences)",
    "info_left_out": " ({n} more left out: they have words no training pair has)",
    "info_pretrained": "{ref}: pretrained {name}, {kind}, {params} parameters{size}",
    "info_tokenizer": ", {kind} tokenizer with {n} tokens",
    "info_size": ", {size} of weights",
    "info_lm_head": "{title}, a {design} with an LM head",
    "info_no_lm_head": "{title} (no LM head: it cannot generate)",
    "info_design_decoder": "decoder",
    "info_design_encoder": "encoder",
    "info_design_encoder_decoder": "encoder-decoder",
    "info_from": "  from {path} (model_type {arch})",
    # qkv serve: its first line (its URL; browser_util.py and the tests read it), its warning, its refusal
    "serve_ready": "qkv explorer: {url}  (model: {name}; Ctrl-C stops)",
    "serve_open": "warning: listening on {host}, not only on this computer: others on the network can use it",
    "serve_port_taken": (
        "cannot listen on {host}:{port}: another program is using that port; stop"
        " it, or choose another port with --port (e.g. --port {other})"
    ),
    "serve_cannot_listen": "cannot listen on {host}:{port}: {why}",
}

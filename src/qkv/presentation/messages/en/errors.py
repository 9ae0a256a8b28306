"""What qkv refuses, and why, in English: the refusals of qkv.core.io.refusal (the same keys as zh/errors.py).

Each message is one line, said by the server's error answers ({"error": ..., "status": ...}) and by
the CLI (`qkv: error: ...`). A {field} is filled in by the code that refuses: numbers, token
strings (already quoted, as Python's repr writes them), file paths and field names, written as they
are in both languages; or a phrase of this file (unit_*, what_*, noun_*, family_*), said in the
language of the sentence around it. A list field is joined by "comma".

These are the sentences qkv said before the catalogue held them: tests and scripts match them, so
an English message changes only when it is wrong.
"""

MESSAGES = {
    # ------------------------------------------------------------------ how messages are put together
    "comma": ", ",  # between the items of a list field
    "and_more": "{items} and {n} more",
    "none": "none",
    "in": "{where}: {error}",  # an error found inside one part of what was given (q, K, V)
    "cli_prefix": "qkv: error: {message}",  # how the command line writes an error
    "cli_internal": "qkv: internal error: {kind}: {detail} (set QKV_DEBUG=1 for the traceback)",
    "one_of": "{name} must be one of {choices}, got {got}",
    # ------------------------------------------------------------------ model families and their parts
    "family_gpt": "a GPT",
    "family_bert": "an encoder",
    "family_seq2seq": "a translation model (encoder-decoder)",
    "stack_encoder": "encoder",
    "stack_decoder": "decoder",
    # ------------------------------------------------------------------ layers, heads, positions
    "what_layer": "layer",
    "what_head": "head",
    "what_token": "token",
    "unit_tokens": "the text has {n} tokens",
    "unit_layers": "the model has {n} layers",
    "unit_stack_layers": "the {stack} has {n} layers",
    "unit_heads": "each layer has {n} heads",
    "unit_steps": "the translation has {n} target steps",
    "index_type": "{what} must be an integer; got {value}",
    "index_range": "{what} {value} is out of range: {unit} (use 0..{last} or {neg}..-1)",
    "head_pair": "a head is a pair [layer, head], got {pair}",
    "top_type": "top must be an integer of at least 1, got {top}",
    "top_range": "top must be 1..{max}, got {top}",
    # ------------------------------------------------------------------ texts and tokens
    "text_type": "the text must be a string, not {type}",
    "text_empty": "the text is empty: type at least one token",
    "text_no_tokens": "the text gives no tokens: type at least one token",
    "text_too_long": "the text has {T} tokens; this model reads at most n_ctx = {n_ctx}",
    "text_or_ids": "give either a text or token ids",
    "ids_empty": "no token ids: give at least one",
    "ids_range": "token id {id} is out of range: the vocabulary has ids 0..{last}",
    "ids_too_long": "{T} tokens; this model reads at most n_ctx = {n_ctx}",
    "token_id_range": "token id {id} is out of range (vocabulary has {n} tokens)",
    "view_too_large": (
        "{T} tokens make {cells:,} attention weights over {L} layers x {H} heads, more than a page can show "
        "({max:,}): use at most {most} tokens"
    ),
    "unknown_one": "{n} {noun} is not in the tokenizer's vocabulary: {listed}",
    "unknown_many": "{n} {noun} are not in the tokenizer's vocabulary: {listed}",
    "noun_token": "token",
    "noun_tokens": "tokens",
    "noun_character": "character",
    "noun_characters": "characters",
    "noun_word": "word",
    "noun_words": "words",
    "nearest_words": "{piece} (nearest known words: {words})",
    "no_near": "none shares a character",
    "cut_words": "{piece} (known words once cut: {cut})",
    "fit_empty": "the text is empty: give at least one token",
    "fit_only_special": "the text gives no tokens but special ones: give at least one word",
    "fit_too_long": (
        "the text has {T} tokens; this model reads at most n_ctx = {n_ctx}, all at once (it has no causal "
        "mask), so it cannot be given only the last ones"
    ),
    "explain_empty": "the text is empty: give at least one token to explain",
    # ------------------------------------------------------------------ what each view refuses
    "word_only_special": "the word {word} gives no tokens but special ones: type a word",
    "word_not_in_sentence": "the word {word} is not in the sentence {text}",
    "ablate_family": "switching heads off is for a GPT or an encoder, not {title}",
    "ablate_no_next_token": (
        "switching heads off is shown on the next-token probabilities of a GPT; this model has none"
    ),
    "ablate_too_many": "{n} pairs given; the model has {heads} heads: list each head once",
    "origin_family": "the origin of q, k and v is shown for a GPT or an encoder, not {title}",
    "transform_family": "the transform view reads a GPT's or an encoder's self-attention; this is {title}",
    "transform_panel_family": "the transform panel reads a GPT's or an encoder's self-attention; this is {title}",
    "head_matrix": "layer {layer} head {head}'s {name}",
    "cloud_words": "this vocabulary has too few of the cloud's words as single tokens (found: {found})",
    "vocab_range": "limit must be 1..{max} and offset at least 0, got {limit} and {offset}",
    "compare_translation": (
        "a translation model is not compared across two sentences here: its page shows the attention from "
        "the translation to the source"
    ),
    "side_translation": (
        "a translation model is shown across its two sentences: the page's side-by-side panel is for a "
        "model that reads one text"
    ),
    "view_translation_ids": "a translation model reads a source text, not token ids",
    # ------------------------------------------------------------------ what a translation model reads
    "mt_the_sentence": "the sentence to translate",
    "mt_the_source": "the source",
    "mt_the_target": "the target",
    "mt_role_source": "source",
    "mt_role_target": "target",
    "mt_empty": "{what} is empty",
    "mt_special": "the sentence contains the special token {token} (<pad>, <s> and </s> are the model's own)",
    "mt_unknown": "the sentence has words this model never saw (it knows {n} words)",
    "mt_unknown_words": "the sentence has words this model never saw: {words} (it knows {n} words)",
    "mt_no_chinese": "this model's {role} language is Chinese, and the sentence has no Chinese characters",
    "mt_latin": "this model's {role} language is Chinese, and the sentence has words in Latin letters: {words}",
    "mt_chinese_in_english": "this model's {role} language is English, and the sentence contains Chinese characters",
    "mt_too_long": "the sentence has {n} words; this model reads at most {n_ctx}",
    # ------------------------------------------------------------------ translation models
    "not_translation_model": "this is not a translation model: it is {title}",
    "not_translation_tokenizer": "this model's tokenizer has no <pad> <s> </s>: it is not a translation tokenizer",
    "source_type": "the source must be a string, not {type}",
    "target_type": "the target must be a string, not {type}",
    "source_too_long": "the source has {n} words; this model reads at most n_ctx = {n_ctx}",
    "target_too_long": "the target has {n} words; with <s> this model reads at most n_ctx = {n_ctx}",
    "translation_too_large": (
        "{n_src} source and {n_tgt} target tokens make {cells:,} attention weights, more than a page can show "
        "({max:,}): use a shorter sentence"
    ),
    # ------------------------------------------------------------------ generating
    "temperature_range": "temperature must be between 0 and 100; got {got}",
    "top_k_range": "top_k must be >= 1; got {got}",
    "top_p_range": "top_p must be in (0, 1]; got {got}",
    "max_new_tokens_range": "max_new_tokens must be between 0 and 1000000; got {got}",
    "no_next_token": (
        "this model is {title}: it outputs one vector per token, not a next-token distribution, so it cannot "
        "generate text (qkv explain and qkv serve show what it computes)"
    ),
    "translates_not_generates": (
        "this model translates: it writes a target sentence for a source sentence rather than continuing a "
        "prompt (use qkv translate)"
    ),
    "does_not_generate": "this model is {title}: it does not continue a prompt",
    "prompt_empty": "the prompt is empty: give at least one token",
    "text_fills_context": "the text already fills n_ctx = {n_ctx} tokens: shorten it to generate more",
    # ------------------------------------------------------------------ numbers that are not finite
    "logits": "the next-token logits",
    "not_finite": "NaN or infinite values in {what}",
    "not_finite_because": "NaN or infinite values in {what}; {why}",
    "weights_not_finite": "the model's weights are not finite: {bad:,} NaN or infinite values, the first in {name}",
    "weights_not_finite_one": "the model's weights are not finite: {bad:,} NaN or infinite value, the first in {name}",
    # ------------------------------------------------------------------ numbers as people type them (qkv attend)
    "number_type": "expected text, got {type}",
    "number_empty": "empty number",
    "number_too_long": "number too long ({n} characters): {text}...",
    "number_unreadable": "cannot read {text} as a number",
    "number_because": "cannot read {text} as a number: {why}",
    "number_too_large": "the value is too large",
    "number_not_real": "the value is not a finite real number",
    "number_too_deep": "the brackets are nested too deeply",
    "number_domain": "math domain error",
    "number_zero_division": "division by zero",
    "number_name": "unknown name {name} (allowed: {allowed})",
    "number_call": "calling {name} is not allowed (allowed: {functions}, positional arguments)",
    "number_arguments": "{name}() takes {count} argument(s)",
    "number_empty_entry": "empty entry {j} in {text}",
    "number_empty_matrix": "empty matrix: give rows separated by ';' and entries by ','",
    "number_empty_row": "row {i} is empty in {text}",
    "number_in_row": "row {i} ({row}): {error}",
    "number_ragged": "row {i} ({row}) has {n} entries, row 1 has {first}",
    "attend_one_vector": "{name} is one vector: separate its entries with ',' (no ';')",
    "attend_ragged": "{name} has rows of different lengths or entries that are not numbers",
    "attend_empty_vector": "{name} is empty: give at least one entry",
    "attend_empty_matrix": "{name} is empty: give at least one row",
    "attend_not_vector": "{name} must be a vector, got shape {shape}",
    "attend_not_matrix": "{name} must be a matrix (one row per key), got shape {shape}",
    "attend_not_finite": "{name} contains a number that is not finite",
    "attend_long_q": "q has {n:,} entries; attend takes at most {max:,} per vector",
    "attend_long_value": "each value has {n:,} entries; attend takes at most {max:,} per vector",
    "attend_too_many": "q, K and V hold {n:,} numbers; attend derives at most {max:,} step by step",
    "attend_term": "q·k{j}: the term {a}·{b}",
    "attend_sum": "q·k{j}: the sum",
    "attend_overflow": "{what} overflows: it passes ±{max}, the largest float (use smaller numbers)",
    "attend_columns": "K has {columns} columns but q has {entries} entries: each key needs as many as q",
    "attend_rows": "V has {v} rows but K has {k}: give one value per key",
    "attend_dk": "d_k must be a positive number, got {d_k}",
    # ------------------------------------------------------------------ training: its text, settings, direction
    "text_file_missing": "text file {path} does not exist",
    "pairs_file_missing": "pairs file {path} does not exist",
    "not_a_file": "{path} is not a file",
    "train_text_empty": "the training text is empty",
    "resume_string": "{out} was trained on a string; pass the same text again to resume",
    "resume_direction": "{out} translates {was}; it cannot be resumed as {now}",
    "pairs_none_left": "pairs file {path} holds {n} pair(s): none left to train on after the val split",
    "n_sentences_range": "n_sentences must be at most 1000000; got {got}",
    "n_sentences_with_file": "n_sentences and everyday are for the built-in corpus; a pairs file gives its own pairs",
    "train_processes_gpt": "only a GPT (qkv train without --task translate) trains on several processes",
    "train_until": "--until must be between {low} and {high}; got {got}",
    "train_d_vocab": "d_vocab={d_vocab} is smaller than the tokenizer's {n} tokens",
    "train_would_replace": "{out} already holds a checkpoint; use --resume to continue it or --force to replace it",
    "train_dir_foreign": (
        '{path} is not empty and holds no qkv checkpoint (no config.json with "format": {format}); '
        "qkv writes only into an empty directory or its own checkpoint"
    ),
    "train_how_lm": "qkv train without --task translate",
    "train_how_translate": "qkv train --task translate",
    "resume_model_settings": "model settings cannot change on resume: {names}",
    "resume_no_state": "{out} holds no training state to resume from",
    "resume_done": (
        "{out} is already trained to step {step} of steps={steps}; add --set steps=N with N > {step} to train further"
    ),
    "resume_other_task": "{out} holds {title}; resume it with {how}",
    "resume_flags": (
        "--resume continues {out} with the settings it was trained with: {flags} cannot be combined with it "
        "(training settings can change with --set)"
    ),
    "text_file_empty": "text file {path} is empty",
    "text_file_not_utf8": "text file {path} is not UTF-8 (byte {byte}, line {line}: {bytes})",
    "text_too_short": "the text has {n} tokens, but training needs at least n_ctx + 1 = {need}",
    "text_split_short": (
        "the text has {n} tokens: split {train}/{val} (val_fraction {fraction}), each part needs at least "
        "n_ctx + 1 = {need}; use a longer text, a smaller n_ctx, or val_fraction=0"
    ),
    "pairs_file_not_utf8": "pairs file {path} is not UTF-8 (byte {byte})",
    "pairs_file_line": "{path}, line {line}: expected 'source<TAB>target', both non-empty",
    "pairs_file_empty": "pairs file {path} holds no pairs",
    "pairs_special": "the sentences contain {token}, which is a special token of the translation tokenizer",
    "pairs_no_words": "the sentence pairs hold no words",
    "pair_empty_side": "pair {n} has an empty side",
    "pair_too_long": "pair {n} is longer ({source} and {target} tokens) than n_ctx={n_ctx}; raise n_ctx",
    "set_not_pair": "--set expects key=value; got {pair}",
    "set_unknown": "--set {key}: unknown setting",
    "set_unknown_close": "--set {key}: unknown setting (did you mean {close}?)",
    "set_not_bool": "--set {key}={text}: expected true or false",
    "set_not_int": "--set {key}={text}: expected an integer",
    "set_not_number": "--set {key}={text}: expected a number",
    "preset_unknown": "unknown preset {preset}; choose one of {choices}",
    "direction_builtin": "the built-in corpus translates {one} or {other}; got direction {got}",
    "direction_form": "direction must be SOURCE-TARGET, two different language codes like zh-en; got {got}",
    "activation_unknown": "unknown activation name(s): {names}; see qkv.trace_names(cfg)",
    # ------------------------------------------------------------------ why a file is not JSON (io/json_problem.py)
    "json_at": "{reason}: line {line} column {column} (char {char})",
    "json_not_utf8": "it is not UTF-8 (byte {byte})",
    "json_too_deep": "its brackets are nested too deeply",
    "json_syntax": "a syntax error",
    "json_expecting_value": "Expecting value",
    "json_expecting_name": "Expecting property name enclosed in double quotes",
    "json_expecting_colon": "Expecting ':' delimiter",
    "json_expecting_comma": "Expecting ',' delimiter",
    "json_unterminated": "Unterminated string starting at",
    "json_control": "Invalid control character at",
    "json_escape": "Invalid \\escape",
    "json_unicode_escape": "Invalid \\uXXXX escape",
    "json_extra": "Extra data",
    "json_comma_object": "Illegal trailing comma before end of object",
    "json_comma_array": "Illegal trailing comma before end of array",
    # ------------------------------------------------------------------ checkpoints and files
    "ckpt_no_dir": "checkpoint directory {path} does not exist",
    "ckpt_is_file": "{path} is a file, not a checkpoint directory",
    "ckpt_file_missing": "{path} is missing: not a qkv checkpoint ({what})",
    "ckpt_no_config": "no config.json",
    "ckpt_no_state": "no state.json: no finished checkpoint was written",
    "ckpt_not_json": "{path} is not valid JSON: {error}",
    "ckpt_not_object": "{path} must hold a JSON object",
    "ckpt_field_missing": "{path} is malformed: field {field} is missing",
    "ckpt_field_bad": "{path} is malformed: field {field} = {value}",
    "ckpt_not_config": "{path} is not a qkv checkpoint config",
    "ckpt_version": "{path}: checkpoint version {version} is not supported (this qkv reads {reads})",
    "ckpt_no_model": "{path}: field 'model' is missing",
    "ckpt_no_tokenizer": "cannot load tokenizer: {path} does not exist",
    "ckpt_incomplete": "{path} is missing: the checkpoint is incomplete",
    "ckpt_not_safetensors": "{path} is not a valid safetensors file: {error}",
    "ckpt_meta": (
        "the model's weights are on the meta device (shapes without values): there is nothing to save; load or "
        "initialise the weights first"
    ),
    "ckpt_not_written": "{why}; a checkpoint of them would not load, so nothing was written to {out}",
    "ckpt_other_run": "{path} comes from another run (run {run}; state.json names run {state_run})",
    "ckpt_state_run": "{path} comes from another run than {config} (run {run} vs {config_run})",
    "ckpt_step": "{path} holds step {step} but state.json says step {state_step}",
    "ckpt_tensors": "{path} does not match config.json: missing {missing}, unexpected {unexpected}",
    "ckpt_shape": "{path}: tensor {name} has shape {shape} but config.json implies {want}",
    "ckpt_dtype": "{path}: tensor {name} has dtype {dtype}, not a floating-point type",
    "ckpt_tensor_not_finite": "{path}: tensor {name} holds NaN or infinite values",
    "ckpt_param_groups": "{path}: its metadata holds no valid param_groups (JSON)",
    "ckpt_optimizer_name": "{path}: tensor {name} is not named state.<index>.<key>",
    "ckpt_tokenizer_kind": "{path} holds a {kind} tokenizer but {config} says {says}",
    "ckpt_tokenizer_sha": (
        "{path} is not the tokenizer this model was trained with (its sha256 differs from {config}'s)"
    ),
    "ckpt_vocab": "{path}: the tokenizer has {n} tokens but the model only {d_vocab} (d_vocab)",
    # ------------------------------------------------------------------ figures and training logs
    "figure_cannot_write": "cannot write a figure to {path}: the file name must end in .png or .svg",
    "log_missing": "{path} is missing: no training log there",
    "log_not_utf8": "{path} is not a training log: not UTF-8 text (byte {byte})",
    "log_bad_line": "{path}, line {line}: not a training log line ({why})",
    "log_no_field": "{field}",
    "log_bad_value": "a field holds a value of the wrong kind",
    "log_no_steps": "{path} holds no training steps",
    "log_none_given": "loss_curves needs at least one run directory or log.jsonl",
    "log_labels": "{labels} labels for {runs} runs",
    # ------------------------------------------------------------------ the command line
    "cpu_only": (
        "qkv {command} computes on the CPU, where its explanations read every weight and activation; "
        "--device {device} is for qkv train and qkv generate"
    ),
    "figure_suffix": "figure file must end in .png or .svg, got {path}",
    "export_lang": "lang must be zh or en, got {got}",
    "export_dir": "{path} is a directory: give a file name for the page, e.g. {example}",
    # ------------------------------------------------------------------ devices
    "device_type": "device must be one of {choices}; got {got}",
    "device_no_mps": (
        "device mps is not available here (no Apple GPU, or this torch was built without MPS); use --device cpu or auto"
    ),
    "device_no_cuda": (
        "device {name} is not available here (no CUDA GPU, or this torch was built without CUDA); "
        "use --device cpu or auto"
    ),
    "device_no_gpu": "device {name} is not available here: this machine has {n} CUDA GPU(s)",
    "device_unknown": "unknown device {name}; choose one of {choices} (or cuda:N)",
    # decoding, threads, figures and folders (beam.py, threads.py, apps/figure.py, lessons)
    "decode_not_translation": "this model is not an encoder-decoder: only a translation model translates",
    "decode_max_len": "max_len must be between 1 and n_ctx ({n_ctx}), an integer; got {got}",
    "decode_beam": "the beam size must be between 1 and 64, an integer; got {got}",
    "threads_nproc": "the number of processes must be a whole number >= 1; got {got}",
    "threads_count": "{name} must be a whole number of threads >= 1; got {got}",
    "figure_no_text": "the text is empty: give --text with at least one token",
    "not_a_folder": "{path} is a file, not a folder: give a folder for the {what}",
    "folder_lesson": "lesson's figures",
    "folder_report": "report",
}

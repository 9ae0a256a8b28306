"""What qkv's results show in a notebook (qkv.apps.displays): a title line, what the numbers mean, table
headings (English)."""

MESSAGES = {
    # ------------------------------------------------------------------ shared
    "more_rows": "… and {n} more rows, not shown here.",
    "c_name": "name",
    "c_layers": "layers",
    "c_shape": "shape",
    "c_dtype": "dtype",
    "c_bytes": "bytes",
    "c_field": "field",
    "c_value": "value",
    "c_layer": "layer",
    "c_head": "head",
    "c_pos": "position",
    "c_token": "token",
    # ------------------------------------------------------------------ a trace
    "trace_line": "Trace: {n} activations of one forward pass, {B} × {T} tokens, {bytes} in all",
    "trace_model": (
        "Model: {arch}, {n_layers} layers, d_model {d_model}, {n_heads} heads of d_head {d_head}, "
        "a vocabulary of {d_vocab} tokens."
    ),
    "trace_tokens": "Input: {B} sequence(s) of {T} token ids: {ids}",
    "trace_target": "The decoder read {T} target token ids: {ids}",
    "trace_training": "Recorded in training mode: dropout was active, so some checks may not hold.",
    "trace_shapes": "{n} different shapes",
    "trace_read": (
        "Each row is one name recorded in every layer listed ({L} stands for the layer), with the shape "
        'of one activation and the bytes of all of them. Read one with trace["blocks.0.attn.hook_pattern"] '
        'or trace["pattern", 0]; qkv.check(trace) checks them.'
    ),
    # ------------------------------------------------------------------ a check report
    "check_means": (
        "Each line is an invariant that must hold if these numbers are the real computation (attention rows "
        "sum to 1, z lies in the values' hull, the residual stream adds up), with the largest relative "
        "deviation found; up to {tol} passes."
    ),
    "check_failed": "{n} check(s) failed: they are listed first.",
    # ------------------------------------------------------------------ a model
    "model_line": "Model: {arch}, {n_layers} layers, d_model {d_model}, {parameters} parameters",
    "model_means": "The model's shape: the sizes every tensor of a trace is made of.",
    "model_from": "Loaded from: {where}",
    "model_modules": "print(model) lists its modules; qkv.check(model.run_with_trace(ids)[1]) checks its computation.",
    "c_parameters": "parameters",
    "c_on_disk": "weights on disk",
    # ------------------------------------------------------------------ a training run
    "training_line": "Training: stopped at step {step}, validation loss {loss}",
    "training_means": (
        "The loss is the mean cross-entropy of the next token, in nats (lower is better); the checkpoint is in {out}."
    ),
    "c_train_loss": "training loss",
    "c_val_loss": "validation loss",
    "c_speed": "tokens per second",
    "c_seconds": "seconds",
    # ------------------------------------------------------------------ a lesson
    "lesson_line": "Lesson: {title}: {headline}",
    "lesson_no_figures": (
        'No figures were drawn: qkv.lessons.run("{name}", out="folder") draws them, and they show here.'
    ),
    "lesson_draw_failed": "Its figures could not be drawn: {why}",
    "figure_named": "Figure (not shown here): {path}",
    # ------------------------------------------------------------------ patching
    "patching_line": (
        "Patching at {site}: metric {clean} in the clean run, {corrupted} in the corrupted one; {shape} pieces"
    ),
    "patching_means": (
        "Each piece of the clean run was put, one at a time, into the corrupted run, and the metric measured "
        "again. Its share = (patched − corrupted) / (clean − corrupted): 1 means that piece carries the whole "
        "difference between the texts, 0 none of it."
    ),
    "patching_metric": "The metric: logit({answer}) − logit({wrong}) at position {pos} ({tok}).",
    "patching_gap": (
        "Caution: the clean and corrupted runs differ by only {gap}, so the shares divide by a small "
        "number and mean little."
    ),
    "patching_top": "The {n} pieces (of {total}) that move the metric most.",
    "c_metric": "metric",
    "c_share": "share",
    # ------------------------------------------------------------------ the logit lens
    "lens_line": "Logit lens at position {pos} ({tok}): the model's final guess {final} has p {p}",
    "lens_means": (
        "Row L reads the residual stream entering block L through the model's final norm and unembedding: "
        "what the model would predict if it stopped there. The last row is its real output; the last "
        "column follows the probability of its final guess {final} layer by layer."
    ),
    "c_row": "row",
    "c_stream": "stream",
    "c_top": "top {k} (p)",
    "c_p_final": "p({tok})",
    # ------------------------------------------------------------------ logit attribution
    "attribution_line": "Logit attribution: logit({tok}) at position {pos} = {logit}",
    "attribution_means": (
        "The logit is a sum of {n} terms, one per piece that writes into the residual stream (the embeddings, "
        "each head, each MLP, the biases), each read through the final norm ({norm}) frozen at its scale: "
        "they add up to {total}, the logit is {logit}."
    ),
    "attribution_top": "The {n} largest terms (of {total}) by size.",
    "c_term": "term",
    # ------------------------------------------------------------------ head scores
    "heads_line": "Head detector: {n_layers} layers × {n_heads} heads, measured on {B} sequences of {T} tokens",
    "heads_means": (
        "Each score is the share of a head's attention that goes where that kind of head looks, averaged over "
        "random repeated token sequences; an even head scores the baseline, and the ratio says how many times "
        "more the strongest head puts there."
    ),
    "c_kind": "kind",
    "c_measures": "what it measures",
    "c_best": "strongest head",
    "c_score": "score",
    "c_even": "even head",
    "c_ratio": "ratio",
    # ------------------------------------------------------------------ compare
    "compare_line": "Compare: {word} in two sentences; cosine {cosine} at {stage}",
    "compare_sentence": "Sentence {label}: {text} (the word at position {pos})",
    "compare_means": (
        "The cosine of the word's two vectors at each stage: 1 the same direction, 0 unrelated. Near 1 the "
        "two contexts have not changed the word yet; a drop shows where its context reaches it. The last "
        "column first takes away the mean vector of each position, so the position alone does not count."
    ),
    "compare_no_control": "Too few reference sentences reach this position: no position-controlled cosine.",
    "c_stage": "stage",
    "c_cosine": "cosine",
    "c_cosine_pos": "cosine, position mean removed",
    # ------------------------------------------------------------------ origin
    "origin_line": "Origin of the scores of layer {layer} head {head} at position {pos} ({tok})",
    "origin_means": (
        "Each key's score is q · k, the sum of the products q[c] k[c] over the d_head = {d_head} dimensions, "
        "divided by {scale}; q and k are made from {x_name}. The softmax of the scaled scores is the "
        "attention row."
    ),
    "origin_top": "The {n} keys (of {total}) with the largest scores.",
    "c_dot": "q · k",
    "c_scaled": "scaled",
    # ------------------------------------------------------------------ ablate
    "ablate_line": "Heads off: {heads}; at most {moved} of the next-token probability moved",
    "ablate_means": (
        "The chosen heads' z was multiplied by 0 before W_O. At each position: the most likely next token "
        "before, the most likely after, and the probability that moved (half the total change)."
    ),
    "c_before": "before",
    "c_after": "after",
    "c_moved": "moved",
}

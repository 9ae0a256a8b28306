"""What training says while it runs (qkv.core.train.loop), in English: the progress bar's figures and the
line each evaluation writes (the same keys as zh/train.py). The line a finished run ends with is the
command line's (cli.trained)."""

MESSAGES = {
    "unit": "step",  # the progress bar counts steps: 20/20 [00:01, 18.75step/s]
    "progress": "loss {loss}{val} {rate} tok/s",  # the figures beside the bar, after each step
    "progress_val": " val {val_loss}",
    "evaluated": "step {step}: train loss {train_loss}{val}",  # after each evaluation (and checkpoint)
    "evaluated_val": ", val loss {val_loss}",
    # refusals of a training run (qkv.core.train): the data a task trains on, and what the run cannot do
    "data_text": "text",
    "data_pairs": "set of sentence pairs",
    "data_differs": "the {what} differs from the one {out} was trained on; resume with the same {what}",
    "task_lm": "qkv train without --task translate",
    "task_translate": "qkv train --task translate",
    "trained_by": "train it with {command}",
    "not_trained": "qkv loads it but does not train it",
    "arch_task": "{task} trains {family}, arch={arch}; got arch={got}, {got_family}: {how}",
    "vocab_too_small": (
        "the vocabulary is too small for the text ({n} tokens kept; {unknown}): "
        "give a larger vocab_size, or none to keep every word"
    ),
    "count_pairs": "pairs",
    "count_val_pairs": "val pairs",
    "pairs_count": (
        "{out} was trained with {was} {what}, now there are {now}: resume with the same pairs and val_fraction"
    ),
}

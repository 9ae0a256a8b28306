"""What training says while it runs (qkv.core.train.loop), in English: the progress bar's figures and the
line each evaluation writes (the same keys as zh/train.py). The line a finished run ends with is the
command line's (cli.trained)."""

MESSAGES = {
    "unit": "step",  # the progress bar counts steps: 20/20 [00:01, 18.75step/s]
    "progress": "loss {loss}{val} {rate} tok/s",  # the figures beside the bar, after each step
    "progress_val": " val {val_loss}",
    "evaluated": "step {step}: train loss {train_loss}{val}",  # after each evaluation (and checkpoint)
    "evaluated_val": ", val loss {val_loss}",
}

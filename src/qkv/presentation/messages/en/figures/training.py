"""Loss curves of training runs (qkv figure loss) (English)."""

MESSAGES = {
    "batch": "{run}: batch loss",
    "batch_mean": "{run}: batch loss (mean of {window})",
    "train": "{run}: train loss (eval)",
    "val": "{run}: validation loss",
    "step": "training step",
    "loss": "cross-entropy loss (nats)",
    "title": "Training loss",
}

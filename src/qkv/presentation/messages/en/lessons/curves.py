"""The loss curves of the lessons that train their own models (English)."""

MESSAGES = {
    "x": "training step",
    "y": "loss (nats); squares: final validation loss",
}

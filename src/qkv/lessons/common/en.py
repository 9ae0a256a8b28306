"""What several lessons say alike (English): how sentences and parts of a line are joined, the axes of the
loss curves of the lessons that train their own models, and the report of all lessons (qkv demo:
index.html, report.md)."""

MESSAGES = {
    "then": "{first} {second}",
    "sep": "{first}; {second}",
    "comma": "{first}, {second}",
    "curves_x": "training step",
    "curves_y": "loss (nats); squares: final validation loss",
    "report_title": "qkv lessons",
    "report_intro": "Each section is an experiment run just now; every number was measured by it.",
}

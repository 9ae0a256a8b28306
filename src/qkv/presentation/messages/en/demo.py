"""What `qkv demo` prints while it trains, samples and runs the lessons (qkv.apps.demo), in English (the
same keys as zh/demo.py)."""

MESSAGES = {
    "bundled": "Using the bundled model ({ckpt}).",
    "training": (
        "Training a small GPT on the built-in corpus (Chinese and English, word tokens, as the bundled model)..."
    ),
    "trained": "val loss {val_loss} after {steps} steps ({seconds} s, {rate} tokens/s); checkpoint in {ckpt}",
    "samples": "Samples (temperature 0.5): the same word 苹果 continues differently after 吃了 and 投资了",
    "lessons": "Running every lesson ({language}); figures and the report go to {report}",
    "report": "Report: {index} (and report.md beside it)",
    "serve": "To watch this model's attention in the browser: {serve}  (then open http://127.0.0.1:8000/)",
}

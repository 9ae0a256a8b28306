"""Train the model that ships inside qkv (src/qkv/assets/model) with qkv's own training loop.

    python scripts/train_bundled.py            # about two minutes on 2 CPU cores

The built-in corpus (qkv.corpus.default_text: Chinese lines each followed by their English
counterpart, words separated by spaces), a word tokenizer without re-segmentation, the `baby`
shape. Everything is seeded, so a rerun on the same machine gives the same weights. The optimizer
state is left out: the bundled model is for reading and explaining, not for resuming.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bundle import bundle  # scripts/bundle.py

from qkv.core.corpus import default_text
from qkv.core.tokenizers import train_tokenizer
from qkv.core.train import train

OUT = Path(__file__).resolve().parents[1] / "src" / "qkv" / "assets" / "model"
SETTINGS = ["steps=1500", "batch_size=16", "eval_interval=500", "dropout=0", "seed=1337"]


def main() -> None:
    text = default_text()
    tokenizer = train_tokenizer("word", text, segment="none")
    with tempfile.TemporaryDirectory() as tmp:
        result = train(text, out=tmp, tokenizer=tokenizer, preset="baby", overrides=SETTINGS, force=True)
        size = bundle(Path(tmp), OUT)
    print(f"bundled model: val loss {result.val_loss:.4f}, {size:.1f} MiB in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()

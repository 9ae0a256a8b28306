"""Train the translation model that ships inside qkv (src/qkv/assets/translate) with qkv's own loop.

    time python scripts/train_bundled_translate.py     # about 1.5 minutes on one CPU core

Chinese to English on the built-in corpus: DEFAULT_SENTENCES training pairs of
corpus.pairs("train", seed=0), the held-out frames (corpus.pairs("heldout")) for the validation
loss; the `translate` preset (an encoder and a decoder of two blocks each, d_model 128, one
embedding table for both languages, tied to the unembedding; 600 steps of 32 pairs). Everything is
seeded and runs on one thread, so a rerun on the same machine gives the same weights. The optimizer
state is left out: the bundled model is for translating and explaining, not for resuming.
scripts/bleu_translate.py measures it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from bundle import bundle  # scripts/bundle.py

from qkv.core.train_translate import train_translation

OUT = Path(__file__).resolve().parents[1] / "src" / "qkv" / "assets" / "translate"
SETTINGS = ["seed=1337"]


def main() -> None:
    # one thread: on two cores that other programs also use, two threads that wait for each other were over ten
    # times slower here (985 s against 73 s for the same run); one thread also makes the run deterministic
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        result = train_translation(out=tmp, direction="zh-en", preset="translate", overrides=SETTINGS, force=True)
        size = bundle(Path(tmp), OUT)
    print(
        f"bundled translation model: train loss {result.train_loss:.4f}, val loss {result.val_loss:.4f}, "
        f"{result.seconds:.0f} s of training, {size:.1f} MiB in {OUT}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()

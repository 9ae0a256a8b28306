"""Train the model that ships inside qkv (src/qkv/assets/model) with qkv's own training loop.

    OMP_NUM_THREADS=1 python scripts/train_bundled.py        # a few minutes on a 2-core CPU
    python scripts/train_bundled.py /tmp/candidate           # train into another directory instead

The built-in corpus (qkv.corpus.default_text: Chinese lines each followed by their English
counterpart, words separated by spaces), the `baby` shape, and the learner's word tokenizer: no
whitespace tokens, ASCII capitals read as lowercase, and a fallback under the words (the corpus's
characters, then 256 UTF-8 byte tokens), so whatever a learner types is read. The fallback tokens
are trained by spelling a seeded 5% of the words as characters and 2% of the single characters as
bytes in the training ids (qkv.core.tokenizers.spelling); the saved tokenizer does not spell.
Everything is seeded, so a rerun on the same machine gives the same weights. The optimizer state
is left out: the bundled model is for reading and explaining, not for resuming. The new model
replaces the old one in one rename, so a reader never sees half a model.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from bundle import bundle  # scripts/bundle.py

from qkv.core.bundled import learner_tokenizer
from qkv.core.corpus import default_text
from qkv.core.train import train

OUT = Path(__file__).resolve().parents[1] / "src" / "qkv" / "assets" / "model"
SETTINGS = ["steps=1500", "batch_size=16", "eval_interval=500", "dropout=0", "seed=1337"]
SPELL_SEED = 0


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    start = time.perf_counter()
    text = default_text()
    tokenizer = learner_tokenizer(text, spell_seed=SPELL_SEED)  # spells a few words while training
    with tempfile.TemporaryDirectory() as tmp:
        result = train(text, out=tmp, tokenizer=tokenizer, preset="baby", overrides=SETTINGS, force=True)
        new, old = out.with_name(out.name + ".new"), out.with_name(out.name + ".old")
        shutil.rmtree(new, ignore_errors=True)
        size = bundle(Path(tmp), new)
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    new.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    print(
        f"bundled model: {tokenizer.n_words} words + {tokenizer.n_chars} characters + 256 bytes = "
        f"{tokenizer.vocab_size} tokens; val loss {result.val_loss:.4f}; {size:.1f} MiB in {out}; "
        f"{time.perf_counter() - start:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()

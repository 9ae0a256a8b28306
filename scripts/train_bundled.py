"""Train the model that ships inside qkv (src/qkv/assets/model) with qkv's own training loop.

    python scripts/train_bundled.py            # about two minutes on 2 CPU cores

The built-in corpus (qkv.corpus.default_text: Chinese lines each followed by their English
counterpart, words separated by spaces), a word tokenizer without re-segmentation, the `baby`
shape. Everything is seeded, so a rerun on the same machine gives the same weights. The optimizer
state is left out: the bundled model is for reading and explaining, not for resuming.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

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
        state = json.loads((Path(tmp) / "state.json").read_text(encoding="utf-8"))
        state.pop("optimizer", None)
        if OUT.exists():
            shutil.rmtree(OUT)
        OUT.mkdir(parents=True)
        for name in ("config.json", "tokenizer.json", "log.jsonl", state["model"]):
            shutil.copy(Path(tmp) / name, OUT / name)
        (OUT / "state.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in OUT.iterdir()) / 2**20
    print(f"bundled model: val loss {result.val_loss:.4f}, {size:.1f} MiB in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()

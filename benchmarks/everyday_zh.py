"""How a GPT reads everyday Chinese it never trained on, beside a peer (by default, none).

    python benchmarks/everyday_zh.py                               # the bundled model
    git archive e4c351c src/qkv/assets/model | tar -x -C /tmp/old  # the bundled model before issue 22
    python benchmarks/everyday_zh.py --peer /tmp/old/src/qkv/assets/model

Two sets of sentences, as a learner types them (no spaces between words): the held-out part of the
HSK sentences (qkv.core.text.corpus.hsk.split("heldout"), which no bundled model trains on), and 30
sentences a teacher might type (benchmarks/data/teacher_zh.txt: names, numbers, quotes,
questions; written for this benchmark, never trained on). For each: the share of tokens that are
UTF-8 bytes, and of characters read one by one (their word is not in the vocabulary), and the
model's loss on each sentence after a line break, in nats per token and per character (the
per-character figure compares models whose tokenizers differ).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch
import torch.nn.functional as F

import qkv
from qkv.analysis.coverage import reading
from qkv.core.hub.bundled import default_ckpt
from qkv.core.text.corpus import hsk

TEACHER = Path(__file__).resolve().parent / "data" / "teacher_zh.txt"


@torch.inference_mode()
def loss(model, tokenizer, texts: list[str]) -> tuple[float, float]:
    """(nats per token, nats per character) of each text and the line break after it, each read after a line break."""
    nl = tokenizer.encode("\n")
    total, tokens, chars = 0.0, 0, 0
    for text in texts:
        ids = nl + tokenizer.encode(text) + nl
        ids = ids[-model.cfg.n_ctx - 1 :]
        x = torch.tensor([ids])  # (1, T+1)
        logits = model(x[:, :-1])  # (1, T, d_vocab)
        total += F.cross_entropy(logits[0], x[0, 1:], reduction="sum").item()
        tokens += len(ids) - 1
        chars += len(text) + 1
    return total / tokens, total / chars


def report(name: str, ckpt, sets: dict[str, list[str]]) -> None:
    model, tokenizer = qkv.load(ckpt)
    print(f"{name}: {ckpt} ({tokenizer.vocab_size} tokens)")
    for label, texts in sets.items():
        r = reading(tokenizer, texts)
        per_token, per_char = loss(model, tokenizer, texts)
        unknown = "".join(c for c, _ in r["unknown"][:12])
        print(
            f"  {label}: {r['texts']} sentences, {r['characters']} characters, {r['tokens']} tokens; "
            f"bytes {100 * r['shares']['byte']:.2f}%, characters one by one {100 * r['shares']['char']:.2f}%; "
            f"loss {per_token:.3f} nats/token, {per_char:.3f} nats/character (perplexity/char {math.exp(per_char):.1f})"
            + (f"; read as bytes: {unknown}" if unknown else "")
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", help="checkpoint directory (default: the bundled model)")
    p.add_argument("--peer", help="a second checkpoint to measure on the same sentences")
    args = p.parse_args()
    torch.set_num_threads(1)
    sets = {
        "HSK held-out": [s.chinese for s in hsk.split("heldout")],
        "teacher's 30": [line for line in TEACHER.read_text(encoding="utf-8").splitlines() if line.strip()],
    }
    report("model", args.ckpt or default_ckpt(), sets)
    if args.peer:
        report("peer", args.peer, sets)


if __name__ == "__main__":
    main()

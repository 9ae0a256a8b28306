"""Held-out BLEU of a translation model: corpus.pairs("heldout"), greedy and beam search.

    python scripts/bleu_translate.py                  # the bundled model, greedy and beam 4
    python scripts/bleu_translate.py --ckpt DIR --beam 1 4 8

sacrebleu's corpus_bleu over the words joined by spaces, tokenize="none": the corpus is already split
into words (Chinese too), so BLEU counts the same words the model reads and writes. Also printed: how
many sentences come out exactly right.
"""

from __future__ import annotations

import argparse

import sacrebleu
import torch

from qkv.core import checkpoint
from qkv.core.bundled import default_translate_ckpt
from qkv.core.corpus import pairs
from qkv.core.search import beam_search, greedy
from qkv.core.train_translate import direction_of
from qkv.core.translation import Example, collate, decode_target, encode_words


def translations(model, tok, sources: list[tuple[str, ...]], beam: int) -> list[str]:
    if beam > 1:
        return [
            decode_target(tok, beam_search(model, torch.tensor([encode_words(tok, s)]), beam)[0].ids) for s in sources
        ]
    out = []
    for i in range(0, len(sources), 64):  # greedy decodes a padded batch at once
        src, src_mask, _, _ = collate([Example(tuple(encode_words(tok, s)), (1,), (2,)) for s in sources[i : i + 64]])
        out += [decode_target(tok, h.ids) for h in greedy(model, src, src_mask)]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", help="checkpoint directory (default: the bundled translation model)")
    p.add_argument("--beam", type=int, nargs="+", default=[1, 4], help="beam sizes (1: greedy; default 1 4)")
    args = p.parse_args()
    torch.set_num_threads(1)  # two threads on two shared cores can be many times slower
    ckpt = checkpoint.load_checkpoint(args.ckpt or default_translate_ckpt())
    source, target = direction_of(ckpt.config) or ("zh", "en")
    held = pairs("heldout")
    sources = [p.side(source) for p in held]
    refs = [" ".join(p.side(target)) for p in held]
    for beam in args.beam:
        hyps = translations(ckpt.model, ckpt.tokenizer, sources, beam)
        bleu = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", force=True)
        exact = sum(h == r for h, r in zip(hyps, refs))
        print(
            f"{source}->{target} held-out ({len(held)} pairs), {'greedy' if beam == 1 else f'beam {beam}'}: "
            f"BLEU {bleu.score:.2f}, {exact}/{len(held)} exactly right"
        )


if __name__ == "__main__":
    main()

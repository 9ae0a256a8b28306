"""Held-out BLEU and chrF of a zh→en translation model, beside its baselines, on sentences it never trained on.

    python scripts/bleu_translate.py                                  # the bundled model, greedy and beam 4
    git archive e4c351c src/qkv/assets/translate | tar -x -C /tmp/old # the bundled model before issue 22
    python scripts/bleu_translate.py --peer /tmp/old/src/qkv/assets/translate --beam 1

Two held-out sets:
- the HSK sentences' held-out part (qkv.core.text.corpus.hsk.split("heldout")), typed as a learner types
  them (no spaces), against their English translations. sacrebleu's corpus BLEU (13a tokenization)
  and chrF, both case-insensitive (the model writes lower case). A sentence a model refuses (a word
  it never saw) counts as an empty translation, and the refusals are counted. Beside the model:
  the peer (e.g. the bundled model of before), and a word-by-word translation made from the
  dataset's own glosses (each word's first sense that is a translation, "to " and brackets
  dropped, nothing for a gloss that is only a cross-reference; the marks as ASCII).
- the built-in corpus's held-out frames (corpus.pairs("heldout")): BLEU over the corpus's words
  (tokenize="none"), and how many come out exactly right.
Also printed: how many translations of each set the model marks unsure (confidence below
qkv.core.decode.translate.UNSURE_BELOW).
"""

from __future__ import annotations

import argparse
import re

import sacrebleu
import torch

from qkv.core.decode.translate import translated
from qkv.core.hub.bundled import default_translate_ckpt
from qkv.core.text.corpus import hsk, pairs
from qkv.core.train import checkpoint

MARKS = {"，": ",", "。": ".", "！": "!", "？": "?", "、": ",", "：": ":", "；": ";"}


# senses of a dictionary gloss that are not a translation: "surname Nian", "used in 家伙", "variant of 个"
NOT_A_SENSE = re.compile(
    r"^(surname|used in|variant of|see |old variant|abbr\.|classifier|\(bound form\)$)|[\u4e00-\u9fff]"
)


def gloss(word: str, g: str | None) -> str:
    """A word's first gloss that is a translation, as a word-by-word translation writes it: 老师 -> teacher;
    nothing when no sense of the gloss is one (家: "used in 傢伙|家伙[jia1 huo5] and ...")."""
    if g is None:
        return MARKS.get(word, word)
    first = next((s for s in map(str.strip, g.split(";")) if not NOT_A_SENSE.search(s)), "")
    first = re.sub(r"\([^)]*\)|\[[^\]]*\]", "", first).strip()
    return re.sub(r"^to ", "", first)


def word_by_word(s) -> str:
    return " ".join(filter(None, (gloss(w, g) for w, g in zip(s.words, s.glosses))))


def run(model, tok, sources: list[str], beam: int) -> tuple[list[str], int, int]:
    """(translations, refused, unsure): a refused sentence is an empty translation."""
    out, refused, unsure = [], 0, 0
    for text in sources:
        try:
            t = translated(model, tok, text, beam)
        except ValueError:
            out.append("")
            refused += 1
            continue
        out.append(t.text)
        unsure += t.unsure
    return out, refused, unsure


def scores(hyps: list[str], refs: list[str]) -> str:
    bleu = sacrebleu.corpus_bleu(hyps, [refs], lowercase=True)
    chrf = sacrebleu.CHRF(lowercase=True).corpus_score(hyps, [refs])
    return f"BLEU {bleu.score:.2f}, chrF {chrf.score:.2f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", help="checkpoint directory (default: the bundled translation model)")
    p.add_argument("--peer", help="a second zh→en checkpoint measured on the same sentences")
    p.add_argument("--beam", type=int, nargs="+", default=[1, 4], help="beam sizes (1: greedy; default 1 4)")
    args = p.parse_args()
    torch.set_num_threads(1)  # two threads on two shared cores can be many times slower
    held = hsk.split("heldout")
    refs = [s.english for s in held]
    sources = [s.chinese for s in held]
    builtin = pairs("heldout")
    glossed = scores([word_by_word(s) for s in held], refs)
    print(f"HSK held-out, {len(held)} sentences; word by word from the glosses: {glossed}")
    models = [("model", args.ckpt or default_translate_ckpt())] + ([("peer", args.peer)] if args.peer else [])
    for name, path in models:
        ckpt = checkpoint.load_checkpoint(path)
        model, tok = ckpt.model, ckpt.tokenizer
        for beam in args.beam:
            how = "greedy" if beam == 1 else f"beam {beam}"
            hyps, refused, unsure = run(model, tok, sources, beam)
            print(
                f"  {name} ({path}), {how}: {scores(hyps, refs)}; {refused} refused (a word it never saw), "
                f"{unsure} of the {len(held) - refused} translated marked unsure"
            )
            hyps, refused, unsure = run(model, tok, [p.text("zh") for p in builtin], beam)
            words = [" ".join(p.en) for p in builtin]
            bleu = sacrebleu.corpus_bleu(hyps, [words], tokenize="none", force=True)
            exact = sum(h == r for h, r in zip(hyps, words))
            print(
                f"    built-in held-out ({len(builtin)} pairs): BLEU {bleu.score:.2f}, {exact} exactly right, "
                f"{refused} refused, {unsure} marked unsure"
            )


if __name__ == "__main__":
    main()

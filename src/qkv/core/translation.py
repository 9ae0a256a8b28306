"""The translation task: sentence pairs in, padded batches out, and text in, translation out.

The tokenizer is one word list for both languages (qkv's corpus writes words separated by single
spaces), starting with three special tokens: <pad> fills short sentences up to the batch's length,
<s> starts every target, </s> ends it. The decoder reads <s> w1 .. wn and learns to predict
w1 .. wn </s>: at each position, the next target word.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

from .files import TEXT_LIMIT, read_bytes, without_bom
from .search import BOS, EOS, beam_search, greedy
from .tokenizers import UnknownTokenError, WordTokenizer
from .tokenizers.words import _CJK_RE

_LATIN_RE = re.compile(r"[A-Za-z]+")

SPECIALS = ("<pad>", "<s>", "</s>")
PAD = 0
LANGS = ("zh", "en")


@dataclass(frozen=True)
class Example:
    """One pair as token ids: src (no specials), tgt_in = <s> + words, tgt_out = words + </s>."""

    src: tuple[int, ...]
    tgt_in: tuple[int, ...]
    tgt_out: tuple[int, ...]


def build_tokenizer(sentences) -> WordTokenizer:
    """The special tokens, then every word of `sentences` (lists of words), most frequent first."""
    counts = Counter(w for words in sentences for w in words)
    clash = [s for s in SPECIALS if s in counts]
    if clash:
        raise ValueError(f"the sentences contain {clash[0]!r}, which is a special token of the translation tokenizer")
    words = sorted(counts, key=lambda w: (-counts[w], w))
    if not words:
        raise ValueError("the sentence pairs hold no words")
    return WordTokenizer(list(SPECIALS) + words, whitespace=False)


def is_translation_tokenizer(tok) -> bool:
    return isinstance(tok, WordTokenizer) and tuple(tok.tokens[: len(SPECIALS)]) == SPECIALS


def encode_words(tok: WordTokenizer, words) -> list[int]:
    """Ids of a sentence given as words; an unknown word raises a one-line error naming it."""
    unknown = [w for w in dict.fromkeys(words) if w not in tok.ids]
    if unknown:
        raise UnknownTokenError(
            f"{len(unknown)} word(s) not in the vocabulary: {', '.join(repr(w) for w in unknown[:10])}"
        )
    return [tok.ids[w] for w in words]


def encode_source(tok: WordTokenizer, text: str) -> list[int]:
    """A source sentence as ids. Text the vocabulary does not know as written is tried lower-cased and
    re-spaced into known words (我投资了苹果， -> 我 投资了 苹果 ，) before a one-line error names what is unknown."""
    if not text.strip():
        raise ValueError("the sentence to translate is empty")
    special = [w for w in text.split() if w in SPECIALS]
    if special:
        raise ValueError(
            f"the sentence contains the special token {special[0]} (<pad>, <s> and </s> are the model's own)"
        )
    tries = [text, text.lower()]
    for t in list(tries):
        spaced = tok.respace(t)
        if spaced:
            tries.append(spaced)
    for t in tries:
        try:
            ids = tok.encode(t.strip())
        except UnknownTokenError:
            continue
        return [i for i in ids if not tok.tokens[i].isspace()]
    unknown = [w for w in dict.fromkeys(tok.split(text.lower())) if w not in tok.ids and not w.isspace()]
    hint = f": {', '.join(repr(w) for w in unknown[:10])}" if unknown else ""
    raise ValueError(
        f"the sentence has words this model never saw{hint} (it knows {tok.vocab_size - len(SPECIALS)} words)"
    )


def make_examples(tok: WordTokenizer, pairs, n_ctx: int) -> list[Example]:
    """(source words, target words) pairs as Examples; a pair too long for n_ctx raises ValueError."""
    out = []
    for n, (src, tgt) in enumerate(pairs):
        s, t = encode_words(tok, src), encode_words(tok, tgt)
        if not s or not t:
            raise ValueError(f"pair {n + 1} has an empty side")
        if len(s) > n_ctx or len(t) + 1 > n_ctx:
            raise ValueError(
                f"pair {n + 1} is longer ({len(s)} and {len(t) + 1} tokens) than n_ctx={n_ctx}; raise n_ctx"
            )
        out.append(Example(tuple(s), (BOS, *t), (*t, EOS)))
    return out


def collate(examples: list[Example]):
    """Pad a list of examples into tensors: src (B, S), src_mask (B, S) 1 at real tokens, tgt_in and tgt_out (B, T)."""
    S, T = max(len(e.src) for e in examples), max(len(e.tgt_in) for e in examples)
    src = torch.full((len(examples), S), PAD, dtype=torch.long)
    tgt_in = torch.full((len(examples), T), PAD, dtype=torch.long)
    tgt_out = torch.full((len(examples), T), PAD, dtype=torch.long)
    for b, e in enumerate(examples):
        src[b, : len(e.src)] = torch.tensor(e.src)
        tgt_in[b, : len(e.tgt_in)] = torch.tensor(e.tgt_in)
        tgt_out[b, : len(e.tgt_out)] = torch.tensor(e.tgt_out)
    return src, (src != PAD).long(), tgt_in, tgt_out


def read_pairs(path) -> list[tuple[list[str], list[str]]]:
    """A UTF-8 file of one pair per line, source TAB target, words separated by spaces."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"pairs file {p} does not exist")
    if p.is_dir():
        raise ValueError(f"{p} is not a file")
    try:
        lines = without_bom(read_bytes(p, TEXT_LIMIT, "pairs file").decode("utf-8")).splitlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"pairs file {p} is not UTF-8 (byte {e.start})") from None
    pairs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].split() or not parts[1].split():
            raise ValueError(f"{p}, line {n}: expected 'source<TAB>target', both non-empty")
        pairs.append((parts[0].split(), parts[1].split()))
    if not pairs:
        raise ValueError(f"pairs file {p} holds no pairs")
    return pairs


def decode_target(tok: WordTokenizer, ids) -> str:
    """The words of a decoded target, without </s>."""
    return " ".join(tok.tokens[i] for i in ids if i >= len(SPECIALS))


def check_language(text: str, lang: str | None, role: str = "source") -> None:
    """A one-line error when `text` is plainly not in `lang` (zh or en; other codes and None pass), the
    model's source (or target) language: the word list holds both sides, so without this a zh→en model
    would "translate" English words into nonsense. Chinese: no word of Latin letters; English: no Chinese."""
    if not text.strip():
        raise ValueError("the sentence to translate is empty")
    if lang == "zh":
        latin = _LATIN_RE.findall(" ".join(w for w in text.split() if w not in SPECIALS))  # encode_source names those
        if not _CJK_RE.search(text):
            raise ValueError(f"this model's {role} language is Chinese, and the sentence has no Chinese characters")
        if latin:
            raise ValueError(
                f"this model's {role} language is Chinese, and the sentence has words in Latin letters: "
                f"{', '.join(repr(w) for w in dict.fromkeys(latin))}"
            )
    if lang == "en" and _CJK_RE.search(text):
        raise ValueError(f"this model's {role} language is English, and the sentence contains Chinese characters")


def translate(model, tok: WordTokenizer, text: str, beam: int = 1, max_len: int | None = None) -> str:
    """The model's translation of `text`: greedy (beam=1) or the best of a beam search. A text plainly not in
    the model's source language (model.languages, recorded by its checkpoint) is refused in one line."""
    check_language(text, (getattr(model, "languages", None) or (None,))[0])
    src = torch.tensor([encode_source(tok, text)])  # (1, S)
    if src.shape[1] > model.cfg.n_ctx:
        raise ValueError(f"the sentence has {src.shape[1]} words; this model reads at most {model.cfg.n_ctx}")
    best = greedy(model, src, max_len=max_len)[0] if beam == 1 else beam_search(model, src, beam, max_len)[0]
    return decode_target(tok, best.ids)

"""The translation task: sentence pairs in, padded batches out, and text in, translation out.

The tokenizer is one word list for both languages (qkv's corpus writes words separated by single
spaces), starting with three special tokens: <pad> fills short sentences up to the batch's length,
<s> starts every target, </s> ends it. The decoder reads <s> w1 .. wn and learns to predict
w1 .. wn </s>: at each position, the next target word.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

from qkv.core.decode.beam import BOS, EOS, beam_search, greedy
from qkv.core.io.files import TEXT_LIMIT, read_bytes, without_bom
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.text.tokenizers import UnknownTokenError, WordTokenizer
from qkv.core.text.tokenizers.words import _CJK_RE

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
        raise Refusal.of("errors.pairs_special", token=repr(clash[0]))
    words = sorted(counts, key=lambda w: (-counts[w], w))
    if not words:
        raise Refusal.of("errors.pairs_no_words")
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


def encode_source(tok: WordTokenizer, text: str, what: str = "sentence") -> list[int]:
    """A source sentence as ids. Text the vocabulary does not know as written is tried lower-cased and
    re-spaced into known words (我投资了苹果， -> 我 投资了 苹果 ，) before a one-line error names what is unknown.
    `what` names the text in refusals: "sentence" (to translate), "source" or "target"."""
    if not text.strip():
        raise Refusal.of("errors.mt_empty", what=phrase(f"errors.mt_the_{what}"))
    special = [w for w in text.split() if w in SPECIALS]
    if special:
        raise Refusal.of("errors.mt_special", token=special[0])
    marks = unknown_marks(tok, text)
    if marks:  # a mark the model never saw carries no word: it reads the sentence without it
        text = "".join(" " if c in marks else c for c in text)
        if not text.strip():
            raise Refusal.of("errors.mt_empty", what=phrase(f"errors.mt_the_{what}"))
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
    unknown = unknown_parts(tok, text.lower())
    n = tok.vocab_size - len(SPECIALS)
    if not unknown:
        raise Refusal.of("errors.mt_unknown", n=n)
    raise Refusal.of("errors.mt_unknown_words", words=[repr(w) for w in unknown[:10]], n=n)


def unknown_marks(tok: WordTokenizer, text: str) -> list[str]:
    """The punctuation marks of `text` that are not tokens of the vocabulary (a translation model
    trained on sentences without quotes knows no “ ”): encode_source reads the sentence without them."""
    return list(dict.fromkeys(c for c in text if unicodedata.category(c).startswith("P") and c not in tok.ids))


def unknown_parts(tok: WordTokenizer, text: str) -> list[str]:
    """What of `text` no known word covers. Words separated by spaces (two or more chunks with word
    characters): each word that cannot be cut into known ones, without its marks (我 吃了 火龙果。 ->
    火龙果). Text typed without spaces: in each run of Chinese, only the characters that no word, cut
    the most probable way, reaches (我打龘你 。 -> 龘), never the whole run; a word of another script, whole."""
    chunks = text.split()
    spaced = sum(1 for c in chunks if _WORD_CHAR.search(c)) > 1
    out = []
    for piece in (p for chunk in chunks for p in tok.split(chunk) if p not in tok.ids):
        runs = tok.unknown_runs(piece)
        if runs:
            out += [piece] if spaced else ["".join(part for part, _ in run) for run in runs]
    return list(dict.fromkeys(out))


_WORD_CHAR = re.compile(r"\w")


# A translation is marked unsure when some word of it had a probability below this when the model wrote
# it: there the model was choosing between several words, not translating one it knew. On the
# built-in held-out pairs the least likely word of nine translations in ten has a probability above
# 0.98; on the HSK held-out sentences most fall below (scripts/bleu_translate.py counts both).
UNSURE_BELOW = 0.5


def confidence(probs) -> float:
    """How sure the model was of a translation: the probability of its least likely token (of the
    words it wrote and </s>), between 0 and 1; 0 for no token."""
    return weakest(probs)[0]


def weakest(probs) -> tuple[float, int]:
    """(the smallest probability, its index) of a translation's tokens; (0, 0) for none. A probability
    that is not a number (a model whose weights diverged) counts as 0: nothing to be sure of."""
    probs = [float(p) if math.isfinite(float(p)) else 0.0 for p in probs]
    return (min(probs), probs.index(min(probs))) if probs else (0.0, 0)


@dataclass(frozen=True)
class Translated:
    """A translation and how sure of it the model was (`confidence`; `unsure` below UNSURE_BELOW)."""

    text: str
    source: str  # the source as the model read it: its words, re-spaced
    confidence: float
    weakest: str  # the token written with that probability (a word, or </s>)
    finished: bool  # it ended with </s> (false: cut at max_len)
    left_out: tuple[str, ...] = ()  # punctuation marks it never saw, read as if they were not there

    @property
    def unsure(self) -> bool:
        return self.confidence < UNSURE_BELOW


def make_examples(tok: WordTokenizer, pairs, n_ctx: int) -> list[Example]:
    """(source words, target words) pairs as Examples; a pair too long for n_ctx raises ValueError."""
    out = []
    for n, (src, tgt) in enumerate(pairs):
        s, t = encode_words(tok, src), encode_words(tok, tgt)
        if not s or not t:
            raise Refusal.of("errors.pair_empty_side", n=n + 1)
        if len(s) > n_ctx or len(t) + 1 > n_ctx:
            raise Refusal.of("errors.pair_too_long", n=n + 1, source=len(s), target=len(t) + 1, n_ctx=n_ctx)
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
        raise Refusal.of("errors.pairs_file_missing", path=p)
    if p.is_dir():
        raise Refusal.of("errors.not_a_file", path=p)
    try:
        lines = without_bom(read_bytes(p, TEXT_LIMIT, "pairs file").decode("utf-8")).splitlines()
    except UnicodeDecodeError as e:
        raise Refusal.of("errors.pairs_file_not_utf8", path=p, byte=e.start) from None
    pairs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].split() or not parts[1].split():
            raise Refusal.of("errors.pairs_file_line", path=p, line=n)
        pairs.append((parts[0].split(), parts[1].split()))
    if not pairs:
        raise Refusal.of("errors.pairs_file_empty", path=p)
    return pairs


def decode_target(tok: WordTokenizer, ids) -> str:
    """The words of a decoded target, without </s>."""
    return " ".join(tok.tokens[i] for i in ids if i >= len(SPECIALS))


def check_language(text: str, lang: str | None, role: str = "source") -> None:
    """A one-line error when `text` is plainly not in `lang` (zh or en; other codes and None pass), the
    model's source (or target) language: the word list holds both sides, so without this a zh→en model
    would "translate" English words into nonsense. Chinese: no word of Latin letters; English: no Chinese."""
    if not text.strip():
        raise Refusal.of("errors.mt_empty", what=phrase("errors.mt_the_sentence"))
    side = phrase(f"errors.mt_role_{role}")
    if lang == "zh":
        latin = _LATIN_RE.findall(" ".join(w for w in text.split() if w not in SPECIALS))  # encode_source names those
        if not _CJK_RE.search(text):
            raise Refusal.of("errors.mt_no_chinese", role=side)
        if latin:
            raise Refusal.of("errors.mt_latin", role=side, words=[repr(w) for w in dict.fromkeys(latin)])
    if lang == "en" and _CJK_RE.search(text):
        raise Refusal.of("errors.mt_chinese_in_english", role=side)


def translate(model, tok: WordTokenizer, text: str, beam: int = 1, max_len: int | None = None) -> str:
    """The model's translation of `text`: greedy (beam=1) or the best of a beam search. A text plainly not in
    the model's source language (model.languages, recorded by its checkpoint) is refused in one line."""
    return translated(model, tok, text, beam, max_len).text


def translated(model, tok: WordTokenizer, text: str, beam: int = 1, max_len: int | None = None) -> Translated:
    """`translate`, with how sure the model was of it (see Translated)."""
    check_language(text, (getattr(model, "languages", None) or (None,))[0])
    ids = encode_source(tok, text)
    src = torch.tensor([ids])  # (1, S)
    if src.shape[1] > model.cfg.n_ctx:
        raise Refusal.of("errors.mt_too_long", n=src.shape[1], n_ctx=model.cfg.n_ctx)
    best = greedy(model, src, max_len=max_len)[0] if beam == 1 else beam_search(model, src, beam, max_len)[0]
    finished = bool(best.ids) and best.ids[-1] == EOS
    source = " ".join(tok.tokens[i] for i in ids)
    probs = [math.exp(lp) for lp in best.token_logprobs]  # of each token as the search wrote it
    sure, at = weakest(probs)
    left_out = tuple(unknown_marks(tok, text))
    return Translated(
        decode_target(tok, best.ids), source, sure, tok.tokens[best.ids[at]] if probs else "", finished, left_out
    )

"""What the analyses read from their caller, checked: a text (as ids the model can read), token ids
given directly, the size of the attention matrices a page can hold, and for the interventions (lens,
attribution, head scores, patching) a GPT-family model, one sequence of token ids, one token given as
an id or a word. Each refusal is one line in the user's language (a TextError: the server answers it
with a 400)."""

from __future__ import annotations

import math
import operator
import unicodedata

import torch

from qkv.core.io.refusal import family_title
from qkv.core.see.indices import TextError
from qkv.core.text.tokenizers.words import _CJK_RE

MAX_CELLS = 2**23  # attention weights per view (L·H·T²): 32 MiB of float32 for each of dots and pattern


def encode_text(tokenizer, text, n_ctx: int) -> list[int]:
    """The ids of `text`, or a TextError that says what is wrong (in one line)."""
    if not isinstance(text, str):
        raise TextError.of("errors.text_type", type=type(text).__name__)
    if not text:
        raise TextError.of("errors.text_empty")
    try:
        ids = tokenizer.encode(text)
    except ValueError as e:  # UnknownTokenError names the characters or words
        raise TextError.recast(e) from None
    if not [i for i in ids if i not in getattr(tokenizer, "special", ())]:  # WordPiece: "   " is [CLS] [SEP]
        raise TextError.of("errors.text_no_tokens")
    if len(ids) > n_ctx:
        raise TextError.of("errors.text_too_long", T=len(ids), n_ctx=n_ctx)
    return ids


def read_text(tokenizer, text, n_ctx: int) -> tuple[str, list[int]]:
    """(text, ids) as encode_text, except that when a word tokenizer does not know all the words
    but can cut them into words it knows (WordTokenizer.respace: 我投资了苹果 -> 我 投资了 苹果),
    the text is read, and returned, cut that way. When it cannot, the tokenizer's error names only
    the runs no known word covers, each with its nearest known words ("1 word is not in the
    tokenizer's vocabulary: '好' (nearest known words: 看好, 好吃)"). A word tokenizer with a fallback
    reads any text: the text comes back as it reads it, decoded from its ids (我投资了苹果， -> 我 投资了
    苹果 ，; I ate -> i ate), and what it reads below its words is in the view's "unknown" list."""
    try:
        ids = encode_text(tokenizer, text, n_ctx)
        return (tokenizer.decode(ids) if getattr(tokenizer, "fallback", False) else text), ids
    except TextError:
        spaced = tokenizer.respace(text) if isinstance(text, str) and hasattr(tokenizer, "respace") else None
        if spaced is None:
            raise  # the original message names what is unknown
        return spaced, encode_text(tokenizer, spaced, n_ctx)


def check_ids(ids, cfg) -> list[int]:
    """Token ids given directly (as generation returns them), checked like a text's."""
    if not ids:
        raise TextError.of("errors.ids_empty")
    bad = [i for i in ids if not 0 <= i < cfg.d_vocab]
    if bad:
        raise TextError.of("errors.ids_range", id=bad[0], last=cfg.d_vocab - 1)
    if len(ids) > cfg.n_ctx:
        raise TextError.of("errors.ids_too_long", T=len(ids), n_ctx=cfg.n_ctx)
    return list(ids)


def check_size(cfg, T: int) -> None:
    """Refuse a view whose attention matrices would not fit a page (a browser tab holds ~MAX_CELLS)."""
    cells = cfg.n_layers * cfg.n_heads * T * T
    if cells > MAX_CELLS:
        most = math.isqrt(MAX_CELLS // (cfg.n_layers * cfg.n_heads))
        raise TextError.of(
            "errors.view_too_large", T=T, cells=cells, L=cfg.n_layers, H=cfg.n_heads, max=MAX_CELLS, most=most
        )


def check_gpt(model, key: str) -> None:
    """Refuse (catalogue key `key`, with the family's title) a model that is not a one-stack GPT."""
    family = model.family
    if not (family.next_token and family.one_stack):
        raise TextError.of(key, title=family_title(family))


def check_ids_dtype(ids: torch.Tensor) -> None:
    """Refuse a tensor of token ids that are not whole numbers (floats, complex, booleans), naming its dtype."""
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TextError.of("tokenizer_safety.ids_dtype", dtype=str(ids.dtype).removeprefix("torch."))


def one_sequence(model, ids) -> list[int]:
    """ids (T,), (1, T) or a list of ints, as a checked list of token ids (in the vocabulary, at most n_ctx)."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() == 2 and ids.shape[0] == 1:
            ids = ids[0]
        check_ids_dtype(ids)
        if ids.dim() != 1:
            raise TextError.of("interpret.one_sequence", shape=tuple(ids.shape))
        ids = ids.tolist()
    try:
        if isinstance(ids, (str, bytes)) or any(isinstance(i, bool) for i in ids):
            raise TypeError
        ids = [operator.index(i) for i in ids]  # ints, numpy's, 0-d integer tensors
    except TypeError:
        raise TextError.of("interpret.one_sequence", shape=type(ids).__name__) from None
    return check_ids(ids, model.cfg)


def running_ids(tokenizer, word: str) -> list[int]:
    """The ids of `word` as the model sees it in running text (special tokens left out). A tokenizer
    whose tokens carry the space before a word (byte-level BPE: " Mary"; SentencePiece: "▁Mary") reads
    "Mary" inside a sentence with that space, so a typed word is read with it: as the tokenizer reads
    it alone when that already starts with a space (Llama 2's ▁ in front), else as " " + word when that
    is one token or the word alone is not. A word that starts with a space, a CJK character or a
    punctuation mark (no space before it in running text) is read as typed. Characters the vocabulary
    cannot spell are refused (tokenizer.unspellable): a form needs the exact token."""
    special = getattr(tokenizer, "special", ())
    if getattr(tokenizer, "prefix_space", False) and word.startswith(" ") and word.strip():
        word = word[1:]  # the layout puts that space in front itself (Llama 2's ▁): " Mary" is "Mary"
    plain = [i for i in _exact(tokenizer, word) if i not in special]
    if not getattr(tokenizer, "spaces_in_tokens", False) or not _spaced_before(word[0]):
        return plain
    if plain and tokenizer.token_bytes(plain[0]).startswith(b" "):
        return plain
    spaced = [i for i in _exact(tokenizer, " " + word) if i not in special]
    if spaced and tokenizer.token_bytes(spaced[0]).startswith(b" ") and (len(spaced) == 1 or len(plain) != 1):
        return spaced
    return plain


def _spaced_before(c: str) -> bool:
    """Whether a word starting with c has a space before it in running text (not so for a CJK character,
    a punctuation mark or a space)."""
    kana = unicodedata.name(c, "").startswith(("HIRAGANA", "KATAKANA"))
    return not (c.isspace() or unicodedata.category(c)[0] == "P" or _CJK_RE.match(c) or kana)


def _exact(tokenizer, text: str) -> list[int]:
    try:
        return tokenizer.encode_exact(text) if hasattr(tokenizer, "encode_exact") else tokenizer.encode(text)
    except ValueError as e:  # a word tokenizer without a fallback names the unknown word; unspellable characters
        raise TextError.recast(e) from None


def token_id(tokenizer, word: str, many: str = "patching.word_tokens", empty: str = "patching.word_empty") -> int:
    """The id of `word` as running_ids reads it, which must be one token; else a one-line refusal (`many`:
    the catalogue key that says why one token is needed, with {word}, {n} and the {pieces} it became;
    `empty`: the key that says an empty word, in the words of the analysis that asked)."""
    if not isinstance(word, str) or not word:
        raise TextError.of(empty)
    ids = running_ids(tokenizer, word)
    if len(ids) != 1:
        pieces = " ".join(repr(tokenizer.display(i)) for i in ids)
        raise TextError.of(many, word=repr(word), n=len(ids), pieces=pieces)
    return ids[0]


def read_token(
    token, tokenizer, d_vocab: int, many: str = "patching.word_tokens", empty: str = "patching.word_empty"
) -> int:
    """A token id (any integer type), or a word the tokenizer reads as exactly one token (token_id), as an
    id in 0 .. d_vocab - 1."""
    if isinstance(token, str):
        if tokenizer is None:
            raise TextError.of("interpret.token_needs_tokenizer", word=repr(token))
        token = token_id(tokenizer, token, many, empty)
    try:
        if isinstance(token, bool):
            raise TypeError
        token = operator.index(token)  # an int, numpy's, a 0-d integer tensor
    except TypeError:
        raise TextError.of("interpret.token_type", token=repr(token)) from None
    if not 0 <= token < d_vocab:
        raise TextError.of("interpret.token_range", id=token, last=d_vocab - 1)
    return token

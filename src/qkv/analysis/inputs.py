"""What the interventions (lens, attribution, head scores, patching) read from their caller, checked:
a GPT-family model, one sequence of token ids, one token given as an id or a word. Each refusal is one
line in the user's language (a TextError: the server answers it with a 400)."""

from __future__ import annotations

import operator

import torch

from qkv.analysis.view import check_ids
from qkv.core.io.refusal import family_title
from qkv.core.see.indices import TextError


def check_gpt(model, key: str) -> None:
    """Refuse (catalogue key `key`, with the family's title) a model that is not a one-stack GPT."""
    family = model.family
    if not (family.next_token and family.one_stack):
        raise TextError.of(key, title=family_title(family))


def one_sequence(model, ids) -> list[int]:
    """ids (T,), (1, T) or a list of ints, as a checked list of token ids (in the vocabulary, at most n_ctx)."""
    if isinstance(ids, torch.Tensor):
        if ids.dim() == 2 and ids.shape[0] == 1:
            ids = ids[0]
        if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype == torch.bool:
            raise TextError.of("interpret.one_sequence", shape=tuple(ids.shape))
        ids = ids.tolist()
    try:
        if isinstance(ids, (str, bytes)) or any(isinstance(i, bool) for i in ids):
            raise TypeError
        ids = [operator.index(i) for i in ids]  # ints, numpy's, 0-d integer tensors
    except TypeError:
        raise TextError.of("interpret.one_sequence", shape=type(ids).__name__) from None
    return check_ids(ids, model.cfg)


def token_id(tokenizer, word: str, many: str = "patching.word_tokens") -> int:
    """The id of `word`, which must be one token of the tokenizer; else a one-line refusal (`many`: the
    catalogue key that says why one token is needed, with {word}, {n} and the {pieces} it became)."""
    if not isinstance(word, str) or not word:
        raise TextError.of("patching.word_empty")
    try:
        ids = tokenizer.encode(word)
    except ValueError as e:  # a word tokenizer without a fallback names the unknown word
        raise TextError.recast(e) from None
    ids = [i for i in ids if i not in getattr(tokenizer, "special", ())]  # WordPiece's [CLS] [SEP]
    if len(ids) != 1:
        pieces = " ".join(repr(tokenizer.display(i)) for i in ids)
        raise TextError.of(many, word=repr(word), n=len(ids), pieces=pieces)
    return ids[0]


def read_token(token, tokenizer, d_vocab: int, many: str = "patching.word_tokens") -> int:
    """A token id (any integer type), or a word the tokenizer reads as exactly one token (token_id), as an
    id in 0 .. d_vocab - 1."""
    if isinstance(token, str):
        if tokenizer is None:
            raise TextError.of("interpret.token_needs_tokenizer", word=repr(token))
        token = token_id(tokenizer, token, many)
    try:
        if isinstance(token, bool):
            raise TypeError
        token = operator.index(token)  # an int, numpy's, a 0-d integer tensor
    except TypeError:
        raise TextError.of("interpret.token_type", token=repr(token)) from None
    if not 0 <= token < d_vocab:
        raise TextError.of("interpret.token_range", id=token, last=d_vocab - 1)
    return token

"""A refusal qkv can say in Chinese or English: an error that carries its catalogue key and fields.

    raise TextError.of("errors.text_too_long", T=80, n_ctx=64)   # TextError is a Refusal
    str(error)                # "the text has 80 tokens; this model reads at most n_ctx = 64", as always
    error.key, error.fields   # what qkv.presentation.i18n.say_error(error, "zh") says in Chinese

Refusal is a ValueError, so every `except ValueError` and every English message keeps working. The
sentences themselves live in the message catalogue (qkv/presentation/messages/{en,zh}/errors.py);
a core module may not import the presentation layer, so the catalogue hands this module the way to
write English (`speak_english`) when it is imported, which `import qkv` always does. A field may be
a `phrase` (a catalogued part of a sentence, such as "the text has 5 tokens"), another refusal, or a
list of either or of plain values: each is said in the language of the sentence that holds it, a list
joined by that language's comma. Any other value is written as it is (token strings, paths, numbers).

A Refusal made from plain text (`TextError("...")`, as older code does) has no key: it is said in
English in every language.

What a core module tells the user while it works (the training loop's progress lines) is a phrase too,
written with `said`: in the language qkv speaks (a command's --lang while it runs, qkv.set_lang,
QKV_LANG: presentation.i18n decides, through `speak_chosen`), else in English.
"""

from __future__ import annotations

from collections.abc import Callable

_english: Callable[[object], str] | None = None
_chosen: Callable[[object], str] | None = None


def speak_english(say: Callable[[object], str]) -> None:
    """Set how a refusal or phrase is written in English (the catalogue calls this once)."""
    global _english
    _english = say


def speak_chosen(say: Callable[[object], str]) -> None:
    """Set how a phrase is written when no command speaks: in qkv's language (the catalogue calls this once)."""
    global _chosen
    _chosen = say


def said(item) -> str:
    """A phrase or refusal as the user reads it: in the language qkv speaks (a command's --lang while it
    runs, else qkv.set_lang, else QKV_LANG: presentation.i18n decides), else in English."""
    return _chosen(item) if _chosen is not None else str(item)


class Phrase:
    """A catalogued part of a sentence, said in the language of the sentence it fills."""

    __slots__ = ("key", "fields")

    def __init__(self, key: str, fields: dict):
        self.key, self.fields = key, fields

    def __str__(self) -> str:
        return _english(self) if _english is not None else self.key

    def __repr__(self) -> str:
        return f"phrase({self.key!r}, **{self.fields!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Phrase) and (self.key, self.fields) == (other.key, other.fields)

    # unhashable, as a class that defines __eq__ and not __hash__ always is (Python sets __hash__ to None)


def phrase(key: str, /, **fields) -> Phrase:
    """A catalogued part of a sentence, to be a field of a refusal: phrase("errors.unit_tokens", n=5)."""
    return Phrase(key, fields)


class Refusal(ValueError):
    """What the user asked cannot be done, said in one line from the catalogue (see the module docstring)."""

    key: str | None = None
    fields: dict = {}

    @classmethod
    def of(cls, key: str, /, **fields):
        """The refusal `key` of the catalogue, with its {fields}."""
        error = cls(key)  # args: the key, until it is said (and for pickling: the fields travel in __dict__)
        error.key, error.fields = key, fields
        return error

    @classmethod
    def recast(cls, error: BaseException):
        """`error` as this class: the same key and fields when it has them, else its own text."""
        key = getattr(error, "key", None)
        return cls.of(key, **getattr(error, "fields", {})) if key else cls(str(error))

    def __str__(self) -> str:
        if self.key is None or _english is None:
            return super().__str__()
        return _english(self)


def family_title(family) -> Phrase:
    """How a sentence names a model family (a qkv.core.spec.family.Family): "a GPT", "an encoder"."""
    return phrase(f"errors.family_{family.arch}")

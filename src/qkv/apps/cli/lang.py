"""How `qkv` learns its language from the command line: --lang when it is given, else what
qkv.presentation.i18n decides for all of qkv (qkv.set_lang, else QKV_LANG, else English). Before argparse
has read the command line (its own errors must be said in that language too) the command line is
scanned for --lang by hand."""

from __future__ import annotations

from qkv.presentation.i18n import ENV, LANGS, chosen_lang, from_env, get_lang

__all__ = ["ENV", "decide", "from_env", "given", "settle"]


def given(argv: list[str]) -> str | None:
    """The value of --lang on a command line not parsed yet (--lang zh, --lang=zh), if it is zh or en."""
    for i, arg in enumerate(argv):
        if arg == "--":  # what follows is text, not options
            break
        if arg == "--lang" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--lang="):
            value = arg.partition("=")[2]
        else:
            continue
        return value if value in LANGS else None
    return None


def decide(lang: str | None, environ=None) -> str:
    """`lang` (what --lang said) when it is zh or en, else the language qkv speaks (i18n.get_lang:
    qkv.set_lang's, else QKV_LANG's, else en)."""
    return lang if lang in LANGS else get_lang(environ)


def settle(args) -> None:
    """Give every command's parsed --lang its value: decide()'s, except where --lang means more.
    corpus's also picks the sentences it prints (left out: both), so it stays as given; explain --html's,
    left out and without a language chosen (set_lang, QKV_LANG), leaves the page to open in the reader's
    browser's language (None)."""
    lang = getattr(args, "lang", None)
    if getattr(args, "command", None) == "corpus":
        args.lang = lang
    elif getattr(args, "command", None) == "explain":
        args.lang = lang if lang in LANGS else chosen_lang()
    else:
        args.lang = decide(lang)

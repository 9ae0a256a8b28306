"""The one place that decides which language `qkv` speaks: --lang when it is given, else QKV_LANG,
else English. Before argparse has read the command line (its own errors must be said in that language
too) the command line is scanned for --lang by hand."""

from __future__ import annotations

import os

from qkv.presentation.i18n import DEFAULT_LANG, LANGS

ENV = "QKV_LANG"


def from_env(environ=None) -> str | None:
    """QKV_LANG as a language qkv speaks: zh or en, also written as a locale (zh_CN.UTF-8, en-GB); else None."""
    value = (os.environ if environ is None else environ).get(ENV, "")
    lang = value.strip().lower().replace("-", "_").split("_")[0].split(".")[0]
    return lang if lang in LANGS else None


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
    """`lang` (what --lang said) when it is zh or en, else QKV_LANG's, else the default (en)."""
    return lang if lang in LANGS else from_env(environ) or DEFAULT_LANG


def settle(args) -> None:
    """Give every command's parsed --lang its value: decide()'s, except where --lang means more.
    corpus's also picks the sentences it prints (left out: both), so it stays as given; explain --html's,
    left out and without QKV_LANG, leaves the page to open in the reader's browser's language (None)."""
    lang = getattr(args, "lang", None)
    if getattr(args, "command", None) == "corpus":
        args.lang = lang
    elif getattr(args, "command", None) == "explain":
        args.lang = lang if lang in LANGS else from_env()
    else:
        args.lang = decide(lang)

"""The handler of `qkv translate`: a sentence (or one per line of stdin) in, its translation out, and
beside it, on stderr, what its reader should know (the marks it was read without; that the model was
unsure of it), in the language of --lang."""

from __future__ import annotations

import sys

from qkv.core.io.files import without_bom
from qkv.core.io.refusal import Refusal, family_title


def translate(args) -> None:
    from qkv.apps.cli.errors import said
    from qkv.core.decode.translate import translated
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.core.train.checkpoint import load
    from qkv.presentation.i18n import t

    if args.max_len is not None and args.max_len < 1:
        raise Refusal.of("cli.max_len", got=args.max_len)
    model, tokenizer = load(args.ckpt or default_translate_ckpt())
    if not model.family.translates:
        raise Refusal.of("cli.not_translation", ckpt=args.ckpt, title=family_title(model.family))
    languages = getattr(model, "languages", None)
    if args.text == ["-"]:  # one sentence per line from stdin, one translation per line
        failed, ruled = 0, False
        for n, line in enumerate(sys.stdin, 1):
            if n == 1:
                line = without_bom(line)
            if not line.strip():
                print(flush=True)  # an empty line stays empty
                continue
            try:
                tr = translated(model, tokenizer, line, args.beam, args.max_len)
                ruled |= _say(tr, args.lang, n, languages, rule=not ruled)  # the rule once, at its first use
            except ValueError as e:  # this line's own error; the lines after it are still translated
                failed += 1
                where = t("translation.note_line", args.lang, n=n)
                print(t("errors.cli_prefix", args.lang, message=where + said(e, args.lang)), file=sys.stderr)
                print(flush=True)  # an empty line keeps line n of the output the translation of line n
        return 1 if failed else None
    _say(translated(model, tokenizer, " ".join(args.text), args.beam, args.max_len), args.lang, None, languages)


def _say(tr, lang: str = "en", line: int | None = None, languages=None, rule: bool = True) -> bool:
    """A translation on stdout; after it, on stderr, what its reader should know: the marks it read
    the sentence without, that it is a guess when the model was unsure of it (its least likely word),
    and the words of it that translate no word of the sentence (qkv.analysis.invented_words), with the
    rule when `rule`. True when it marked invented words."""
    from qkv.core.decode.translate import UNSURE_BELOW
    from qkv.presentation.i18n import t

    print(tr.text, flush=True)
    where = t("translation.note_line", lang, n=line) if line is not None else ""
    notes = []
    if tr.left_out:
        marks = t("errors.comma", lang).join(t("translation.note_mark", lang, mark=m) for m in tr.left_out)
        notes.append(t("translation.note_left_out", lang, marks=marks))
    if tr.unsure:
        notes.append(t("translation.note_unsure", lang, word=tr.weakest, p=f"{tr.confidence:.2f}", below=UNSURE_BELOW))
    marked = _invented(tr, lang, languages, rule)
    for note in notes + marked:
        print(t("translation.note", lang, text=where + note), file=sys.stderr, flush=True)
    return bool(marked)


def _invented(tr, lang: str, languages, rule: bool = True) -> list[str]:
    """The notes of the honesty mark: the invented words, the source words it knows nothing of, the rule."""
    from qkv.analysis.invented_words import honesty
    from qkv.presentation.i18n import t, translator

    h = honesty(tr.source.split(), tr.text.split(), languages)
    if not h["words"]:
        return []
    say = translator(lang, "translate_honesty")
    comma = t("errors.comma", lang)
    notes = [say("note_invented", n=len(h["words"]), words=comma.join(say("word", word=w) for w in h["words"]))]
    if h["unglossed"]:
        notes.append(say("note_unglossed", words=comma.join(say("word", word=w) for w in h["unglossed"])))
    return notes + ([say("rule")] if rule else [])

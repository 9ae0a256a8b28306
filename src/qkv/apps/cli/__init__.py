"""The `qkv` command: argument parsing (parser.py, its usage errors in usage.py) and one handler per
command (commands.py; info and corpus in describe.py, generate in generate.py, translate in
translate.py), over the Python API. Every error in what the
user gave prints one line `qkv: error: ...` and exits non-zero; QKV_DEBUG=1 shows the traceback
instead. Every command speaks the language of --lang, else the one chosen for all of qkv
(qkv.set_lang, else QKV_LANG), else English (lang.py reads --lang, qkv.presentation.i18n decides the
rest): its errors, argparse's included, come from the message catalogue (`qkv: 错误：...` in Chinese:
the catalogue's errors.cli_prefix), and so do its notes and reports.
"""

from __future__ import annotations

import os
import sys

from qkv.apps.cli import lang as language
from qkv.apps.cli.commands import COMMANDS
from qkv.apps.cli.errors import is_panic, said
from qkv.apps.cli.parser import build_parser
from qkv.core.hub.pretrained import loading_dtype
from qkv.core.machine import threads
from qkv.presentation.i18n import speaking, t

EXIT_ERROR, EXIT_INTERRUPTED = 1, 130
# the commands that compute enough for the thread count to matter (qkv.core.machine.threads picks it)
COMPUTING = {
    "train",
    "generate",
    "translate",
    "demo",
    "lesson",
    "trace",
    "explain",
    "figure",
    "patch",
    "heads",
    "serve",
    "eval",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # the language is known before argparse reads the command line: its errors are said in it too
    args = build_parser(language.decide(language.given(argv))).parse_args(argv)
    args.argv = argv  # what `qkv train --nproc N` passes on to its processes
    lang = language.decide(args.lang)  # corpus's "both" and explain's None: QKV_LANG's, else en
    # one of several training processes other than rank 0: it prefixes what it says with its rank, and
    # under `qkv train --nproc` (one machine, the same inputs) leaves errors in the inputs to rank 0
    rank = os.environ.get("RANK", "0")
    peer = args.command == "train" and os.environ.get("WORLD_SIZE", "1") != "1" and rank != "0"
    try:
        if args.command in COMPUTING:
            threads.configure(getattr(args, "threads", None))
        # --dtype: what --ckpt's weights load as; what core says while it works, and every display the
        # command shows, in the user's language
        with loading_dtype(getattr(args, "dtype", None) or "float32"), speaking(lang):
            code = COMMANDS[args.command](args)  # an exit status (qkv train --nproc), or None, or a result
        return code if isinstance(code, int) else 0
    except KeyboardInterrupt:
        if not peer:
            print("\n" + t("cli.interrupted", lang), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `qkv generate ... | head`
        sys.stderr.close()
        return 0
    except (ValueError, OSError, RuntimeError) as e:
        if os.environ.get("QKV_DEBUG"):
            raise
        message = said(e, lang)
        if peer:  # a peer shares the terminal with rank 0, whose progress bar may hold the line: start a new one
            if not (isinstance(e, ValueError) and os.environ.get("QKV_LAUNCHED")):
                print("\n" + t("cli.rank_error", lang, rank=rank, message=message), file=sys.stderr)
        else:
            print(t("errors.cli_prefix", lang, message=message), file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # a bug in qkv: still one line, the traceback on request
        if os.environ.get("QKV_DEBUG"):
            raise
        print(t("errors.cli_internal", lang, kind=type(e).__name__, detail=e), file=sys.stderr)
        return EXIT_ERROR
    except BaseException as e:  # a Rust library's panic is a BaseException: one line as well (errors.py)
        if not is_panic(e) or os.environ.get("QKV_DEBUG"):
            raise
        print(t("errors.cli_prefix", lang, message=said(e, lang)), file=sys.stderr)
        return EXIT_ERROR


__all__ = ["build_parser", "main"]

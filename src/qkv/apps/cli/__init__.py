"""The `qkv` command: argument parsing (parser.py) and one handler per command (commands.py), over the
Python API. Every error in what the user gave prints one line `qkv: error: ...` and exits non-zero;
QKV_DEBUG=1 shows the traceback instead.
"""

from __future__ import annotations

import os
import sys

from .commands import COMMANDS
from .parser import build_parser

EXIT_ERROR, EXIT_INTERRUPTED = 1, 130


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `qkv generate ... | head`
        sys.stderr.close()
        return 0
    except (ValueError, OSError, RuntimeError) as e:
        if os.environ.get("QKV_DEBUG"):
            raise
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"qkv: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # a bug in qkv: still one line, the traceback on request
        if os.environ.get("QKV_DEBUG"):
            raise
        print(f"qkv: internal error: {type(e).__name__}: {e} (set QKV_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_ERROR
    return 0


__all__ = ["build_parser", "main"]

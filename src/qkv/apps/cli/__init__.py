"""The `qkv` command: argument parsing (parser.py) and one handler per command (commands.py; info and
corpus in describe.py), over the Python API. Every error in what the user gave prints one line
`qkv: error: ...` and exits non-zero; QKV_DEBUG=1 shows the traceback instead.
"""

from __future__ import annotations

import os
import sys

from qkv.core import threads

from .commands import COMMANDS
from .parser import build_parser

EXIT_ERROR, EXIT_INTERRUPTED = 1, 130
# the commands that compute enough for the thread count to matter (qkv.core.threads picks it)
COMPUTING = {"train", "generate", "translate", "demo", "lesson", "trace", "explain", "figure", "serve"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # what `qkv train --nproc N` passes on to its processes
    # one of several training processes other than rank 0: it prefixes what it says with its rank, and
    # under `qkv train --nproc` (one machine, the same inputs) leaves errors in the inputs to rank 0
    rank = os.environ.get("RANK", "0")
    peer = args.command == "train" and os.environ.get("WORLD_SIZE", "1") != "1" and rank != "0"
    try:
        if args.command in COMPUTING:
            threads.configure(getattr(args, "threads", None))
        code = COMMANDS[args.command](args)  # an exit status (qkv train --nproc), or None, or a result
        return code if isinstance(code, int) else 0
    except KeyboardInterrupt:
        if not peer:
            print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `qkv generate ... | head`
        sys.stderr.close()
        return 0
    except (ValueError, OSError, RuntimeError) as e:
        if os.environ.get("QKV_DEBUG"):
            raise
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if not (peer and isinstance(e, ValueError) and os.environ.get("QKV_LAUNCHED")):
            # a peer shares the terminal with rank 0, whose progress bar may hold the line: start a new one
            lead = "\n" if peer else ""
            print(f"{lead}qkv: error{f' (rank {rank})' if peer else ''}: {message}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # a bug in qkv: still one line, the traceback on request
        if os.environ.get("QKV_DEBUG"):
            raise
        print(f"qkv: internal error: {type(e).__name__}: {e} (set QKV_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_ERROR


__all__ = ["build_parser", "main"]

"""A Rust panic's message, kept off the user's terminal.

Before a panic reaches Python (safety.shielded turns it into a one-line refusal), Rust's panic hook
writes "thread '<unnamed>' panicked at …" (and, under RUST_BACKTRACE, a backtrace of 40 frames) to file
descriptor 2 itself: no Python handler sees it. `quiet()` points descriptor 2 at a file of its own
for the length of one call into the library: what was written there is written out after the call,
unless the call panicked (then the refusal says what happened, in one line). Calls are taken one at a
time (a lock): the descriptor is the process's, not the thread's; `tokenizers` holds the GIL while it
encodes one text anyway. A process without a descriptor 2 (a daemon) runs the call as it is.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_sink: list = []  # the one temporary file, made on first use


def is_panic(error: BaseException) -> bool:
    """Whether `error` is a Rust library's panic (tokenizers, safetensors), as pyo3 raises it."""
    kind = type(error)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


@contextmanager
def quiet():
    """Within this block descriptor 2 writes to a file; its content is written out after, unless a Rust
    panic ended the block."""
    with _lock:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError, AttributeError):  # no descriptor 2, or sys.stderr closed or None
            yield
            return
        if not _sink:
            _sink.append(tempfile.TemporaryFile())
        sink = _sink[0]
        os.dup2(sink.fileno(), 2)
        panicked = False
        try:
            yield
        except BaseException as e:
            panicked = is_panic(e)
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if os.fstat(sink.fileno()).st_size:  # something was written (most calls write nothing)
                sink.seek(0)
                data = sink.read()
                sink.seek(0)
                sink.truncate()
                if not panicked:
                    os.write(2, data)


__all__ = ["quiet"]

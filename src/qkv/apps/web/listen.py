"""Serving the explorer: the listening socket, a deadline on every request, memory that stays flat,
and `serve` (qkv serve).

The app itself (its routes, its checks on what a request may ask) is server.create_app.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import threading
import time

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from qkv.apps.web.server import LOCAL_HOSTS, create_app
from qkv.core.io.refusal import Refusal, phrase, said

IDLE_TIMEOUT = 5  # seconds a connection may wait, idle or halfway through a request, before it is closed
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
ARENAS = 2  # glibc malloc's heaps (default: up to 8 per core), each keeping what its threads freed
TRIM_EVERY = 1.0  # seconds between two malloc_trim(0): the heaps' free memory goes back to the system


def listening_socket(host: str, port: int):
    """A TCP socket bound to (host, port), so that a taken port is a one-line error before serving.

    It is made with proto=IPPROTO_TCP: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    connections whose socket says so, and with Nagle on every keep-alive response waited ~40 ms
    for the browser's delayed ACK between its headers and its body."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:  # the common case, said in the user's language with what to do
            raise Refusal.of(
                "cli.serve_port_taken", host=host, port=port, other=port + 1 if port < 65535 else 8000
            ) from None
        raise Refusal.of("cli.serve_cannot_listen", host=host, port=port, why=e.strerror or str(e)) from None
    return sock


class IdleGuard(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, with a deadline on each request: a connection that has not sent a
    whole request (headers and body) within IDLE_TIMEOUT seconds of opening, or of its last answer, is
    closed. uvicorn alone closes an idle keep-alive connection only after an answer, so a client that
    connects and sends nothing, or half a header, would keep its socket and file descriptor forever."""

    deadline = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._waiting():  # the request is in: the answer may take as long as it takes
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection gets its own IDLE_TIMEOUT

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def _arm(self) -> None:
        self._disarm()
        if self._waiting() and not self.transport.is_closing():
            self.deadline = self.loop.call_later(IDLE_TIMEOUT, self._expire)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expire(self) -> None:
        self.deadline = None
        if self._waiting() and not self.transport.is_closing():
            self.transport.close()


class Server(uvicorn.Server):
    """uvicorn's server, printing the line `ready` once its socket accepts connections (not before:
    whoever reads the address, a person or a script, may connect at once)."""

    ready = ""

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            print(self.ready, flush=True)


def settle_memory() -> None:
    """Keep a long-running server's memory flat once it is warm (server.py's docstring lists its caches).

    glibc's malloc keeps freed memory for reuse: after the first large block is freed it serves
    blocks of up to 32 MiB from its heaps instead of mmap, and each heap (one per thread, up to 8
    per core) keeps its free blocks: the bundled model's server went from 260 to 540 MB over its
    first 400 requests. ARENAS heaps, and a thread that hands what they hold free back to the system
    (malloc_trim) every TRIM_EVERY seconds, keep it flat, without making each large tensor take fresh
    pages (a fixed mmap threshold would: MiniLM's /api/view 50% slower).
    gc.freeze() leaves what startup made (modules, the model) out of the collector's full passes,
    which a request making many objects (a body of 16,000 unknown fields) would otherwise pay for on
    the event loop: ~70 ms each time."""
    gc.collect()  # what is garbage now is not frozen with the rest
    gc.freeze()
    try:
        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): its malloc as it is
        return
    libc.mallopt(M_ARENA_MAX, ARENAS)

    def trim_now_and_then():
        while True:
            time.sleep(TRIM_EVERY)
            trim(0)

    threading.Thread(target=trim_now_and_then, name="qkv-malloc-trim", daemon=True).start()


def serve(ckpt=None, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Load a checkpoint (default: the bundled model) and serve the explorer until Ctrl-C."""
    import sys

    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.train.checkpoint import load

    if not 0 <= port <= 65535:
        raise ValueError(f"port must be between 0 and 65535, got {port}")
    model, tokenizer = load(ckpt or default_ckpt())
    name = str(ckpt) if ckpt else "bundled"
    app = create_app(model, tokenizer, name, host=host)
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if host not in LOCAL_HOSTS:
        print(said(phrase("cli.serve_open", host=host)), file=sys.stderr)
    server = Server(uvicorn.Config(app, log_level=log_level, http=IdleGuard, timeout_keep_alive=IDLE_TIMEOUT))
    server.ready = said(phrase("cli.serve_ready", url=f"http://{shown}:{bound}/", name=name))
    settle_memory()
    server.run(sockets=[sock])

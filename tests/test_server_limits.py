"""A real `qkv serve` process against raw sockets: it says where it listens only once it accepts, and a
client that connects and sends nothing (or half a request) cannot keep its connection for long."""

from __future__ import annotations

import io
import os
import re
import socket
import sys
import time
import urllib.request

import pytest
from browser_util import start_server, stop

from qkv.apps.web.listen import IDLE_TIMEOUT

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]  # it starts qkv serve

HELD = 200  # connections held open at once (each one a file descriptor in the server)


@pytest.fixture(scope="module")
def server():
    proc, url = start_server("--port", "0")
    host, port = url[len("http://") :].rstrip("/").rsplit(":", 1)
    yield proc, url, (host, int(port))
    stop(proc)


def get(url: str) -> int:
    return urllib.request.urlopen(url + "api/model", timeout=10).status


def closed_by_server(sock: socket.socket, deadline: float) -> bool:
    """Wait until the server closes `sock` (end of stream or reset), at most until `deadline`."""
    sock.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        while sock.recv(4096):
            pass  # an answer (e.g. a 400), then the end of the stream
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_the_address_is_printed_once_the_port_accepts(monkeypatch):
    """serve() in this process: while it prints its address its event loop is busy printing, so a
    connection can only be completed by the kernel, which does it only for a listening socket (the
    address used to be printed before listening: refused)."""
    from qkv.apps.web import listen as web

    class Stdout(io.StringIO):
        def write(self, text):
            if match := re.search(r"http://([^ ]+):(\d+)/", text):
                with socket.socket() as sock:
                    tried.append(sock.connect_ex((match[1], int(match[2]))))
            return super().write(text)

    async def stop_at_once(self):
        self.should_exit = True

    tried = []
    monkeypatch.setattr(sys, "stdout", Stdout())
    monkeypatch.setattr(web.Server, "main_loop", stop_at_once)
    web.serve(host="127.0.0.1", port=0)
    assert tried == [0]  # printed once, and connectable at that moment


def test_idle_and_half_sent_connections_are_closed_and_others_still_served(server):
    proc, url, address = server
    fds = len(os.listdir(f"/proc/{proc.pid}/fd")) if os.path.isdir(f"/proc/{proc.pid}/fd") else None
    partial = [
        b"",
        b"GET /api/model HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # nothing; half a header
        b"POST /api/view HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"text": ',
    ]  # the headers, and a body that never ends
    held = []
    opened = time.monotonic()
    for n in range(HELD):
        sock = socket.create_connection(address, timeout=10)
        sock.sendall(partial[n % len(partial)])
        held.append(sock)
    try:
        t0 = time.perf_counter()
        assert get(url) == 200  # a page's own request is answered while they are held
        assert time.perf_counter() - t0 < 5
        deadline = opened + IDLE_TIMEOUT + 5
        still_open = sum(not closed_by_server(sock, deadline) for sock in held)
        assert still_open == 0, f"{still_open} of {HELD} idle connections still open {IDLE_TIMEOUT + 5} s later"
        assert get(url) == 200
        if fds is not None:  # the server gave their file descriptors back
            assert len(os.listdir(f"/proc/{proc.pid}/fd")) <= fds + 5
    finally:
        for sock in held:
            sock.close()


def test_a_request_sent_slowly_but_in_time_is_answered(server):
    """The deadline is on the whole request, not on each packet: a slow but complete request is served,
    and after the answer the connection gets a new IDLE_TIMEOUT."""
    _, _, address = server
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(b"GET /api/model HTTP/1.1\r\n")
        time.sleep(IDLE_TIMEOUT / 2)
        sock.sendall(b"Host: 127.0.0.1\r\n\r\n")
        assert sock.recv(12) == b"HTTP/1.1 200"
        deadline = time.monotonic() + IDLE_TIMEOUT + 5
        assert closed_by_server(sock, deadline)  # then idle again: closed in its turn

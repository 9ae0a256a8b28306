"""A real `qkv serve` process against raw sockets: it says where it listens only once it accepts, a
client that connects and sends nothing (or half a request) cannot keep its connection for long, and
no request, however large or slow, holds up a cheap one (GET /api/model) for more than a second."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import select
import socket
import sys
import threading
import time
import urllib.request

import pytest
from browser_util import start_server, stop

from qkv.apps.web.listen import IDLE_TIMEOUT

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]  # it starts qkv serve

HELD = 200  # connections held open at once (each one a file descriptor in the server)
CHEAP = 1.0  # seconds GET /api/model may take while other requests are being read or computed
FULL = " ".join(["我", "投资了", "苹果", "，"] * 16)  # 64 tokens: the bundled model's n_ctx


@pytest.fixture(scope="module")
def server():
    proc, url = start_server("--port", "0")
    host, port = url[len("http://") :].rstrip("/").rsplit(":", 1)
    yield proc, url, (host, int(port))
    stop(proc)


def get(url: str) -> int:
    return urllib.request.urlopen(url + "api/model", timeout=10).status


def timed_get(url: str) -> float:
    t0 = time.perf_counter()
    assert get(url) == 200
    return time.perf_counter() - t0


def send(address, path: str, body: bytes) -> socket.socket:
    """A connection that has sent one whole POST of `body` (its answer still to read: `answer`)."""
    sock = socket.create_connection(address, timeout=30)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    sock.sendall(head.encode() + b"\r\n\r\n" + body)
    return sock


def answer(sock: socket.socket) -> tuple[int, bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, response.read()


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


def test_a_body_over_its_bound_is_refused_before_it_is_read_and_holds_up_nothing(server):
    """12 MB of JSON (a million keys) to /api/view: FastAPI read, parsed and validated it on the event
    loop, 7.5 s to its 422, and GET /api/model waited as long. Now its Content-Length is enough: 413."""
    _, url, address = server
    body = json.dumps({f"k{i}": 0 for i in range(1_000_000)}).encode()
    got = {}

    def post():
        t0 = time.perf_counter()
        with send(address, "/api/view", body) as sock:
            got["answer"], got["took"] = answer(sock), time.perf_counter() - t0

    thread = threading.Thread(target=post)
    thread.start()
    time.sleep(0.05)  # the big request first
    cheap = timed_get(url)
    thread.join()
    status, doc = got["answer"]
    assert status == 413 and json.loads(doc)["status"] == 413 and "bytes" in json.loads(doc)["error"], doc
    assert got["took"] < CHEAP and cheap < CHEAP, (got["took"], cheap)
    assert get(url) == 200


def test_a_chunked_body_is_refused_once_it_grows_past_the_bound(server):
    """No Content-Length: the body is counted as it comes in, and refused while it is still coming
    (it used to be read to its end, however long)."""
    _, _, address = server
    chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"  # 16 KiB of JSON whitespace
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(b"POST /api/view HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
        sock.sendall(b"Transfer-Encoding: chunked\r\n\r\n")
        sent = 0
        while sent < 4 << 20 and not select.select([sock], [], [], 0.005)[0]:  # until the server answers
            sock.sendall(chunk)
            sent += 0x4000
        assert sock.recv(12) == b"HTTP/1.1 413"
    assert sent < 1 << 20, f"answered only after {sent:,} bytes"


def test_slow_requests_in_flight_do_not_hold_up_a_cheap_one(server):
    """300 /api/explain of n_ctx tokens at once: seconds of work, taking turns on the model, more
    requests than the server has worker threads. GET /api/model used to queue for a thread behind
    them; it is answered on the event loop now, while most of them still wait."""
    _, url, address = server
    body = json.dumps({"text": FULL, "token": 63}).encode()
    socks = [send(address, "/api/explain", body) for _ in range(300)]
    try:
        time.sleep(0.2)  # all of them in, the server busy with them
        cheap = [timed_get(url) for _ in range(3)]
        waiting = len(socks) - len(select.select(socks, [], [], 0)[0])  # not answered yet
        statuses = [answer(sock)[0] for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    assert statuses == [200] * len(socks)
    assert max(cheap) < CHEAP, cheap
    assert waiting > 50, f"only {waiting} requests were still waiting: the check proves nothing"

"""Shared by the browser tests and benchmarks/explorer_redraw.py: start `qkv serve`, drive the page.

Chromium is Debian's (/usr/bin/chromium), started headless by Playwright; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(*args: str, threads: int | None = 1):
    """`qkv serve ARGS` in a child process; returns (process, base URL) once it answers.
    threads: torch's threads in the server (None: its default, as a user runs it)."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    log = tempfile.TemporaryFile("w+")  # uvicorn's log: a file, so a full pipe can never block the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "qkv", "serve", *args], stdout=subprocess.PIPE, stderr=log, text=True, env=env
    )
    line = proc.stdout.readline()  # "qkv explorer: http://127.0.0.1:PORT/  (model: ...)"
    match = re.search(r"http://[^ ]+/", line)
    if not match:
        proc.kill()
        log.seek(0)
        raise RuntimeError(f"qkv serve did not start: {line!r} {log.read()[-2000:]!r}")
    url = match.group(0)
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "api/model", timeout=5).read()
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("qkv serve never answered")


def stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def api(url: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=60).read())


def from_module(pg, module: str, fn: str, arg=None):
    """fn(m, arg) for the page's own ES module static/`module`: the instance the page runs, with its
    state (`fn` is JavaScript, e.g. "m => m.S.T"). Only on a served page: the export is one bundle."""
    url = f"new URL('assets/{module}', location.href).href"
    return pg.evaluate(f"async (arg) => ({fn})(await import({url}), arg)", arg)


def renders(pg) -> int:
    return int(pg.evaluate("+(document.body.dataset.renders || 0)"))


def act(pg, action, timeout=30_000):
    """Run an action and wait until the page has redrawn after it."""
    before = renders(pg)
    action()
    # polled every 50 ms, not every animation frame: rAF polling keeps the browser busy and slows the server
    pg.wait_for_function("n => +(document.body.dataset.renders || 0) > n", arg=before, timeout=timeout, polling=50)


def settle(pg, idle_ms: int = 150) -> None:
    """Wait until the last redraw has been painted, then a moment more (as a person would)."""
    pg.wait_for_function(
        "() => { const t = qkv.timings; return t.length && t[t.length - 1].paint_ms !== null; }", polling=50
    )
    pg.wait_for_timeout(idle_ms)


def load_page(pg, url):
    pg.goto(url)
    pg.wait_for_function("() => +(document.body.dataset.renders || 0) > 0", timeout=30_000)


def choose(pg, layer: int, head: int, token: int, between=lambda: None) -> None:
    """Select the layer, the head and the query token (each a redraw, skipped when already chosen);
    `between` runs after each redraw."""
    state = pg.evaluate("[qkv.state.layer, qkv.state.head, qkv.state.token]")
    if state[0] != layer:
        act(pg, lambda: pg.select_option("#layer", str(layer)))
        between()
    if state[1] != head:
        act(pg, lambda: pg.select_option("#head", str(head)))
        between()
    if state[2] != token:
        act(pg, lambda: pg.click(f"#tokens .token[data-pos='{token}']"))
        between()


def refusal(url: str, path: str, body: dict, lang: str) -> str:
    """The server's one line for a refused request, asked in `lang`."""
    headers = {"content-type": "application/json", "accept-language": lang}
    req = urllib.request.Request(url + path, json.dumps(body).encode(), headers)
    try:
        urllib.request.urlopen(req, timeout=60)
    except urllib.error.HTTPError as e:
        return json.loads(e.read())["error"]
    raise AssertionError(f"{path} {body} was not refused")

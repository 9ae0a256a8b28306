"""How fast the explorer page redraws, in a real browser (Debian's Chromium, headless, Playwright).

A `small`-preset GPT (6 layers, 6 heads, d_head 64; random weights, char tokenizer) is served by
`qkv serve` (torch's default threads, as a user runs it); the page shows a 64-token sentence. Each
round changes the sentence, the layer, the head and the query token, pausing after each redraw as a
person would. The page times each redraw itself (`window.qkv.timings`: static/measure.js keeps them
from what the redraw announces, outside the drawing code), from the user's event
(for a sentence: the click, so the request and the decoding count) to the end of the JavaScript
that redraws ("script"), and to the painted frame that shows it ("painted": layout and paint
included). The cards below the window (step table, hull, residual, next token) are redrawn right
after that frame: "all cards" is the time until they are painted too (the frame after). Next to the
sentence change, the same request timed from Python (server + transfer).

    python benchmarks/explorer_redraw.py [--rounds 10] [--screenshot docs/img/explorer.png]
    python benchmarks/explorer_redraw.py --bundled    # the bundled model on everyday Chinese instead

--bundled serves the bundled model (4 layers x 4 heads, a vocabulary of ~8,000 tokens) on two texts
of the teacher's sentences (benchmarks/data/teacher_zh.txt), each as many whole sentences as fit in
its n_ctx.

--screenshot also serves the bundled model and saves the page at 1280 x 900 (the README's picture).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import torch
from common import machine

import qkv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_util import ARGS, CHROMIUM, act, choose, free_port, load_page, settle, start_server, stop  # noqa: E402

SENTENCES = [
    "To be, or not to be, that is the question: Whether 'tis nobler i",
    "Now is the winter of our discontent made glorious summer by this",
]
TARGET_MS = 100


def small_checkpoint(folder: Path) -> Path:
    text = "".join(chr(c) for c in range(0x20, 0x7F))
    tok = qkv.CharTokenizer.train(text)
    torch.manual_seed(0)
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, **qkv.PRESETS["small"].model))
    qkv.save(folder / "small", model, tok)
    return folder / "small"


def bundled_texts(n: int = 2) -> list[str]:
    """n texts of the teacher's sentences, each as many whole ones as the bundled model reads at once."""
    from qkv.core.bundled import default_ckpt

    _, tok = qkv.load(default_ckpt())
    n_ctx = json.loads((default_ckpt() / "config.json").read_text())["model"]["n_ctx"]
    lines = (Path(__file__).parent / "data" / "teacher_zh.txt").read_text(encoding="utf-8").split()
    texts, at = [], 0
    for _ in range(n):
        text = ""
        while at < len(lines) and len(tok.encode(text + lines[at])) <= n_ctx:
            text, at = text + lines[at], at + 1
        texts.append(text)
    return texts


def view_request_ms(url: str, text: str, rounds: int) -> tuple[list[float], list[float]]:
    """The request's time from Python, and the server's own time computing the view (its Server-Timing)."""
    body = json.dumps({"text": text}).encode()
    out, server = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        req = urllib.request.Request(url + "api/view", body, {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as res:
            res.read()
            timing = res.headers.get("Server-Timing", "")
        out.append((time.perf_counter() - t) * 1000)
        server += [float(m) for m in re.findall(r"view;dur=([0-9.]+)", timing)]
    return out, server


def measure(browser, rounds: int, bundled: bool = False) -> None:
    from qkv.core.bundled import default_ckpt

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = default_ckpt() if bundled else small_checkpoint(Path(tmp))
        model, tok = qkv.load(ckpt)
        texts = bundled_texts() if bundled else SENTENCES
        n_tokens = min(len(tok.encode(t)) for t in texts)
        L, H = model.cfg.n_layers, model.cfg.n_heads
        proc, url = start_server("--ckpt", str(ckpt), "--port", str(free_port()), threads=None)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            pg = context.new_page()
            load_page(pg, url + "?lang=en")
            settle(pg)
            for r in range(rounds):
                pg.fill("#text", texts[r % 2])
                act(pg, lambda: pg.click("#analyze"))
                settle(pg)
                choose(pg, layer=(r + 1) % L, head=(r + 2) % H, token=n_tokens - 1 - r, between=lambda: settle(pg))
            timings = pg.evaluate("qkv.timings")
            python_ms, server_ms = view_request_ms(url, texts[0], rounds)
        finally:
            context.close()
            stop(proc)
    by_kind: dict[str, list[dict]] = {}
    for t in timings:
        by_kind.setdefault(t["what"], []).append(t)
    what = "the bundled model" if bundled else "small preset"
    shape = f"{L} layers x {H} heads, d_head {model.cfg.d_head}, d_vocab {model.cfg.d_vocab}"
    print(f"{what} ({shape}), {n_tokens}+ tokens, {rounds} rounds; target < {TARGET_MS} ms")
    print(
        f"{'redraw after a change of':<26}{'script median':>14}{'painted median':>15}{'painted max':>12}"
        f"{'painted < target':>18}{'all cards median':>18}"
    )
    for kind in ("text", "layer", "head", "token"):
        rows = by_kind.get(kind, [])
        if rows:
            script, painted = [t["ms"] for t in rows], [t["paint_ms"] for t in rows]
            print(
                f"{kind:<26}{statistics.median(script):>14.1f}{statistics.median(painted):>15.1f}{max(painted):>12.1f}"
                f"{sum(p < TARGET_MS for p in painted):>13}/{len(painted)}"
                f"{statistics.median(t.get('done_ms') or t['paint_ms'] for t in rows):>18.1f}"
            )
    print(
        f"{'  /api/view from Python':<26}{statistics.median(python_ms):>14.1f}{'':>15}{max(python_ms):>12.1f}"
        "   (the sentence's request alone: server + transfer)"
    )
    if server_ms:
        print(
            f"{'  of which view()':<26}{statistics.median(server_ms):>14.1f}{'':>15}{max(server_ms):>12.1f}"
            "   (the server computing the view document)"
        )
    print(
        f"load average while measuring (other processes share the CPUs): {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )


def screenshot(browser, path: Path) -> None:
    proc, url = start_server("--port", str(free_port()))
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    try:
        pg = context.new_page()
        load_page(pg, url + "?lang=en")
        pg.fill("#text", "我 投资了 苹果 ，")
        act(pg, lambda: pg.click("#analyze"))
        choose(pg, layer=2, head=1, token=3)  # the head that reads the verb (qkv lesson heads), from the comma
        pg.wait_for_selector("#compare-result [data-stage]")
        path.parent.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(path), full_page=True)
        print(f"wrote {path}")
    finally:
        context.close()
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--screenshot", type=Path, metavar="PNG")
    ap.add_argument("--bundled", action="store_true", help="the bundled model on everyday Chinese")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"explorer_redraw: {CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    print(machine())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            measure(browser, args.rounds, args.bundled)
            if args.screenshot:
                screenshot(browser, args.screenshot)
        finally:
            browser.close()


if __name__ == "__main__":
    main()

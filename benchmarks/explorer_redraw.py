"""How fast the explorer page redraws, in a real browser (Debian's Chromium, headless, Playwright).

A `small`-preset GPT (6 layers, 6 heads, d_head 64; random weights, char tokenizer) is served by
`qkv serve` (torch's default threads, as a user runs it); the page shows a 64-token sentence. Each
round changes the sentence, the layer, the head and the query token, pausing after each redraw as a
person would. The page times each redraw itself (`window.qkv.timings`: static/measure.js keeps them
from what the redraw announces, outside the drawing code), from the user's event (for a sentence:
the click, so the request and the decoding count) to the end of the JavaScript that redraws
("script"), and to the painted frame that shows it ("painted": layout and paint included). The cards
below the window (step table, hull, residual, next token) are redrawn right after that frame: "all
cards" is the time until they are painted too (the frame after). Under the sentence change, where
its time goes: the page's request for the view (/api/view, answered as one binary body:
qkv.analysis.packing.binary), from its start to the last byte, and the server's own part of it (its
Server-Timing), and what the sentence change takes besides that part (painted minus the server's
view(): the page's own work, the request and the transfer); then the same request timed from Python
(server + transfer), as the page asks for it and as JSON with base64 arrays (what the request
answers by default).

    python benchmarks/explorer_redraw.py [--rounds 10] [--screenshot docs/img/explorer.png]
    python benchmarks/explorer_redraw.py --bundled    # the bundled model on everyday Chinese instead
    python benchmarks/explorer_redraw.py --ckpt /tmp/qkv-bench/qwen2.5-0.5b-shape [--dtype bfloat16]

--bundled serves the bundled model (4 layers x 4 heads, a vocabulary of ~8,000 tokens) on two texts
of the teacher's sentences (benchmarks/data/teacher_zh.txt), each as many whole sentences as fit in
its n_ctx.

--ckpt DIR measures the bundled model as --bundled does, then serves DIR (a Hugging Face directory,
e.g. the Qwen2.5-0.5B-shaped one benchmarks/llm_load.py builds, or a qkv checkpoint; --dtype: what its
weights load as) and changes between two sentences of at most MAX_TOKENS tokens (an English one and
a Chinese one, cut to fit its tokenizer), against a target of TARGET_LLM_MS for the painted sentence;
then prints both side by side. Before the rounds it waits until the page has no request in flight:
the page's first comparison (`/api/compare`, the position means) holds the model for seconds at that
size, and a sentence sent meanwhile waits for it.

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
import urllib.error
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
# --ckpt: a large model's sentence change, at most MAX_TOKENS tokens, painted within TARGET_LLM_MS
MAX_TOKENS = 32
TARGET_LLM_MS = 1500
LLM_SENTENCES = [
    "The cat sat on the warm mat and looked at the birds outside the window.",
    "我昨天在超市买了三个苹果，味道很甜。",
]


def small_checkpoint(folder: Path) -> Path:
    text = "".join(chr(c) for c in range(0x20, 0x7F))
    tok = qkv.CharTokenizer.train(text)
    torch.manual_seed(0)
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, **qkv.PRESETS["small"].model))
    qkv.save(folder / "small", model, tok)
    return folder / "small"


def bundled_texts(n: int = 2) -> list[str]:
    """n texts of the teacher's sentences, each as many whole ones as the bundled model reads at once."""
    from qkv.core.hub.bundled import default_ckpt

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


BINARY = "application/octet-stream"  # what the page asks /api/view for (server.py)
# the page's requests for a view: from their start to the last byte, and the server's own part of them
PAGE_REQUESTS = """n => performance.getEntriesByType("resource").filter(e => e.name.endsWith("/api/view")).slice(-n)
  .map(e => [e.responseEnd - e.startTime, (e.serverTiming.find(s => s.name === "view") || {}).duration ?? null])"""


def view_request_ms(url: str, text: str, rounds: int, accept: str = BINARY) -> tuple[list[float], list[float]]:
    """The request's time from Python, and the server's own time computing the view (its Server-Timing)."""
    body = json.dumps({"text": text}).encode()
    out, server = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        req = urllib.request.Request(url + "api/view", body, {"content-type": "application/json", "accept": accept})
        with urllib.request.urlopen(req, timeout=60) as res:
            res.read()
            timing = res.headers.get("Server-Timing", "")
        out.append((time.perf_counter() - t) * 1000)
        server += [float(m) for m in re.findall(r"view;dur=([0-9.]+)", timing)]
    return out, server


def post_view(url: str, text: str) -> dict:
    req = urllib.request.Request(
        url + "api/view", json.dumps({"text": text}).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=300) as res:
            return json.loads(res.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"/api/view answered {e.code}: {e.read().decode(errors='replace')[:300]}") from None


def fit_texts(url: str, texts: list[str], max_tokens: int) -> list[str]:
    """Each text, cut (a word or a character at a time, from the end) to at most max_tokens tokens of the
    served model's tokenizer, as /api/view counts them (its answer's tokens)."""
    out = []
    for text in texts:
        while len(post_view(url, text)["tokens"]) > max_tokens and len(text) > 1:
            text = text.rsplit(" ", 1)[0] if " " in text.strip() else text[:-1]
        out.append(text)
    return out


def measure(browser, rounds: int, bundled: bool = False, ckpt: Path | None = None, dtype: str | None = None) -> dict:
    """Serve the model, run the rounds, print its table; returns the numbers the side-by-side table shows."""
    from qkv.core.hub.bundled import default_ckpt

    with tempfile.TemporaryDirectory() as tmp:
        target = TARGET_LLM_MS if ckpt else TARGET_MS
        if ckpt is None:
            ckpt = default_ckpt() if bundled else small_checkpoint(Path(tmp))
        extra = ["--dtype", dtype] if dtype else []
        t_start = time.perf_counter()
        proc, url = start_server("--ckpt", str(ckpt), *extra, "--port", str(free_port()), threads=None)
        started_s = time.perf_counter() - t_start
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            info = json.loads(urllib.request.urlopen(url + "api/model", timeout=60).read())["model"]
            if target == TARGET_LLM_MS:
                texts = fit_texts(url, LLM_SENTENCES, MAX_TOKENS)
            else:
                texts = bundled_texts() if bundled else SENTENCES
            lengths = [len(post_view(url, t)["tokens"]) for t in texts]
            n_tokens = min(lengths)
            L, H = info["n_layers"], info["n_heads"]
            pg = context.new_page()
            t_page = time.perf_counter()
            load_page(pg, url + "?lang=en")
            settle(pg)
            shown_s = time.perf_counter() - t_page
            # the page's own first requests (the comparison card's) answered: the model is free again
            pg.wait_for_function("() => document.body.dataset.busy === '0'", timeout=600_000, polling=100)
            idle_s = time.perf_counter() - t_page
            for r in range(rounds):
                pg.fill("#text", texts[r % 2])
                act(pg, lambda: pg.click("#analyze"), timeout=120_000)
                settle(pg)
                token = max(0, n_tokens - 1 - r % n_tokens)
                choose(pg, layer=(r + 1) % L, head=(r + 2) % H, token=token, between=lambda: settle(pg))
            timings = pg.evaluate("qkv.timings")
            in_page = pg.evaluate(PAGE_REQUESTS, rounds)
            python_ms, server_ms = view_request_ms(url, texts[0], rounds)
            json_ms, _ = view_request_ms(url, texts[0], rounds, accept="application/json")
        finally:
            context.close()
            stop(proc)
    by_kind: dict[str, list[dict]] = {}
    for t in timings:
        by_kind.setdefault(t["what"], []).append(t)
    name = info.get("loaded_from", {}).get("title") or Path(info.get("loaded_from", {}).get("path") or "?").name
    what = (
        "the bundled model" if bundled else "small preset" if target == TARGET_MS else f"{name} ({dtype or 'float32'})"
    )
    shape = f"{L} layers x {H} heads, d_head {info['d_head']}, d_vocab {info['d_vocab']}"
    if target == TARGET_LLM_MS:
        shape += f", d_model {info['d_model']}, {info['parameters'] / 1e6:.0f} M parameters"
    span = f"{min(lengths)}" if min(lengths) == max(lengths) else f"{min(lengths)}-{max(lengths)}"
    print(f"{what} ({shape}), texts of {span} tokens, {rounds} rounds; target < {target} ms")
    if target == TARGET_LLM_MS:
        print(
            f"  server up in {started_s:.1f} s; the page drew its first text {shown_s:.1f} s after it was opened, "
            f"and had no request in flight after {idle_s:.1f} s"
        )
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
                f"{sum(p < target for p in painted):>13}/{len(painted)}"
                f"{statistics.median(t.get('done_ms') or t['paint_ms'] for t in rows):>18.1f}"
            )
    if in_page:
        page_ms, page_server = [r[0] for r in in_page], [r[1] for r in in_page if r[1] is not None]
        print(
            f"{'  its /api/view':<26}{statistics.median(page_ms):>14.1f}{'':>15}{max(page_ms):>12.1f}"
            "   (the page's request: from its start to the last byte)"
        )
        if page_server:
            print(
                f"{'  of which view()':<26}{statistics.median(page_server):>14.1f}{'':>15}{max(page_server):>12.1f}"
                "   (the server computing the view document, meanwhile)"
            )
        if len(page_server) == len(text_rows := by_kind.get("text", [])):  # one request per sentence change
            rest = [t["paint_ms"] - v for t, v in zip(text_rows, page_server)]
            print(
                f"{'  painted - view()':<26}{'':>14}{statistics.median(rest):>15.1f}{max(rest):>12.1f}"
                "   (all but the server's computing: request, transfer, decoding, redraw, paint)"
            )
    print(
        f"{'  /api/view from Python':<26}{statistics.median(python_ms):>14.1f}{'':>15}{max(python_ms):>12.1f}"
        "   (the sentence's request alone: server + transfer, binary as the page asks)"
    )
    if server_ms:
        print(
            f"{'  of which view()':<26}{statistics.median(server_ms):>14.1f}{'':>15}{max(server_ms):>12.1f}"
            "   (the server computing the view document)"
        )
    print(
        f"{'  the same as JSON':<26}{statistics.median(json_ms):>14.1f}{'':>15}{max(json_ms):>12.1f}"
        "   (the arrays in base64)"
    )
    print(
        f"load average while measuring (other processes share the CPUs): {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    text = [t["paint_ms"] for t in by_kind.get("text", [])]
    return {
        "what": what,
        "shape": f"{L} x {H}, d_model {info['d_model']}, d_vocab {info['d_vocab']}",
        "tokens": span,
        "target": target,
        "painted": (statistics.median(text), max(text), sum(p < target for p in text), len(text)) if text else None,
        "others": {
            k: statistics.median(t["paint_ms"] for t in by_kind[k]) for k in ("layer", "head", "token") if k in by_kind
        },
        "view": (statistics.median(python_ms), statistics.median(server_ms) if server_ms else None),
    }


def side_by_side(a: dict, b: dict) -> None:
    """The two models' sentence change (and the rest) in two columns."""
    print()
    print("side by side: a sentence change, from the click to the painted frame (median of the rounds)")
    rows = [
        ("model", a["what"], b["what"]),
        ("shape", a["shape"], b["shape"]),
        ("sentence length, tokens", a["tokens"], b["tokens"]),
    ]
    for m in (a, b):
        p = m["painted"]
        m["_p"] = f"{p[0]:.0f} ms (max {p[1]:.0f})" if p else "-"
        m["_t"] = f"{p[2]}/{p[3]} under {m['target']} ms" if p else "-"
        m["_v"] = (
            f"{m['view'][0]:.0f} ms (view() {m['view'][1]:.0f})"
            if m["view"][1] is not None
            else f"{m['view'][0]:.0f} ms"
        )
        m["_o"] = " / ".join(f"{m['others'][k]:.0f}" for k in ("layer", "head", "token") if k in m["others"]) + " ms"
    rows += [
        ("sentence painted", a["_p"], b["_p"]),
        ("within target", a["_t"], b["_t"]),
        ("/api/view from Python", a["_v"], b["_v"]),
        ("layer / head / token painted", a["_o"], b["_o"]),
    ]
    w0, w1 = max(len(r[0]) for r in rows) + 2, max(len(r[1]) for r in rows) + 3
    for r in rows:
        print(f"{r[0]:<{w0}}{r[1]:<{w1}}{r[2]}")


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
    ap.add_argument(
        "--ckpt", type=Path, metavar="DIR", help="also serve DIR, a sentence of <= 32 tokens, beside the bundled model"
    )
    ap.add_argument(
        "--dtype", choices=("float32", "bfloat16"), help="what --ckpt's weights load as (qkv serve --dtype)"
    )
    args = ap.parse_args()
    if args.dtype and not args.ckpt:
        ap.error("--dtype needs --ckpt")
    if not Path(CHROMIUM).exists():
        sys.exit(f"explorer_redraw: {CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    print(machine())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            if args.ckpt:
                bundled = measure(browser, args.rounds, bundled=True)
                print()
                try:
                    side_by_side(bundled, measure(browser, args.rounds, ckpt=args.ckpt, dtype=args.dtype))
                except RuntimeError as e:  # the server refused the sentence: say so, in one line
                    print(f"{args.ckpt} ({args.dtype or 'float32'}): not measured: {e}")
            else:
                measure(browser, args.rounds, args.bundled)
            if args.screenshot:
                screenshot(browser, args.screenshot)
        finally:
            browser.close()


if __name__ == "__main__":
    main()

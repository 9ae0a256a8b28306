"""Memory per request at Qwen2.5-0.5B's size (issue 32, D and E): the estimate made before a request runs,
the memory it really took, and what is left once it has answered.

The model is benchmarks/llm_load.py's Qwen2.5-0.5B-shaped directory (random weights, built into a temporary
directory unless --dir names one), loaded in float32 (about 2 GB). Through the server's own app
(create_app, in process):
  1. POST /api/explain of --explain tokens (1,000) under the default budget: its estimate
     (footprint.pass_bytes), the peak resident memory during it (VmHWM, reset before it by writing 5 to
     /proc/self/clear_refs) above the resident memory before it, and what it holds after (malloc_trim'd);
  2. the same request made to fail inside the analysis (the lens's unembedding raising) to show a 500
     holds nothing after it answers;
  3. qkv.logit_lens of --lens tokens (2,000) called from Python: refused in one line before anything is
     allocated (it would be 30.4 GB), and the logit lens of --lens-fits tokens (100), measured as in 1;
  4. a server with a budget of --small (3 GB): /api/explain of 2,000 tokens, answered 400 at once.
GB is 10^9 bytes. One run takes a few minutes on 2 cores; it needs about 6 GB free.

    python benchmarks/request_memory.py [--dir DIR] [--explain 1000] [--lens 2000] [--lens-fits 100]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

GB = 10**9


def rss() -> tuple[int, int]:
    """(resident now, peak since the last reset) in bytes: VmRSS and VmHWM."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def settled() -> int:
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss()[0]


def measured(label: str, estimate: int | None, call):
    """Run call(); print its estimate, its peak above the memory before it, and what it left behind."""
    before = settled()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM starts again from VmRSS
    t = time.perf_counter()
    out = call()
    seconds = time.perf_counter() - t
    peak = rss()[1] - before
    after = settled() - before
    est = f"{estimate / GB:6.2f}" if estimate is not None else "     -"
    print(f"{label:46s} estimate {est} GB   peak +{peak / GB:5.2f} GB   after +{after / GB:5.2f} GB   {seconds:5.1f} s")
    return out


def text_of(tok, n: int) -> str:
    """A text of about n tokens in fewer than the server's 4,000 characters: Chinese characters, which this
    byte-level tokenizer (trained on English) reads as about 3 byte tokens each."""
    text = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(n))
    while len(tok.encode(text)) > n:
        text = text[:-1]
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--explain", type=int, default=1000)
    ap.add_argument("--lens", type=int, default=2000)
    ap.add_argument("--lens-fits", type=int, default=100)
    ap.add_argument("--small", default="3GB")
    args = ap.parse_args()

    import torch
    from fastapi.testclient import TestClient
    from llm_load import build_model_dir

    import qkv
    from qkv.analysis import lens
    from qkv.analysis.lens import stream_names
    from qkv.apps.web.budget import parse_size
    from qkv.apps.web.server import create_app
    from qkv.core.hub.pretrained import load_pretrained
    from qkv.core.see.footprint import pass_bytes

    tmp = tempfile.TemporaryDirectory() if args.dir is None else None
    d = build_model_dir(Path(tmp.name) / "qwen" if tmp else args.dir, quiet=True)
    model, tok = load_pretrained(d, "float32")
    cfg = model.cfg
    print(f"model: {model.num_params() / 1e6:.0f} M parameters, float32; resident {rss()[0] / GB:.2f} GB")
    app = create_app(model, tok, "qwen-shaped")
    budget = app.state.passes.budget
    print(f"server budget (default: 3/4 of the memory available): {budget.total / GB:.1f} GB")
    client = TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False)

    text = text_of(tok, args.explain)
    T = len(tok.encode(text))
    wanted = ["probs", *(f"blocks.{L}.attn.hook_pattern" for L in range(cfg.n_layers))]
    r = measured(
        f"/api/explain, {T} tokens, {cfg.n_layers} layers",
        pass_bytes(cfg, T, wanted),
        lambda: client.post("/api/explain", json={"text": text}),
    )
    print(f"  -> {r.status_code}; budget held after: {budget.held}")

    def failing(model, x):
        raise RuntimeError("made to fail")

    unembed = lens.unembed_stream
    lens.unembed_stream = failing
    r = measured(f"/api/lens, {T} tokens, failing", None, lambda: client.post("/api/lens", json={"text": text}))
    lens.unembed_stream = unembed
    print(f"  -> {r.status_code} {r.json()['error']!r}; budget held after: {budget.held}")

    ids = torch.randint(0, cfg.d_vocab, (args.lens,)).tolist()
    try:
        measured(f"qkv.logit_lens, {args.lens} tokens", None, lambda: qkv.logit_lens(model, ids))
    except ValueError as e:
        print(f"qkv.logit_lens, {args.lens} tokens: refused: {e}")
    n = args.lens_fits
    out_bytes = (cfg.n_layers + 1) * n * cfg.d_vocab * 4
    P = measured(
        f"qkv.logit_lens, {n} tokens (kept: {out_bytes / GB:.2f} GB)",
        out_bytes + pass_bytes(cfg, n, stream_names(cfg)),
        lambda: qkv.logit_lens(model, ids[:n]),
    )
    del P

    small = create_app(model, tok, "qwen-shaped", memory=parse_size(args.small))
    long = text_of(tok, 2000)
    c2 = TestClient(small, base_url="http://127.0.0.1:8000", raise_server_exceptions=False)
    r = measured(
        f"/api/explain, 2000 tokens, budget {args.small}", None, lambda: c2.post("/api/explain", json={"text": long})
    )
    print(f"  -> {r.status_code} {r.json()['error']!r}")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()

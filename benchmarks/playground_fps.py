"""How fast the attention playground redraws while a point is dragged, in a real browser
(Debian's Chromium, headless, driven by Playwright). Target: at least 30 redraws (frames) per second.

The page (`qkv serve`, bundled model; the playground itself never calls the server) opens on the
articles' worked example. Playwright presses the real mouse on k1, then k1 goes twice around a
small circle, and the mouse is released. The playground coalesces pointer moves into one redraw per
animation frame; each redraw is stamped with performance.now() (window.qkv.playground.times, .ms:
static/measure.js, from what the redraw announces).
The moves come two ways:

    from Playwright      real mouse events, one at a time: each waits for the browser to take it,
                         so this is the end-to-end rate, bounded by how fast the driver delivers moves
    sent in the page     pointer events dispatched to the same plane every 2 ms (≈ 250 a second,
                         more than one per frame), so the redraw rate is the page's own: the figure
                         held against the target

Measured in the page over each drag: redraws/s; browser/s, the animation frames the browser ran
meanwhile (a requestAnimationFrame counter: the ceiling); moves/s; the JavaScript time of one redraw
(median, max). Rounds with 3 keys (the example) and with 6 (the most the panel takes).

    python benchmarks/playground_fps.py [--moves 300] [--fast-ms 3000] [--rounds 3] [--screenshot PNG]

--screenshot also saves the playground card on the worked example (for the README).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from pathlib import Path

from common import machine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_util import ARGS, CHROMIUM, free_port, from_module, load_page, start_server, stop  # noqa: E402

TARGET_FPS = 30
RAF_COUNTER = (
    "() => { window.pgRaf = 0; const tick = () => { window.pgRaf++; requestAnimationFrame(tick); };"
    " requestAnimationFrame(tick); }"
)
# pointer moves sent from inside the page every 2 ms (the browser holds timers to ≥ 4 ms: ~250 a second),
# around the same circle, to the same svg, with the id of the mouse pointer pressed by Playwright
FAST_MOVES = """([x0, y0, ms, id]) => new Promise((done) => {
  const svg = document.querySelector('#pg-kplane'), t0 = performance.now();
  let n = 0;
  const timer = setInterval(() => {
    const t = performance.now() - t0, a = 4 * Math.PI * Math.min(t, ms) / ms;
    svg.dispatchEvent(new PointerEvent('pointermove', {
      bubbles: true, pointerId: id, isPrimary: true, pointerType: 'mouse',
      clientX: x0 + 60 * Math.sin(a), clientY: y0 - 30 * (1 - Math.cos(a)),
    }));
    n++;
    if (t >= ms) { clearInterval(timer); done(n); }
  }, 2);
})"""


# resolves once the card has not moved for 3 looks 100 ms apart (the cards above it fill in late)
STILL = """() => new Promise((done) => {
  let last = null, same = 0;
  const look = () => {
    const top = document.querySelector('#playground').getBoundingClientRect().top + window.scrollY;
    same = top === last ? same + 1 : 0;
    last = top;
    if (same >= 3) done(top); else setTimeout(look, 100);
  };
  look();
})"""


def wait_idle(pg) -> None:
    pg.wait_for_function("() => !qkv.playground.busy()", polling=50)


def one_drag(pg, moves: int, fast_ms: int) -> dict:
    """Press the mouse on k1 and move it twice around a circle of 60 px: `moves` real mouse moves
    from Playwright, or (fast_ms > 0) pointer moves sent in the page for fast_ms milliseconds."""
    pg.evaluate(STILL)
    pg.locator("#pg-kplane").scroll_into_view_if_needed()
    pg.evaluate("() => { qkv.playground.times.length = 0; qkv.playground.ms.length = 0; }")
    box = pg.locator('#pg-kplane .pg-pt[data-kind="K"][data-j="0"] circle:not(.pg-hit)').bounding_box()
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    pg.mouse.move(x0, y0)
    pg.mouse.down()
    if not from_module(pg, "pg_state.js", "m => !!m.PG.drag"):
        raise RuntimeError(
            "the mouse did not take k1: " + pg.evaluate(f"document.elementFromPoint({x0}, {y0}).outerHTML")
        )
    start = pg.evaluate("() => [performance.now(), window.pgRaf]")
    if fast_ms:
        pointer = from_module(pg, "pg_state.js", "m => m.PG.drag && m.PG.drag.id")
        moves = pg.evaluate(FAST_MOVES, [x0, y0, fast_ms, pointer])
    else:
        for n in range(1, moves + 1):
            a = 4 * math.pi * n / moves
            pg.mouse.move(x0 + 60 * math.sin(a), y0 - 30 * (1 - math.cos(a)))
    end = pg.evaluate("() => [performance.now(), window.pgRaf]")
    pg.mouse.up()
    wait_idle(pg)
    times, ms = pg.evaluate("[qkv.playground.times.slice(), qkv.playground.ms.slice()]")
    during = [m for t, m in zip(times, ms) if start[0] <= t <= end[0]]
    span_s = (end[0] - start[0]) / 1000
    if not during:
        raise RuntimeError("the drag did not redraw the playground: was k1 under the mouse?")
    return {
        "redraws_per_s": len(during) / span_s,
        "browser_per_s": (end[1] - start[1]) / span_s,
        "moves_per_s": moves / span_s,
        "ms": during,
    }


def measure(browser, url: str, moves: int, fast_ms: int, rounds: int) -> dict[int, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        pg = context.new_page()
        load_page(pg, url + "?lang=en")
        pg.wait_for_function("() => window.qkv.playground && qkv.playground.frames > 0")
        pg.wait_for_function("() => document.body.dataset.busy !== '1'")
        pg.evaluate(RAF_COUNTER)
        pg.evaluate(STILL)
        idle = pg.evaluate(
            "() => new Promise((done) => { const n = window.pgRaf, t = performance.now();"
            " setTimeout(() => done((window.pgRaf - n) / (performance.now() - t) * 1000), 2000); })"
        )
        print(f"browser idle (nothing redrawn): {idle:.1f} frames/s")
        print(f"playground drag, {rounds} rounds each; target ≥ {TARGET_FPS} redraws/s")
        print(
            f"{'keys':<6}{'pointer moves':<34}{'redraws/s':>10}{'browser/s':>11}{'moves/s':>9}"
            f"{'script ms median':>18}{'max':>7}"
        )
        figures = {}
        for keys in (3, 6):
            while pg.eval_on_selector_all("#pg-kplane .pg-key", "ks => ks.length") < keys:
                pg.click("#playground .pg-add")
                wait_idle(pg)
            for how, fast in (
                (f"{moves} from Playwright (real mouse)", 0),
                (f"sent in the page for {fast_ms} ms", fast_ms),
            ):
                runs = [one_drag(pg, moves, fast) for _ in range(rounds)]
                fps = statistics.median(r["redraws_per_s"] for r in runs)
                ms = [m for r in runs for m in r["ms"]]
                print(
                    f"{keys:<6}{how:<34}{fps:>10.1f}{statistics.median(r['browser_per_s'] for r in runs):>11.1f}"
                    f"{statistics.median(r['moves_per_s'] for r in runs):>9.0f}"
                    f"{statistics.median(ms):>18.2f}{max(ms):>7.2f}"
                )
                if fast:
                    figures[keys] = fps
        return figures
    finally:
        context.close()


def screenshot(browser, url: str, path: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    try:
        pg = context.new_page()
        load_page(pg, url + "?lang=en")
        pg.wait_for_function("() => window.qkv.playground && qkv.playground.frames > 0 && !qkv.playground.busy()")
        path.parent.mkdir(parents=True, exist_ok=True)
        pg.locator("#playground").screenshot(path=str(path))
        print(f"wrote {path}")
    finally:
        context.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moves", type=int, default=300, help="real mouse moves a round (default 300)")
    ap.add_argument(
        "--fast-ms", type=int, default=3000, help="milliseconds of in-page pointer moves a round (default 3000)"
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--screenshot", type=Path, metavar="PNG")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"playground_fps: {CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    print(f"{machine()}; load average {os.getloadavg()[0]:.1f} (other work on this machine slows the browser)")
    proc, url = start_server("--port", str(free_port()))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                figures = measure(browser, url, args.moves, args.fast_ms, args.rounds)
                print(
                    "playground drag: "
                    + ", ".join(f"{fps:.0f} frames/s with {keys} keys" for keys, fps in figures.items())
                    + f" (target ≥ {TARGET_FPS})"
                )
                if args.screenshot:
                    screenshot(browser, url, args.screenshot)
            finally:
                browser.close()
    finally:
        stop(proc)


if __name__ == "__main__":
    main()

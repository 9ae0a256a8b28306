"""The README's pictures of the guided tour, one step per language.

    python scripts/tour_screenshots.py       # writes docs/img/tour-zh.png and docs/img/tour-en.png

Serves the bundled model with `qkv serve`, opens the page in Debian's Chromium (headless, through
Playwright, as the browser tests do) at 1280 x 900 on the address a reader would share (?lang=..&tour=N),
waits until the step has measured what it names, and saves the window.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_util import ARGS, CHROMIUM, free_port, load_page, start_server, stop  # noqa: E402

OUT = ROOT / "docs" / "img"
SHOTS = {"zh": 6, "en": 4}  # 我打你 / 你打我 with positions off; 苹果 in two contexts


def main() -> None:
    from playwright.sync_api import sync_playwright

    proc, url = start_server("--port", str(free_port()))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for lang, step in SHOTS.items():
                pg = browser.new_page(viewport={"width": 1280, "height": 900})
                load_page(pg, f"{url}?lang={lang}&tour={step}")
                pg.wait_for_function(
                    "() => { const t = document.querySelector('#tour'); return t && t.dataset.ready === '1'"
                    " && document.body.dataset.busy === '0'; }",
                    timeout=60_000,
                    polling=100,
                )
                pg.wait_for_timeout(800)
                pg.screenshot(path=str(OUT / f"tour-{lang}.png"))
                print(OUT / f"tour-{lang}.png")
                pg.close()
            browser.close()
    finally:
        stop(proc)


if __name__ == "__main__":
    main()

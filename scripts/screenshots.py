"""The README's pictures of the explorer's panels, in English and in Chinese.

    python scripts/screenshots.py            # writes docs/img/panel-NAME-{en,zh}.png

Serves the bundled model with `qkv serve`, opens the page in Debian's Chromium (headless, through
Playwright, as the browser tests do) at 1280 x 900, and saves each panel's card as it opens, after
one action where the panel needs one to show something (a head switched off, two sentences).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_util import ARGS, CHROMIUM, free_port, load_page, start_server, stop  # noqa: E402

OUT = ROOT / "docs" / "img"
PANELS = ("playground", "origin", "ablate", "side", "transform", "vocab")


def settle(pg) -> None:
    """Let the panels' debounced requests come back and paint."""
    pg.wait_for_timeout(400)
    pg.wait_for_function("() => document.body.dataset.busy !== '1'", polling=100)
    pg.wait_for_timeout(1200)


def prepare(pg, name: str) -> None:
    if name == "ablate":  # switch one head off, so that the before → after table has numbers
        button = pg.query_selector("#ablate button[data-layer='0'][data-head='0'], #ablate [data-head]")
        if button:
            button.click()


def main() -> None:
    from playwright.sync_api import sync_playwright

    proc, url = start_server("--port", str(free_port()))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for lang in ("en", "zh"):
                pg = browser.new_page(viewport={"width": 1280, "height": 900})
                load_page(pg, f"{url}?lang={lang}")
                settle(pg)
                for name in PANELS:
                    card = pg.query_selector(f"#{name}")
                    card.scroll_into_view_if_needed()
                    prepare(pg, name)
                    settle(pg)
                    path = OUT / f"panel-{name}-{lang}.png"
                    card.screenshot(path=str(path))
                    print(path.relative_to(ROOT))
                pg.close()
            browser.close()
    finally:
        stop(proc)


if __name__ == "__main__":
    main()

"""The bundle runs as the ES modules do, in Chromium: the same program, served as modules over HTTP
and opened from disk as the one inline module script qkv.apps.web.bundle makes of it, logs the same
evaluation order and the same values (a shared object, a function called before its module's later
lines, a renamed import, a side-effect import)."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from browser_fixtures import browser, require_chromium  # noqa: F401

from qkv.apps.web import bundle

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

PROGRAM = {
    "main.js": """import { log } from "./log.js";
import { shared, bump as add } from "./state.js";
import "./panel.js";
import { late } from "./late.js";
log("main", shared.n, late());
add(); log("main after", shared.n);
document.title = "done";
""",
    "log.js": """export const out = [];
window.out = out;
export function log(...xs) { out.push(xs.join(" ")); }
""",
    "state.js": """import { log } from "./log.js";
export const shared = { n: 0 };
export function bump() { shared.n += 1; return twice(shared.n); }
function twice(x) { return 2 * x; }
log("state", typeof bump, bump());
""",
    "panel.js": """import { log } from "./log.js";
import { shared, bump } from "./state.js";
const n = 10;  // a name main.js does not see
shared.n += n;
log("panel", shared.n, bump());
""",
    "late.js": """import { log } from "./log.js";
export const late = () => typeof n;
log("late", this === undefined);
""",
}


def run_served(browser, root) -> list[str]:  # noqa: F811
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        pg = context.new_page()
        pg.goto(f"http://127.0.0.1:{httpd.server_address[1]}/index.html")
        pg.wait_for_function("() => document.title === 'done'")
        return pg.evaluate("window.out")
    finally:
        context.close()
        httpd.shutdown()


def test_the_bundle_runs_as_the_modules_do(browser, tmp_path):  # noqa: F811
    served = tmp_path / "served"
    served.mkdir()
    for name, text in PROGRAM.items():
        (served / name).write_text(text, encoding="utf-8")
    (served / "index.html").write_text('<!doctype html><script type="module" src="main.js"></script>')
    modules = run_served(browser, served)

    page = tmp_path / "page.html"
    script = bundle.bundle("main.js", lambda name: PROGRAM[name])
    page.write_text(f'<!doctype html><script type="module">\n{script}</script>', encoding="utf-8")
    context = browser.new_context(offline=True)
    try:
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(page.as_uri())
        pg.wait_for_function("() => document.title === 'done'")
        bundled = pg.evaluate("window.out")
    finally:
        context.close()
    assert modules == ["state function 2", "panel 11 24", "late true", "main 12 undefined", "main after 13"]
    assert bundled == modules and errors == []

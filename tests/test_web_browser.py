"""The explorer in a real browser: Debian's Chromium, headless, driven by Playwright.

A real `qkv serve` process is started; the test types a sentence, switches layer and head, clicks a
token, and checks that the numbers on the page are the API's (`/api/explain`, computed by a
different path than the page's view document). The static export is opened from disk with the
network off. Redraw times are printed (speed is reported, not asserted: see benchmarks/).

No browser is downloaded: without /usr/bin/chromium these tests skip (and fail under CI=true;
`make test` installs the package).
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys

import pytest
from browser_fixtures import browser, from_module, near, numbers, page, require_chromium, shown_equal, step_rows  # noqa: F401
from browser_util import act, api, choose, free_port, load_page, settle, start_server, stop

SENTENCE = "我 投资了 苹果 ，"
require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


# ---------------------------------------------------------------------------
# reading numbers off the page
# ---------------------------------------------------------------------------


def check_against_api(pg, url, text, layer, head, token):
    doc = api(url, "api/explain", {"text": text, "layer": layer, "head": head, "token": token, "top": 10})
    rows = step_rows(pg)
    assert sorted(rows) == [r["pos"] for r in doc["attention"]["rows"]]
    for r in doc["attention"]["rows"]:
        shown = rows[r["pos"]]
        assert shown["token"] == r["token"]
        for field in ("dot", "scaled", "weight"):
            assert shown_equal(shown[field], r[field]), (field, r["pos"], shown[field], r[field])
    values = {v["pos"]: v for v in doc["z"]["values"]}
    for pos, v in values.items():
        assert shown_equal(rows[pos]["v_norm"], v["v_norm"]) and shown_equal(
            rows[pos]["contribution"], v["contribution"]
        )
    assert shown_equal(pg.inner_text("#z-norm").strip(), doc["z"]["norm"])
    first = numbers(pg.inner_text("#z-first"))
    assert len(first) >= len(doc["z"]["first"])
    assert all(near(a, b) for a, b in zip(first, doc["z"]["first"])), (first, doc["z"]["first"])
    for field in ("x", "head_out", "attn_out", "x_plus_attn", "resid_mid"):
        shown = numbers(pg.inner_text(f"#residual [data-field={field}]"))
        assert any(near(s, doc["residual"][field]) for s in shown), (field, shown, doc["residual"][field])
    for top in doc["next"]["top"]:
        bar = pg.inner_text(f"#next .bar[data-rank='{top['rank']}']")
        assert top["token"] in bar and any(near(s, top["prob"]) for s in numbers(bar)), (bar, top)
    return doc


def z_inside_drawn_hull(pg) -> bool:
    """The ✕ of z, as drawn, lies inside the drawn hull polygon (its centre, by the crossing rule)."""
    return pg.evaluate(r"""() => {
        const poly = document.querySelector('#hull polygon.hull');
        const d = document.querySelector('#hull g.z path').getAttribute('d');  // M x-6,y-6 L x+6,y+6 ...
        const [x0, y0] = d.slice(1).split('L')[0].split(',').map(Number), x = x0 + 6, y = y0 + 6;
        const p = poly.getAttribute('points').trim().split(/\s+/).map(q => q.split(',').map(Number));
        let inside = false;
        for (let i = 0, j = p.length - 1; i < p.length; j = i++)
            if ((p[i][1] > y) !== (p[j][1] > y)
                && x < (p[j][0] - p[i][0]) * (y - p[i][1]) / (p[j][1] - p[i][1]) + p[i][0])
                inside = !inside;
        return inside;
    }""")


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------


def test_qkv_serve_shows_the_bundled_model_and_its_numbers(page, server):
    load_page(page, server + "?lang=en")
    assert "bundled" in page.inner_text("#model-line")
    page.fill("#text", SENTENCE)
    act(page, lambda: page.click("#analyze"))
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent.trim())")
    assert tokens == [t.strip() for t in api(server, "api/view", {"text": SENTENCE})["tokens"]]  # the model's own
    T = len(tokens)
    choose(page, layer=1, head=2, token=T - 2)
    assert page.evaluate("[qkv.state.layer, qkv.state.head, qkv.state.token]") == [1, 2, T - 2]
    check_against_api(page, server, SENTENCE, 1, 2, T - 2)
    assert z_inside_drawn_hull(page)
    choose(page, layer=3, head=0, token=T - 3)  # and again after switching everything
    act(page, lambda: page.keyboard.press("ArrowRight"))  # the arrow keys move the query token
    assert page.evaluate("qkv.state.token") == T - 2
    check_against_api(page, server, SENTENCE, 3, 0, T - 2)
    assert page.errors == []


def test_the_pages_arithmetic_is_the_models_bit_for_bit(page, server):
    """The page's own decode (lower triangles) and scaledScores (decode.js), run in the page, against the trace.

    The view document and the trace are both computed here, in one process with the same ops, so the
    dots and the pattern are the same floats; Math.fround(dot / Math.fround(scale)) is then the same
    correctly rounded IEEE division as torch's: bit for bit by construction."""
    import torch

    from qkv import load
    from qkv.analysis.packing import pack
    from qkv.apps.web.view import view
    from qkv.core.hub.bundled import default_ckpt

    model, tokenizer = load(default_ckpt())
    _, tr = model.run_with_trace(torch.tensor([tokenizer.encode(SENTENCE)]))
    stack = lambda hook: torch.stack([tr[hook, L][0] for L in range(model.cfg.n_layers)])
    load_page(page, server + "?lang=en")
    mismatches = from_module(
        page,
        "decode.js",
        """({ decode, scaledScores }, [doc, scores, pattern]) => {
        const m = doc.model, T = doc.tokens.length;
        const mine = [scaledScores(decode(doc.arrays.dots), m.n_layers, m.n_heads, T, doc.scale, m.causal),
                      decode(doc.arrays.pattern)];
        const model = [decode(scores), decode(pattern)];
        return mine.map((a, n) => a.length !== model[n].length ? -1 : a.filter((x, i) => x !== model[n][i]).length);
    }""",
        [view(model, tokenizer, SENTENCE), pack(stack("attn_scores")), pack(stack("pattern"))],
    )
    assert mismatches == [0, 0]


def test_the_language_switch_changes_every_label(page, server):
    load_page(page, server + "?lang=en")
    labels = lambda: page.eval_on_selector_all("[data-i18n]", "es => es.map(e => e.textContent.trim())")
    english = labels()
    assert english and all(english) and not any(re.search(r"[\u4e00-\u9fff]", t) for t in english)
    act(page, lambda: page.click("#lang"))
    chinese = labels()
    assert all(chinese) and all(a != b for a, b in zip(english, chinese) if re.search("[a-z]{3}", a)), [
        (a, b) for a, b in zip(english, chinese) if a == b
    ]
    assert re.search(r"[\u4e00-\u9fff]", page.inner_text("#steps")) and page.evaluate("qkv.state.lang") == "zh"
    act(page, lambda: page.click("#lang"))
    assert labels() == english


def test_bad_input_shows_the_servers_message_and_keeps_the_view(page, server):
    load_page(page, server + "?lang=en")
    before = page.eval_on_selector_all("#tokens .token", "ts => ts.length")
    page.fill("#text", " ".join(["苹果"] * 300))  # more tokens than n_ctx (unknown words are read now: a fallback)
    page.click("#analyze")
    page.wait_for_selector("#error:not([hidden])")
    assert "n_ctx" in page.inner_text("#error")
    assert page.eval_on_selector_all("#tokens .token", "ts => ts.length") == before


def test_chinese_typed_without_spaces_is_shown_cut_into_words(page, server):
    load_page(page, server + "?lang=en")
    page.fill("#text", "我投资了苹果，")  # fill leaves the focus in the box: Enter analyses
    act(page, lambda: page.keyboard.press("Enter"))
    assert page.input_value("#text") == "我投资了苹果，"  # the box keeps what was typed; the tokens show the cut
    assert (
        page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
        == api(server, "api/view", {"text": SENTENCE})["tokens"]
    )


def test_generate_and_compare_use_the_api(page, server):
    load_page(page, server + "?lang=en")
    page.fill("#text", SENTENCE)
    act(page, lambda: page.click("#analyze"))
    page.fill("#temperature", "0")
    page.fill("#max-new", "6")
    act(page, lambda: page.click("#generate"))
    # the page asked the same server for the same greedy tokens: equal by construction
    expected = api(server, "api/generate", {"text": SENTENCE, "max_new_tokens": 6, "temperature": 0})
    assert page.input_value("#text") == expected["text"]
    shown = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    assert shown == api(server, "api/view", {"ids": expected["ids"]})["tokens"]  # the tokens generated
    page.wait_for_selector("#compare-result [data-stage]")
    doc = api(
        server,
        "api/compare",
        {
            "a": page.input_value("#compare-a"),
            "b": page.input_value("#compare-b"),
            "word": page.input_value("#compare-word"),
        },
    )
    for stage in doc["stages"]:
        shown = numbers(page.inner_text(f"#compare-result [data-stage='{stage['label']}']"))
        assert any(abs(s - stage["cosine"]) <= 5.01e-5 for s in shown), (stage, shown)  # the same server's numbers


def test_the_server_reads_no_file_but_its_assets(server):
    """Raw requests (no client-side path normalisation) against the running server."""
    host, port = server.split("//")[1].rstrip("/").split(":")
    for path in [
        "/assets/../../../../etc/passwd",
        "/assets/..%2f..%2fserver.py",
        "/assets/%2e%2e/%2e%2e/cli.py",
        "/../../etc/passwd",
        "/assets/....//....//etc/passwd",
        "//etc/passwd",
        "/assets/%252e%252e%252fcli.py",
    ]:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", f"{host}:{port}")
        conn.endheaders()
        r = conn.getresponse()
        body = r.read().decode("utf-8", "replace")
        assert r.status == 404, (path, r.status)
        assert "root:" not in body and "def " not in body, path
        conn.close()


def test_static_export_works_from_disk_with_the_network_off(browser, tmp_path, server):
    out = tmp_path / "attention.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "qkv",
            "explain",
            SENTENCE,
            "--html",
            str(out),
            "--layer",
            "2",
            "--head",
            "1",
            "--token",
            "-3",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=en")
        assert pg.evaluate("qkv.mode") == "static"
        assert pg.is_disabled("#analyze") and pg.is_disabled("#generate")
        T = len(api(server, "api/view", {"text": SENTENCE})["ids"])
        assert pg.evaluate("[qkv.state.layer, qkv.state.head, qkv.state.token]") == [2, 1, T - 3]  # as exported
        check_against_api(pg, server, SENTENCE, 2, 1, T - 3)
        assert pg.query_selector_all("#compare-result [data-stage]")
        assert [u for u in requests if not u.startswith("file:")] == []
        assert errors == []
    finally:
        context.close()


def test_redraw_times_on_the_small_preset(browser, tmp_path):
    """64 tokens, 6 layers x 6 heads, d_head 64: report how long each redraw takes."""
    import torch

    import qkv

    text = "".join(chr(c) for c in range(0x20, 0x7F))
    tok = qkv.CharTokenizer.train(text)
    torch.manual_seed(0)
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, **qkv.PRESETS["small"].model))
    qkv.save(tmp_path / "small", model, tok)
    proc, url = start_server("--ckpt", str(tmp_path / "small"), "--port", str(free_port()))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        pg = context.new_page()
        load_page(pg, url + "?lang=en")
        sentence = "To be, or not to be, that is the question: Whether 'tis nobler i"
        assert len(sentence) == 64
        pg.fill("#text", sentence)
        act(pg, lambda: pg.click("#analyze"))
        assert pg.eval_on_selector_all("#tokens .token", "ts => ts.length") == 64
        for layer, head, token in [(5, 5, 63), (2, 3, 40), (0, 1, 10)]:
            choose(pg, layer, head, token)
        check_against_api(pg, url, sentence, 0, 1, 10)
        settle(pg)
        act(pg, lambda: pg.click("#analyze"))
        settle(pg)
        by_kind = {}
        for t in pg.evaluate("qkv.timings"):
            by_kind.setdefault(t["what"], []).append(t)
        assert {"text", "layer", "head", "token"} <= set(by_kind)
        print(
            "\nredraw ms (small preset, 64 tokens; script / painted): "
            + ", ".join(
                f"{k} {max(t['ms'] for t in v):.0f} / {max(t['paint_ms'] or 0 for t in v):.0f}"
                for k, v in sorted(by_kind.items())
            )
        )

        # markup in the text is shown as text, never run (and the policy would refuse inline handlers)
        payload = '<img src=x onerror="window.pwned=1"><b>x</b>'
        pg.fill("#text", payload)
        act(pg, lambda: pg.click("#analyze"))
        shown = pg.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent).join('')")
        assert shown == payload.replace(" ", "␣")  # spaces are shown as ␣
        assert pg.evaluate("[window.pwned, document.querySelectorAll('img, [onerror]').length]") == [None, 0]
    finally:
        context.close()
        stop(proc)

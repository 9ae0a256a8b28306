"""The intervention panels in a real browser (Debian's Chromium, headless, Playwright): the logit lens,
direct logit attribution and activation patching, in English and in Chinese.

A `qkv serve` of the bundled model runs on a free port. The numbers read off the page are held against the
Python API called here (lens_top, logit_attribution, patch_text), and the model's own logit for the
attribution's sum; a refusal shown in a panel is the server's line in the page's language. An encoder, a
translation model and the static export say in one line that they cannot show these panels. At phone width
(390 px) nothing of the panels sticks out of its card.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest
import torch
from browser_fixtures import bring_into_view, browser, open_page, page, require_chromium, shown_equal  # noqa: F401
from browser_util import act, choose, free_port, from_module, load_page, settle, start_server, stop

import qkv
from qkv.analysis.attribution import logit_attribution
from qkv.analysis.lens import lens_top
from qkv.analysis.patch import patch_text
from qkv.core.bundled import default_ckpt
from qkv.core.checkpoint import load

SENTENCE = "我 投资了 苹果 ，"
CLEAN, CORRUPT, ANSWER, WRONG = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，", "味道", "股价"
HAN = re.compile("[\u4e00-\u9fff]")
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


def refusal(url: str, path: str, body: dict, lang: str) -> str:
    """The server's one line for a refused request, asked in `lang`."""
    headers = {"content-type": "application/json", "accept-language": lang}
    req = urllib.request.Request(url + path, json.dumps(body).encode(), headers)
    try:
        urllib.request.urlopen(req, timeout=60)
    except urllib.error.HTTPError as e:
        return json.loads(e.read())["error"]
    raise AssertionError(f"{path} {body} was not refused")


def open_on(pg, url, lang, token=None):
    """The page in `lang` on SENTENCE, query token `token` (None: the page's default); the ids it shows."""
    load_page(pg, url + f"?lang={lang}")
    pg.fill("#text", SENTENCE)
    act(pg, lambda: pg.click("#analyze"))
    if token is not None:
        choose(pg, 0, 0, token)
    return pg.evaluate("qkv.view.ids"), pg.evaluate("qkv.state.token")


def wait_state(pg, sel, extra=""):
    bring_into_view(pg, sel)  # the panel sleeps while off-screen
    pg.wait_for_selector(f"{sel}[data-state=ready]{extra}", timeout=60_000)


def said_in(text: str, lang: str) -> bool:
    """Chinese text holds Han characters; English none (the model's tokens in quotes aside)."""
    return bool(HAN.search(text)) if lang == "zh" else not HAN.search(re.sub(r"“[^”]*”", "", text))


# ------------------------------------------------------------------ the logit lens


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lens_shows_lens_top_at_the_chosen_token(page, server, bundled, lang):
    model, tok = bundled
    ids, i = open_on(page, server, lang, token=2)
    assert i == 2
    wait_state(page, "#lens", f"[data-token='{i}'][data-ids='{','.join(map(str, ids))}']")
    want = lens_top(model, ids, position=i, k=5, tokenizer=tok)
    rows = page.eval_on_selector_all(
        "#lens tr[data-layer]",
        """rs => rs.map(r => ({layer: +r.dataset.layer,
            cells: [...r.querySelectorAll('td.lens-cell')].map(c => ({id: +c.dataset.id,
                tok: c.querySelector('.tok').textContent, p: c.querySelector('[data-field=p]').textContent,
                final: c.classList.contains('final'), first: c.classList.contains('first')})),
            p_final: r.querySelector('[data-field=p_final]').textContent}))""",
    )
    assert [r["layer"] for r in rows] == list(range(model.cfg.n_layers + 1))
    final = want["final"]["id"]
    first = next(L for L, row in enumerate(want["layers"]) if any(c["id"] == final for c in row["top"]))
    for r, w in zip(rows, want["layers"]):
        assert [c["id"] for c in r["cells"]] == [c["id"] for c in w["top"]], r["layer"]
        assert [c["tok"] for c in r["cells"]] == [c["token"] for c in w["top"]]
        assert all(shown_equal(c["p"], x["p"]) for c, x in zip(r["cells"], w["top"])), r["layer"]
        assert shown_equal(r["p_final"], w["p_final"])
        assert [c["final"] for c in r["cells"]] == [c["id"] == final for c in w["top"]]
        assert [c["first"] for c in r["cells"]] == [c["id"] == final and r["layer"] == first for c in w["top"]]
    # the top token of the last row is the model's own next-token prediction at the chosen position
    with torch.no_grad():
        assert rows[-1]["cells"][0]["id"] == int(model(torch.tensor([ids]))[0, i].argmax())
    title = page.inner_text("#lens h2")
    assert said_in(title, lang) and tok.display(ids[i]) in title
    assert said_in(page.inner_text("#lens-first"), lang) and want["final"]["token"] in page.inner_text("#lens-first")
    assert page.errors == []


# ------------------------------------------------------------------ direct logit attribution


def attribution_shown(pg) -> dict:
    return pg.evaluate(
        """() => ({
        total: document.querySelector('#attr-result [data-field=total]').textContent,
        logit: document.querySelector('#attr-result [data-field=logit]').textContent,
        heads: [...document.querySelectorAll('#attr-result td[data-layer]')].map(c =>
            [+c.dataset.layer, +c.dataset.head, c.textContent, c.title]),
        bars: [...document.querySelectorAll('#attr-result .attr-bar')].map(b =>
            [b.dataset.name, b.querySelector('[data-field=value]').textContent]),
        title: document.querySelector('#attr-h').textContent})"""
    )


def check_attribution(shown, a, model, ids, i):
    assert shown_equal(shown["total"], a.total) and shown_equal(shown["logit"], a.logit)
    with torch.no_grad():  # the model's own logit, by its plain forward: what the terms add up to
        assert shown_equal(shown["logit"], float(model(torch.tensor([ids]))[0, i, a.token]))
    heads = {(L, h): (text, title) for L, h, text, title in shown["heads"]}
    assert sorted(heads) == [(L, h) for L in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)]
    for (L, h), (text, title) in heads.items():
        assert shown_equal(text, float(a.heads[L, h])) and text in title, (L, h)
    others = {k: v for k, v in a.components.items() if not re.fullmatch(r"L\d+H\d+", k)}
    assert [name for name, _ in shown["bars"]] == list(others)
    assert all(shown_equal(text, others[name]) for name, text in shown["bars"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_attribution_shows_each_term_and_their_sum(page, server, bundled, lang):
    model, tok = bundled
    ids, i = open_on(page, server, lang)
    key = ",".join(map(str, ids))
    wait_state(page, "#attribution", f"[data-token='{i}'][data-ids='{key}']")
    a = logit_attribution(model, ids, position=i, tokenizer=tok)  # the model's top prediction
    assert page.get_attribute("#attribution", "data-target") == str(a.token)
    shown = attribution_shown(page)
    check_attribution(shown, a, model, ids, i)
    assert a.token_text in shown["title"] and said_in(shown["title"], lang)
    # another next token, typed
    page.fill("#attr-target", ANSWER)
    page.click("#attr-run")
    b = logit_attribution(model, ids, position=i, token=ANSWER, tokenizer=tok)
    page.wait_for_selector(f"#attribution[data-state=ready][data-target='{b.token}']", timeout=60_000)
    check_attribution(attribution_shown(page), b, model, ids, i)
    # a word of two tokens: the server's line, in the page's language, in the panel's error line
    page.fill("#attr-target", "吃了 苹果")
    page.press("#attr-target", "Enter")
    page.wait_for_selector("#attr-error:not([hidden])", timeout=60_000)
    body = {"ids": ids, "token": i, "target": "吃了 苹果"}
    assert page.inner_text("#attr-error") == refusal(server, "api/attribution", body, lang)
    assert "error" in page.get_attribute("#attr-error", "class")
    assert [e for e in page.errors if "status of 400" not in e] == []


# ------------------------------------------------------------------ activation patching


def patch_cells(pg) -> dict:
    return {
        (c[0], c[1]): (c[2], c[3])
        for c in pg.eval_on_selector_all(
            "#patch-result td[data-layer]",
            "cs => cs.map(c => [+c.dataset.layer, +c.dataset.col, c.textContent, c.title])",
        )
    }


def check_patch(pg, r, model, n):
    cells, share = patch_cells(pg), r.normalized()
    assert sorted(cells) == [(L, c) for L in range(model.cfg.n_layers) for c in range(n)]
    for (L, c), (text, title) in cells.items():
        s, m = float(share[L, c]), float(r.values[L, c])
        assert abs(float(text) - s) <= 0.005 + 1e-6, (L, c, text, s)  # two decimals in the cell
        shown = re.findall(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?", title)  # the share and m, as the page writes them
        assert shown_equal(shown[-2], s) and shown_equal(shown[-1], m), (L, c, title)
    assert shown_equal(pg.inner_text("#patch-metric [data-field=clean]"), r.clean)
    assert shown_equal(pg.inner_text("#patch-metric [data-field=corrupted]"), r.corrupted)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_patching_shows_each_pieces_share_as_patch_text(page, server, bundled, lang):
    model, tok = bundled
    open_on(page, server, lang)
    wait_state(page, "#patch", "[data-site=resid_pre]")  # it patches the pair it opens on when first seen
    assert [page.input_value(f"#patch-{n}") for n in ("clean", "corrupt", "answer", "wrong")] == [
        CLEAN, CORRUPT, ANSWER, WRONG
    ]  # fmt: skip
    r = patch_text(model, tok, CLEAN, CORRUPT, ANSWER, WRONG, site="resid_pre")
    T = len(r.clean_ids)
    check_patch(page, r, model, T)
    heads = page.eval_on_selector_all("#patch-result thead th[data-col]", "hs => hs.map(h => h.textContent)")
    assert heads == [
        f"{c}{a}" + ("" if a == b else b) for c, (a, b) in enumerate(zip(*r.to_json(tok)["tokens"].values()))
    ]
    metric = page.inner_text("#patch-metric")
    assert ANSWER in metric and WRONG in metric and said_in(page.inner_text("#patch-result .caption"), lang)
    # a tap (a click) writes the cell's line: its share and m
    page.click("#patch-result td[data-layer='0'][data-col='2']")
    assert page.inner_text("#patch-cell") == page.get_attribute(
        "#patch-result td[data-layer='0'][data-col='2']", "title"
    )
    # per head
    before = page.get_attribute("#patch", "data-ready")
    page.select_option("#patch-site", "z")
    page.wait_for_function(
        "n => { const p = document.querySelector('#patch'); return p.dataset.ready !== n && p.dataset.site === 'z'; }",
        arg=before,
        timeout=60_000,
    )
    check_patch(page, patch_text(model, tok, CLEAN, CORRUPT, ANSWER, WRONG, site="z"), model, model.cfg.n_heads)
    assert page.eval_on_selector_all("#patch-result thead th[data-col]", "hs => hs.map(h => h.textContent)") == [
        f"H{h}" for h in range(model.cfg.n_heads)
    ]
    # texts of unequal length, then a word of two tokens: the server's line in the page's language
    for field, value in (("corrupt", SENTENCE), ("answer", "味道 很")):
        page.fill(f"#patch-{field}", value)
        page.click("#patch-run")
        page.wait_for_selector("#patch-error:not([hidden])", timeout=60_000)
        body = {"clean": CLEAN, "wrong": WRONG, "site": "z"}
        body |= {"corrupt": page.input_value("#patch-corrupt"), "answer": page.input_value("#patch-answer")}
        page.wait_for_function(
            "t => document.querySelector('#patch-error').textContent === t",
            arg=refusal(server, "api/patch", body, lang),
            timeout=60_000,
        )
        assert said_in(page.inner_text("#patch-error"), lang)
    assert [e for e in page.errors if "status of 400" not in e] == []


def test_a_language_switch_says_the_panels_and_their_errors_again(page, server, bundled):
    model, tok = bundled
    ids, i = open_on(page, server, "en")
    wait_state(page, "#patch", "[data-site=resid_pre]")
    page.fill("#patch-corrupt", SENTENCE)
    page.click("#patch-run")
    page.wait_for_selector("#patch-error:not([hidden])", timeout=60_000)
    body = {"clean": CLEAN, "corrupt": SENTENCE, "answer": ANSWER, "wrong": WRONG, "site": "resid_pre"}
    assert page.inner_text("#patch-error") == refusal(server, "api/patch", body, "en")
    act(page, lambda: page.click("#lang"))
    bring_into_view(page, "#patch")
    page.wait_for_function(
        "t => document.querySelector('#patch-error').textContent === t", arg=refusal(server, "api/patch", body, "zh")
    )
    assert HAN.search(page.inner_text("#patch h2")) and HAN.search(page.inner_text("#patch-site-note"))
    wait_state(page, "#lens", f"[data-token='{i}']")
    assert HAN.search(page.inner_text("#lens h2")) and HAN.search(page.inner_text("#lens .caption"))
    wait_state(page, "#attribution", f"[data-token='{i}']")
    a = logit_attribution(model, ids, position=i, tokenizer=tok)
    assert HAN.search(page.inner_text("#attr-h")) and shown_equal(
        page.inner_text("#attr-result [data-field=total]"), a.total
    )
    # both languages hold the same keys, each with the same {fields}
    keys = from_module(
        page,
        "i18n.js",
        """m => ['en', 'zh'].map(l => Object.entries(m.I18N[l]).filter(([k]) => /^(lens|attr|patch)_/.test(k))
            .map(([k, v]) => k + ':' + (v.match(/[{][a-z_]+[}]/g) || []).sort().join()).sort())""",
    )
    assert keys[0] == keys[1] and len(keys[0]) > 60, set(keys[0]) ^ set(keys[1])
    assert any(k.startswith("patch_metric:") and "{answer}" in k for k in keys[0])
    assert [e for e in page.errors if "status of 400" not in e] == []


# ------------------------------------------------------------------ what the Chinese page says in its own words


def test_the_chinese_panels_have_no_english_words_of_their_own(page, server):
    from test_web_browser_findings import english_words

    open_on(page, server, "zh")
    for sel in ("#lens", "#attribution", "#patch"):
        wait_state(page, sel)
    page.click("#patch-result td[data-layer='0'][data-col='1']")
    texts = page.evaluate(
        """() => {
        const skip = '.tok, .num, code, sub, sup, option, input, select, .lens-table th[title]';
        const out = [];
        for (const card of ['#lens', '#attribution', '#patch'].map(s => document.querySelector(s))) {
            const walk = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n; n = walk.nextNode())
                if (n.textContent.trim() && !n.parentElement.closest(skip)) out.push(n.textContent);
            for (const el of card.querySelectorAll('[title], [placeholder]'))
                out.push(el.title || '', el.placeholder || '');
        }
        return out;
    }"""
    )
    # the hover lines name the model's tokens in 「」; L0 H1 and resid_pre are symbols
    assert english_words(texts) == set(), english_words(texts)
    assert page.errors == []


# ------------------------------------------------------------------ a phone


def test_on_a_phone_the_panels_fit_their_cards(browser, server):
    pg = open_page(browser, **PHONE)
    try:
        open_on(pg, server, "zh")
        for sel in ("#lens", "#attribution", "#patch"):
            wait_state(pg, sel)
            over = pg.eval_on_selector(
                sel,
                """card => { const right = card.getBoundingClientRect().right + 0.5, out = [];
                for (const el of card.querySelectorAll('*')) {
                    if (el.closest('.table-wrap') && !el.classList.contains('table-wrap')) continue;  // scrolls inside
                    const r = el.getBoundingClientRect();
                    if (r.width && r.right > right) out.push(el.tagName + '.' + el.className + ' ' + r.right);
                }
                return out; }""",
            )
            assert over == [], (sel, over)
        # the lens's and the patching map's tables fit without scrolling sideways
        for table in ("#lens .lens-table", "#patch .patch-map"):
            w = pg.eval_on_selector(
                table, "t => [t.closest('.table-wrap').scrollWidth, t.closest('.table-wrap').clientWidth]"
            )
            assert w[0] <= w[1] + 1, (table, w)
        assert pg.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert pg.errors == []
    finally:
        pg.context.close()


# ------------------------------------------------------------------ models and pages the panels cannot serve


@pytest.fixture(scope="module")
def encoder_server(tmp_path_factory):
    """A tiny encoder (random weights): no next token, so no lens, attribution or patching."""
    folder = tmp_path_factory.mktemp("enc") / "enc"
    tok = qkv.WordTokenizer.train("我 吃了 苹果 ， 他 投资了 苹果 。")
    torch.manual_seed(0)
    cfg = qkv.ModelConfig(arch="bert", d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2)
    qkv.save(folder, qkv.Encoder(cfg), tok)
    proc, url = start_server("--ckpt", str(folder), "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def translate_server(tmp_path_factory):
    from test_explain_seq2seq import tiny_translator

    proc, url = start_server("--ckpt", str(tiny_translator(tmp_path_factory.mktemp("mt"))), "--port", str(free_port()))
    yield url
    stop(proc)


NOTES = {  # the panel, where its note is, and the words of its English line
    "#lens": ("#lens .note", "encoder", "translation model"),
    "#attribution": ("#attr-result .note", "encoder", "translation model"),
    "#patch": ("#patch-note", "encoder", "translation model"),
}


@pytest.mark.parametrize("kind", ["encoder", "translation"])
def test_an_encoder_and_a_translation_model_say_so_in_one_line(page, kind, encoder_server, translate_server):
    url = encoder_server if kind == "encoder" else translate_server
    load_page(page, url + "?lang=en")
    settle(page)
    for sel, (note, enc, tr) in NOTES.items():
        bring_into_view(page, sel)
        page.wait_for_selector(f"{sel}[data-state=note]", timeout=30_000)
        line = page.inner_text(note)
        assert (enc if kind == "encoder" else tr) in line and "\n" not in line.strip(), (sel, line)
        assert not page.query_selector(f"{sel} table")
    assert page.is_disabled("#patch-run") and page.is_disabled("#attr-run")
    act(page, lambda: page.click("#lang"))
    for sel, (note, _, _) in NOTES.items():
        bring_into_view(page, sel)
        page.wait_for_function("s => /[\u4e00-\u9fff]/.test(document.querySelector(s).textContent)", arg=note)
    assert page.errors == []


def test_the_static_export_says_the_panels_need_the_server(browser, bundled_export):
    context = browser.new_context(offline=True)
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, bundled_export.as_uri() + "?lang=en")
        for sel, (note, _, _) in NOTES.items():
            bring_into_view(pg, sel)
            pg.wait_for_selector(f"{sel}[data-state=note]", timeout=30_000)
            assert "qkv serve" in pg.inner_text(note)
        assert pg.is_disabled("#patch-run") and pg.is_disabled("#attr-run") and pg.is_disabled("#patch-clean")
        assert errors == []
    finally:
        context.close()

"""The intervention panels in a real browser (Debian's Chromium, headless, Playwright): the logit lens,
direct logit attribution and activation patching, in English and in Chinese.

A `qkv serve` of the bundled model runs on a free port. The numbers read off the page are held against the
Python API called here (lens_top, logit_attribution, patch_text), and the model's own logit for the
attribution's sum; a refusal shown in a panel is the server's line in the page's language, and it clears
the older answer (no stale table under it); a language switch says every panel again, errors included. The
lens names its rows as the CLI does (entering block L); the attribution's field reads digits as a token id.
An encoder, a translation model and the static export say in one line that they cannot show these panels;
an attention-only model's attribution names no MLP, and a model that reads none of patching's pairs opens
the form on the page's sentence. At phone width (390 px) nothing of the panels sticks out of its card or is
cut off, and a tap on a cell writes its value.
"""

from __future__ import annotations

import re

import pytest
import torch
from browser_fixtures import bring_into_view, browser, open_page, page, require_chromium, shown_equal  # noqa: F401
from browser_util import act, choose, free_port, from_module, load_page, refusal, settle, start_server, stop

import qkv
from qkv.analysis.attribution import logit_attribution
from qkv.analysis.lens import lens_top
from qkv.analysis.patch import patch_text
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load

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


def open_on(pg, url, lang, token=None, text=SENTENCE):
    """The page in `lang` on `text`, query token `token` (None: the page's default); the ids it shows."""
    load_page(pg, url + f"?lang={lang}")
    pg.fill("#text", text)
    act(pg, lambda: pg.click("#analyze"))
    if token is not None:
        choose(pg, 0, 0, token)
    return pg.evaluate("qkv.view.ids"), pg.evaluate("qkv.state.token")


def wait_state(pg, sel, extra=""):
    bring_into_view(pg, sel)  # the panel sleeps while off-screen
    pg.wait_for_selector(f"{sel}[data-state=ready]{extra}", timeout=60_000)


# the model's tokens and the learner's words in an English line: in quotes, or listed in brackets
QUOTED = re.compile(r"“[^”]*”|'[^']*'|\([^)]*\)|「[^」]*」")


def said_in(text: str, lang: str) -> bool:
    """Chinese text holds Han characters; English none (the model's tokens in quotes aside)."""
    return bool(HAN.search(text)) if lang == "zh" else not HAN.search(QUOTED.sub("", text))


# what a card shows that is the model's or the learner's, not the page's own words
NOT_WORDS = ".tok, .num, code, sub, sup, option, input, select"
CARD_TEXTS = """([sels, skip]) => {
    const out = [];
    for (const card of sels.map(s => document.querySelector(s))) {
        const walk = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode())
            if (n.textContent.trim() && !n.parentElement.closest(skip) && !n.parentElement.closest('[hidden]'))
                out.push(n.textContent);
        for (const el of card.querySelectorAll('[title], [placeholder]'))
            out.push(el.title || '', el.placeholder || '');
    }
    return out;
}"""


def foreign(texts: list[str], lang: str) -> list[str]:
    """The texts not in `lang`: for Chinese, those with an English word of the page's own (see
    test_web_browser_legibility.english_words); for English, those with Han characters outside the model's
    tokens and the learner's words in quotes or brackets."""
    from test_web_browser_legibility import english_words

    if lang == "zh":
        return [s for s in texts if english_words([s])]
    return [s for s in texts if not said_in(s, "en")]


def lens_row(L: int, n: int, lang: str) -> str:
    """The lens's row L of n + 1 in the CLI's and the docs' words: the residual stream entering block L
    (row 0: the embeddings), the last row after the last block, the model's output ("block" is 块 in
    Chinese, as `qkv patch` and `qkv lens` say it)."""
    if lang == "en":
        return (
            "embeddings (entering block 0)"
            if L == 0
            else (f"after block {L - 1}: the output" if L == n else f"after block {L - 1} (entering block {L})")
        )
    return (
        "嵌入（进入块 0 时）" if L == 0 else f"块 {L - 1} 之后：输出" if L == n else f"块 {L - 1} 之后（进入块 {L} 时）"
    )


def tapped_line(pg, cell: str, line: str, tap=False) -> str:
    """Tap (or click) `cell`: the line written under its table, which must be the cell's own hover line."""
    (pg.tap if tap else pg.click)(cell)
    pg.wait_for_function("s => document.querySelector(s).textContent !== ''", arg=line, timeout=10_000)
    text = pg.inner_text(line)
    assert text == pg.get_attribute(cell, "title") and "picked" in pg.get_attribute(cell, "class"), (cell, text)
    return text


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
    # one convention for the rows, the caption and the line under the table: entering block L
    n = model.cfg.n_layers
    names = page.eval_on_selector_all("#lens tbody th .long", "hs => hs.map(h => h.textContent)")
    assert names == [lens_row(L, n, lang) for L in range(n + 1)]
    caption = page.inner_text("#lens-caption")
    assert ("entering block 0" if lang == "en" else "进入块 0 时") in caption
    assert ("output" if lang == "en" else "输出") in caption and "layer" not in caption
    where = {  # where the final prediction first enters the top k, in the rows' words
        "en": {0: "at the embeddings (entering block 0)", n: f"only after block {n - 1}, the output"},
        "zh": {0: "在嵌入处（进入块 0 时）", n: f"直到块 {n - 1} 之后（输出）才"},
    }[lang].get(first, ("" if lang == "en" else "在") + lens_row(first, n, lang))
    assert where in page.inner_text("#lens-first")
    # a tap (a click) writes the cell's line, with its row's name and its probability as the cell shows it
    cell = f"#lens tr[data-layer='{first}'] td.final"
    line = tapped_line(page, cell, "#lens-cell")
    assert lens_row(first, n, lang) in line and page.inner_text(f"{cell} [data-field=p]") in line
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
    # digits alone are a token id ("173", "#126"), as the help line under the field says; the word "173"
    # would be refused (two tokens for this tokenizer)
    help_line = page.inner_text("#attr-help")
    assert said_in(help_line, lang) and "173" in help_line and "#173" in help_line
    for typed, word in ((str(tok.encode(ANSWER)[0]), ANSWER), (f"#{tok.encode(WRONG)[0]}", WRONG)):
        page.fill("#attr-target", typed)
        page.click("#attr-run")
        c = logit_attribution(model, ids, position=i, token=int(typed.lstrip("#")), tokenizer=tok)
        assert c.token_text == word
        page.wait_for_selector(f"#attribution[data-state=ready][data-target='{c.token}']", timeout=60_000)
        shown = attribution_shown(page)
        check_attribution(shown, c, model, ids, i)
        assert word in shown["title"]
    assert "is 2 tokens" in refusal(server, "api/attribution", {"ids": ids, "target": "173"}, "en")
    # a word of two tokens: the server's line, in the page's language, in the panel's error line, and the
    # older answer gone (its title named another token)
    page.fill("#attr-target", "吃了 苹果")
    page.press("#attr-target", "Enter")
    page.wait_for_selector("#attr-error:not([hidden])", timeout=60_000)
    body = {"ids": ids, "token": i, "target": "吃了 苹果"}
    assert page.inner_text("#attr-error") == refusal(server, "api/attribution", body, lang)
    assert "error" in page.get_attribute("#attr-error", "class")
    assert page.get_attribute("#attribution", "data-state") == "error"
    assert page.inner_text("#attr-result").strip() == "" and not page.query_selector("#attr-result table")
    assert WRONG not in page.inner_text("#attr-h") and said_in(page.inner_text("#attr-h"), lang)
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
    cells, share = patch_cells(pg), r.normalized
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
    # the legend says the colours as `qkv figure patching` draws them
    legend = {
        "en": "Blue = toward the clean run, red = away from it.",
        "zh": "蓝色 = 朝干净运行的方向，红色 = 背离干净运行的方向。",
    }
    assert legend[lang] in page.inner_text("#patch-caption")
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
        f"头 {h}" if lang == "zh" else f"H{h}"
        for h in range(model.cfg.n_heads)  # as a reader of each counts them
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
        # the older map, its metric line and its tapped cell's line are gone: they were other texts' or words'
        assert page.inner_text("#patch-result").strip() == "" and not page.query_selector("#patch-result table")
        assert page.get_attribute("#patch", "data-state") == "error"
    assert [e for e in page.errors if "status of 400" not in e] == []


@pytest.mark.parametrize("first, then", [("en", "zh"), ("zh", "en")])
def test_a_language_switch_says_the_panels_and_their_errors_again(page, server, bundled, first, then):
    model, tok = bundled
    ids, i = open_on(page, server, first)
    wait_state(page, "#lens", f"[data-token='{i}']")
    tapped_line(page, "#lens tr[data-layer='1'] td[data-rank='2']", "#lens-cell")
    # an attribution refused, and a patching refused after a map was drawn
    wait_state(page, "#attribution", f"[data-token='{i}']")
    page.fill("#attr-target", "吃了 苹果")
    page.click("#attr-run")
    page.wait_for_selector("#attr-error:not([hidden])", timeout=60_000)
    wait_state(page, "#patch", "[data-site=resid_pre]")
    page.fill("#patch-corrupt", SENTENCE)
    page.click("#patch-run")
    page.wait_for_selector("#patch-error:not([hidden])", timeout=60_000)
    body = {"clean": CLEAN, "corrupt": SENTENCE, "answer": ANSWER, "wrong": WRONG, "site": "resid_pre"}
    assert page.inner_text("#patch-error") == refusal(server, "api/patch", body, first)
    assert not page.query_selector("#patch-result table")  # the error cleared the older map
    act(page, lambda: page.click("#lang"))
    bring_into_view(page, "#patch")
    page.wait_for_function(
        "t => document.querySelector('#patch-error').textContent === t", arg=refusal(server, "api/patch", body, then)
    )
    assert said_in(page.inner_text("#patch h2"), then) and said_in(page.inner_text("#patch-site-note"), then)
    bring_into_view(page, "#attribution")
    page.wait_for_function(
        "t => document.querySelector('#attr-error').textContent === t",
        arg=refusal(server, "api/attribution", {"ids": ids, "token": i, "target": "吃了 苹果"}, then),
        timeout=60_000,
    )
    wait_state(page, "#lens", f"[data-token='{i}']")
    assert said_in(page.inner_text("#lens h2"), then) and said_in(page.inner_text("#lens .caption"), then)
    # the tapped cell's line is said again too, as its hover line now is
    cell = "#lens tr[data-layer='1'] td[data-rank='2']"
    line = page.inner_text("#lens-cell")
    assert line == page.get_attribute(cell, "title") and lens_row(1, model.cfg.n_layers, then) in line
    # every word the three cards show is in the new language: no line of the old one is left (the error
    # lines are the server's, each held to its line in the new language above)
    errors = "#attr-error, #patch-error, .card-error"
    texts = page.evaluate(CARD_TEXTS, [["#lens", "#attribution", "#patch"], f"{NOT_WORDS}, {errors}"])
    assert foreign(texts, then) == [], foreign(texts, then)
    # the attribution without its error: drawn in the new language, its numbers the Python API's
    page.fill("#attr-target", "")
    page.click("#attr-run")
    wait_state(page, "#attribution", f"[data-token='{i}']")
    a = logit_attribution(model, ids, position=i, tokenizer=tok)
    assert said_in(page.inner_text("#attr-h"), then) and shown_equal(
        page.inner_text("#attr-result [data-field=total]"), a.total
    )
    texts = page.evaluate(CARD_TEXTS, [["#attribution"], NOT_WORDS])
    assert foreign(texts, then) == [], foreign(texts, then)
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
    from test_web_browser_legibility import english_words

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


# whether each element's text is cut off: wider on one line than its box, and not wrapped inside it
CUT_OFF = """ts => ts.map(t => {
    const probe = t.cloneNode(true);  // the text's width on one line, in the same font
    probe.style.cssText = "position:absolute;visibility:hidden;max-width:none;white-space:nowrap;display:inline-block";
    t.parentElement.appendChild(probe);
    const natural = probe.getBoundingClientRect().width;
    probe.remove();
    const box = t.getBoundingClientRect(), r = document.createRange();
    r.selectNodeContents(t);
    const inside = [...r.getClientRects()].every(q => q.left >= box.left - 0.5 && q.right <= box.right + 0.5);
    const wraps = getComputedStyle(t).whiteSpace !== "nowrap";
    return [t.textContent, natural > t.clientWidth + 0.5 && !(wraps && inside)];
})"""


@pytest.mark.parametrize("lang", ["zh", "en"])  # the fonts differ: Latin letters are wider in the English page's
def test_on_a_phone_the_panels_fit_their_cards(browser, server, lang):
    pg = open_page(browser, **PHONE)
    try:
        open_on(pg, server, lang)
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
        # no token in the lens is cut off, byte tokens (<0xEF>, here at the comma) included: they wrap
        toks = pg.eval_on_selector_all("#lens .lens-cell .tok", CUT_OFF)
        assert any(text.startswith("<0x") for text, _ in toks)
        assert [text for text, cut in toks if cut] == []
        # a finger has no hover: a tap on a lens cell, an attribution head or a patching cell writes its value
        bring_into_view(pg, "#lens")
        line = tapped_line(pg, "#lens tr[data-layer='0'] td[data-rank='3']", "#lens-cell", tap=True)
        assert pg.inner_text("#lens tr[data-layer='0'] td[data-rank='3'] [data-field=p]") in line
        bring_into_view(pg, "#attribution")
        cell = "#attr-result td[data-layer='1'][data-head='0']"
        assert pg.inner_text(cell) in tapped_line(pg, cell, "#attr-cell", tap=True)
        bring_into_view(pg, "#patch")
        tapped_line(pg, "#patch-result td[data-layer='1'][data-col='2']", "#patch-cell", tap=True)
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


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A tiny attention-only GPT (random weights) whose word tokenizer reads none of the pairs patching
    opens on (昨天 and the rest are not its words): its folder, served; the model and tokenizer, loaded."""
    folder = tmp_path_factory.mktemp("bare") / "bare"
    tok = qkv.WordTokenizer.train("我 吃了 苹果 ， 他 投资了 苹果 。 味道 股价")
    torch.manual_seed(0)
    cfg = qkv.ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2, mlp="none")
    qkv.save(folder, qkv.GPT(cfg), tok)
    proc, url = start_server("--ckpt", str(folder), "--port", str(free_port()))
    model, tok = load(folder)
    yield url, model.eval(), tok
    stop(proc)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_attention_only_model_that_reads_no_example_pair(page, bare, lang):
    url, model, tok = bare
    ids, i = open_on(page, url, lang, text="我 吃了 苹果 ，")
    # the attribution names only the parts the model has: no MLP
    wait_state(page, "#attribution", f"[data-token='{i}']")
    check_attribution(attribution_shown(page), logit_attribution(model, ids, position=i, tokenizer=tok), model, ids, i)
    words = page.inner_text("#attr-caption") + page.inner_text("#attr-other") + page.inner_text(".attr-groups")
    assert "MLP" not in words and said_in(words, lang)
    # patching opens on the page's sentence in both boxes, and a line says what to change
    bring_into_view(page, "#patch")
    page.wait_for_selector("#patch-hint:not([hidden])", timeout=30_000)
    assert [page.input_value(f"#patch-{n}") for n in ("clean", "corrupt", "answer", "wrong")] == [
        "我 吃了 苹果 ，", "我 吃了 苹果 ，", "", ""
    ]  # fmt: skip
    assert said_in(page.inner_text("#patch-hint"), lang) and not page.query_selector("#patch-error:not([hidden])")
    assert page.eval_on_selector_all("#patch-site option", "os => os.map(o => o.value)") == [
        "resid_pre",
        "attn_out",
        "z",
    ]
    # changed as it says: patched, the numbers patch_text's, and the line gone
    page.fill("#patch-corrupt", "他 吃了 苹果 ，")
    page.fill("#patch-answer", "味道")
    page.fill("#patch-wrong", "股价")
    page.click("#patch-run")
    wait_state(page, "#patch", "[data-site=resid_pre]")
    r = patch_text(model, tok, "我 吃了 苹果 ，", "他 吃了 苹果 ，", "味道", "股价", site="resid_pre")
    check_patch(page, r, model, len(r.clean_ids))
    assert page.is_hidden("#patch-hint")
    assert page.errors == []


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

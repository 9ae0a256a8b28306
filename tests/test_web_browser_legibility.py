"""The page reads well, in a real browser (Debian's Chromium, headless, Playwright): the Chinese page has
no English words of its own (model strings, numbers and technical names aside); the playground's
preset stops claiming its numbers once a point is dragged; the origin panel's last column is not cut
off at 1366 x 768; on a phone the playground's coordinates fit the screen and the layer and head picker
sits next to the heatmap; the word cloud's labels do not overlap; typing alone analyses (after a short
pause); and MiniLM says when its tokens are [UNK] and opens the side-by-side panel on English
sentences. The figures' legibility without a browser: test_figure_legibility.py.
"""

from __future__ import annotations

import re

import pytest
from browser_fixtures import bring_into_view, browser, open_page, page, require_chromium  # noqa: F401
from browser_util import act, free_port, from_module, load_page, settle, start_server, stop

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

SENTENCE = "我 投资了 苹果 ，"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
PANELS = ["#origin", "#ablate", "#compare", "#side", "#playground", "#transform", "#vocab"]


@pytest.fixture()
def phone(browser):
    pg = open_page(browser, **PHONE)
    yield pg
    pg.context.close()


@pytest.fixture()
def laptop(browser):
    pg = open_page(browser, viewport={"width": 1366, "height": 768})
    yield pg
    pg.context.close()


def idle(pg) -> None:
    """No request in flight (the panels' debounced requests have come back and painted)."""
    pg.wait_for_timeout(300)
    pg.wait_for_function("() => document.body.dataset.busy !== '1'", polling=100, timeout=60_000)
    pg.wait_for_timeout(200)


def wake_every_panel(pg) -> None:
    for sel in PANELS:
        bring_into_view(pg, sel)
        idle(pg)
    pg.evaluate("window.scrollTo(0, 0)")


def overlapping(boxes: list[dict], slack: float = 0.5) -> list[tuple]:
    """Pairs of boxes ({x0, y0, x1, y1, text}) that overlap by more than `slack` px each way."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            w = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            h = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if w > slack and h > slack:
                out.append((a["text"], b["text"]))
    return out


# ---------------------------------------------------------------------------
# 2. no English UI words left on the Chinese page
# ---------------------------------------------------------------------------

# words the Chinese page may show as they are: technical names, formula words, units, key names
ALLOWED = {
    "softmax", "logits", "LayerNorm", "MLP", "RoPE", "PCA", "BPE", "WordPiece", "GPT", "NaN", "UTF",
    "Shift", "MB", "English", "qkv", "top", "exp", "ln", "log", "sqrt", "max", "cos", "det", "diag", "pi",
    "attn_out", "resid_pre", "resid_mid", "resid_post", "mlp_out", "hook_out", "blocks", "ln1",
    "CLS", "SEP", "UNK", "PAD", "MASK", "HSK",
    "PNG", "SVG", "HTML", "Esc", "PageUp", "PageDown",  # file formats (a card, an exported view), presentation keys
}  # fmt: skip
# where the page shows the model's own strings (tokens, example sentences, vocabulary) or code
MODEL_TEXT = (
    "#examples, #tokens, #text, .csent, .ctok, #vocab .vocab-list, .vtok, code, sub, sup, script, style, "
    "#next .tok, #side .tok, #side td:first-child, #ablate td:first-child, .tf-word, #hull text, "
    "td[data-field=token], .pg-x, .pg-d, .num, option, .lens-cell .tok, .patch-map thead .tok, .cpred .tok, "
    "#next-bytes .piece"
)
WORDS_ON_SCREEN = """(skip) => {
    const out = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const el = n.parentElement;
        if (!el || !n.textContent.trim() || el.closest(skip)) continue;
        if (!el.checkVisibility() || el.closest('[hidden]')) continue;
        out.push(n.textContent);
    }
    for (const el of document.querySelectorAll('[title], [placeholder]'))  // what a hover or an empty box shows
        if (!el.closest(skip) && el.checkVisibility()) out.push(el.title || '', el.placeholder || '');
    return out;
}"""


def english_words(texts: list[str]) -> set[str]:
    found = set()
    for s in texts:
        s = re.sub(r"「[^」]*」|“[^”]*”|\([^)]*\)", " ", s)  # quoted tokens and formulas in brackets: the model's
        for w in re.findall(r"[A-Za-z][A-Za-z_']*[A-Za-z0-9]", s):
            if "_" in w or w in ALLOWED or re.fullmatch(r"[A-Za-z]\d+", w):  # h0, k1, L3: symbols
                continue
            found.add(w)
    return found


def test_the_chinese_page_shows_no_english_word_of_its_own(page, server):
    load_page(page, server + "?lang=zh")
    settle(page)
    wake_every_panel(page)
    bring_into_view(page, "#ablate")  # a head switched off: the before -> after rows and their titles
    page.click("#ablate [data-layer='0'][data-head='0']")
    idle(page)
    left = english_words(page.evaluate(WORDS_ON_SCREEN, MODEL_TEXT))
    assert left == set(), " ".join(sorted(left))
    # the header's model name and the compare card's stages are Chinese too
    assert "bundled" not in page.inner_text("header") and "内置模型" in page.inner_text("#model-line")
    stages = page.eval_on_selector_all("#compare-result .clabel", "ls => ls.map(l => l.textContent)")
    assert stages and stages[0] == "嵌入" and all(re.fullmatch(r"嵌入|层 \d+ (输入|输出)", s) for s in stages), stages
    raw = page.eval_on_selector_all("#compare-result [data-stage]", "cs => cs.map(c => c.dataset.stage)")
    assert raw[0] == "embed" and raw[1] == "L0 in"  # the data keeps the stage's own name
    page.click("#lang")  # and English is English again
    assert page.inner_text("#compare-result .clabel") == "embed" and "bundled" in page.inner_text("#model-line")
    assert page.errors == []


# ---------------------------------------------------------------------------
# 3. the playground's preset no longer claims its numbers after a drag
# ---------------------------------------------------------------------------


def pg_frame(pg, action) -> None:
    before = pg.evaluate("qkv.playground.frames")
    action()
    pg.wait_for_function("n => qkv.playground.frames > n && !qkv.playground.busy()", arg=before, polling=50)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_after_a_drag_the_articles_example_no_longer_claims_its_numbers(page, server, lang):
    load_page(page, server + f"?lang={lang}")
    page.wait_for_function("() => window.qkv.playground && qkv.playground.frames > 0 && !qkv.playground.busy()")
    bring_into_view(page, "#playground")
    about = lambda: page.inner_text("#playground .pg-about")  # noqa: E731
    claim = about()
    assert ("1/2" in claim and "ln 2" in claim) and page.get_attribute(
        "#playground .pg-about", "data-state"
    ) == "preset"
    assert "on" in page.get_attribute('#playground [data-preset="article"]', "class")
    # drag k1 by 40 px
    page.locator("#pg-kplane").scroll_into_view_if_needed()
    box = page.eval_on_selector(
        "#pg-kplane .pg-key[data-j='0'] circle:not(.pg-hit)",
        "c => { const r = c.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }",
    )

    def drag():
        page.mouse.move(*box)
        page.mouse.down()
        page.mouse.move(box[0] + 30, box[1] - 40, steps=10)
        page.mouse.up()

    pg_frame(page, drag)
    assert page.evaluate("qkv.playground.state().K[0]") != [0.6931471805599453, 0]
    changed = about()
    assert changed != claim and "1/2" not in changed and "ln 2" not in changed
    assert ("改动" in changed) if lang == "zh" else ("changed" in changed)
    assert page.get_attribute("#playground .pg-about", "data-state") == "changed"
    assert "on" not in (page.get_attribute('#playground [data-preset="article"]', "class") or "")
    # the preset brings its numbers and its claim back
    pg_frame(page, lambda: page.click('#playground [data-preset="article"]'))
    assert about() == claim and page.get_attribute("#playground .pg-about", "data-state") == "preset"
    # typing a coordinate is a change too
    inp = "#playground input.pg-in[data-kind='V'][data-j='1'][data-i='0']"
    pg_frame(page, lambda: page.fill(inp, "3"))
    assert page.get_attribute("#playground .pg-about", "data-state") == "changed"
    assert page.errors == []


# ---------------------------------------------------------------------------
# 4. the origin panel's last column at 1366 x 768
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_origin_tables_last_column_is_not_cut_off_at_1366(laptop, server, lang):
    load_page(laptop, server + f"?lang={lang}")
    settle(laptop)
    bring_into_view(laptop, "#origin")
    laptop.wait_for_selector("#origin[data-state=ready] .origin-table th:last-child")
    geo = laptop.eval_on_selector(
        "#origin .origin-table",
        """t => { const wrap = t.closest('.table-wrap'), card = t.closest('.card');
        const last = t.querySelector('thead th:last-child').getBoundingClientRect();
        const cell = t.querySelector('tbody tr td:last-child').getBoundingClientRect();
        return {last: last.right, cell: cell.right, wrap: wrap.getBoundingClientRect().right,
                card: card.getBoundingClientRect().right, scroll: wrap.scrollWidth, client: wrap.clientWidth,
                width: document.documentElement.clientWidth}; }""",
    )
    assert geo["scroll"] <= geo["client"], geo  # nothing to scroll to: every column is in the box
    assert geo["last"] <= geo["wrap"] + 0.5 and geo["cell"] <= geo["wrap"] + 0.5, geo
    assert geo["wrap"] <= geo["card"] and geo["card"] <= geo["width"], geo
    assert laptop.errors == []


# ---------------------------------------------------------------------------
# 5. a phone: the playground's coordinates, and the picker next to the heatmap
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_on_a_phone_the_coordinates_fit_and_the_picker_is_by_the_heatmap(phone, server, lang):
    load_page(phone, server + f"?lang={lang}")
    settle(phone)
    rect = lambda sel: phone.eval_on_selector(  # noqa: E731
        sel,
        "el => { const r = el.getBoundingClientRect(); return {top: r.top + scrollY, bottom: r.bottom + scrollY,"
        " left: r.left, right: r.right}; }",
    )
    # the layer and head selects sit right above the heatmap, in its card
    sel, heat, card = rect(".selects"), rect("#heatmap-wrap"), rect(".heatmap-card")
    assert card["top"] <= sel["top"] and sel["bottom"] <= heat["top"] <= sel["bottom"] + 40, (sel, heat)
    assert phone.eval_on_selector("#layer", "el => el.closest('.card').classList.contains('heatmap-card')")
    phone.select_option("#layer", "1")  # and they still work there
    phone.wait_for_function("() => qkv.state.layer === 1")
    # the playground's coordinate table fits the card and the screen
    bring_into_view(phone, "#playground")
    phone.wait_for_selector("#playground .pg-coords")
    fit = phone.eval_on_selector(
        "#playground .pg-coords",
        """t => { const box = t.parentElement, r = t.getBoundingClientRect();
        const last = [...t.querySelectorAll('input, button')].map(e => e.getBoundingClientRect().right);
        return {scroll: box.scrollWidth, client: box.clientWidth, right: r.right, inputs: Math.max(...last),
                card: t.closest('.card').getBoundingClientRect().right, width: window.innerWidth}; }""",
    )
    assert fit["scroll"] <= fit["client"], fit
    assert fit["right"] <= fit["card"] and fit["inputs"] <= fit["card"] and fit["card"] <= fit["width"], fit
    assert phone.eval_on_selector("#playground", "el => el.scrollWidth <= el.clientWidth")
    # the inputs are still wide enough to read "ln 2"
    widths = phone.eval_on_selector_all("#playground .pg-coords input", "is => is.map(i => i.clientWidth)")
    assert min(widths) >= 30, widths
    # wider again: the selects go back to the heads card
    phone.set_viewport_size({"width": 1280, "height": 900})
    phone.wait_for_function(
        "() => document.querySelector('.selects').closest('.card').classList.contains('heads-card')"
    )
    assert phone.errors == []


# ---------------------------------------------------------------------------
# 7. the word cloud's labels
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("proj", ["q", "k", "v"])
def test_the_word_clouds_labels_do_not_overlap(page, server, proj):
    load_page(page, server + "?lang=zh")
    settle(page)
    bring_into_view(page, "#transform")
    page.wait_for_selector("#tf-cloud svg .tf-word", timeout=60_000)
    if proj != "q":
        page.select_option("#tf-proj", proj)
    for side in ("before", "after"):
        boxes = page.eval_on_selector(
            f"#tf-cloud [data-side={side}] svg",
            """svg => { const f = svg.getBoundingClientRect();
            return {frame: [f.left, f.top, f.right, f.bottom], words: [...svg.querySelectorAll('.tf-word')].map(t => {
              const r = t.getBoundingClientRect();
              return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom, text: t.textContent}; })}; }""",
        )
        words = boxes["words"]
        assert len(words) >= 10 and all(w["x1"] > w["x0"] for w in words)
        assert overlapping(words) == [], (side, overlapping(words))
        x0, y0, x1, y1 = boxes["frame"]
        assert all(
            w["x0"] >= x0 - 0.5 and w["x1"] <= x1 + 0.5 and w["y0"] >= y0 - 0.5 and w["y1"] <= y1 + 0.5 for w in words
        )
    # the black words (both a fruit and a company) are explained under the legend
    assert "词义句" in page.inner_text("#tf-cloud [data-field=ambiguous]")
    assert page.errors == []


# ---------------------------------------------------------------------------
# 9. typing alone analyses
# ---------------------------------------------------------------------------


def test_typing_without_enter_analyses_after_a_pause(page, server):
    load_page(page, server + "?lang=en")
    settle(page)
    before = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    page.click("#text")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    # typed key by key, no Enter: nothing is analysed while the keys come fast
    page.keyboard.type("我 昨天 吃了", delay=30)
    reqs = from_module(page, "state.js", "m => m.S.req")
    act(page, lambda: page.keyboard.type(" 苹果", delay=30))
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    assert tokens != before and "苹果" in tokens and "昨天" in tokens, tokens
    assert from_module(page, "state.js", "m => m.S.req") == reqs + 1  # one analysis for the whole burst of keys
    assert page.input_value("#text") == "我 昨天 吃了 苹果"  # the box is left as typed
    assert page.evaluate("document.activeElement.id") == "text"
    # an older answer never paints over a newer text: two texts in a row, the second one is shown
    page.fill("#text", "我 投资了 苹果 ，")
    page.evaluate("() => document.querySelector('#text').dispatchEvent(new Event('input'))")
    page.wait_for_timeout(450)  # the first one's request is on its way
    page.fill("#text", "我 昨天 吃了 苹果 ，")
    page.wait_for_function(
        "() => document.body.dataset.busy !== '1' && [...document.querySelectorAll('#tokens .token')]"
        ".map(t => t.textContent).join(' ') === '我 昨天 吃了 苹果 ，'",
        timeout=30_000,
    )
    page.wait_for_timeout(800)
    assert page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)") == [
        "我",
        "昨天",
        "吃了",
        "苹果",
        "，",
    ]
    # the hint says so
    assert "stop typing" in page.inner_text("#hint")
    page.click("#lang")
    assert "停止输入" in page.inner_text("#hint")
    assert page.errors == []


# ---------------------------------------------------------------------------
# 6. MiniLM: [UNK] is said, and the side-by-side panel opens on English
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_server(minilm):
    proc, url = start_server("--ckpt", "minilm", "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_minilm_says_its_vocabulary_lacks_chinese_and_offers_english(page, minilm_server, lang):
    load_page(page, minilm_server + f"?lang={lang}")
    settle(page)
    assert page.is_hidden("#unknown")  # an English example: every piece known
    page.fill("#text", "我投资了苹果")
    act(page, lambda: page.click("#analyze"))
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    n = tokens.count("[UNK]")
    assert n >= 1
    assert page.is_visible("#unknown") and page.get_attribute("#unknown", "data-unk") == str(n)
    note = page.inner_text("#unknown")
    assert "[UNK]" in note and str(n) in note
    assert ("词表里没有这些字" in note) if lang == "zh" else ("vocabulary does not hold these characters" in note)
    page.fill("#text", "I ate an apple")
    act(page, lambda: page.click("#analyze"))
    assert page.is_hidden("#unknown")
    # the side-by-side panel: English sentences whose every piece the vocabulary holds
    bring_into_view(page, "#side")
    page.wait_for_function("() => document.querySelector('#side-a').value !== ''")
    a, b = page.input_value("#side-a"), page.input_value("#side-b")
    assert re.fullmatch(r"[A-Za-z ,.]+", a) and re.fullmatch(r"[A-Za-z ,.]+", b), (a, b)
    page.wait_for_selector("#side-result canvas, #side-result .side-kind", timeout=60_000)
    assert page.errors == []


def test_the_step_table_of_a_teachers_sentence_shows_every_row_above_its_sum(page, server):
    """A 14-token sentence: every key's row is on screen at once, none hidden under the sticky header or
    Σ row, so the weights a learner sees are the ones the Σ adds up."""
    load_page(page, server + "?lang=zh")
    page.fill("#text", "小明说：“我昨天吃了苹果，味道很甜！”")
    act(page, lambda: page.click("#analyze"))
    bring_into_view(page, "#steps")
    n, seen, whole = page.eval_on_selector(
        "#steps .table-wrap", "w => [w.querySelector('tbody').rows.length, w.clientHeight, w.scrollHeight]"
    )
    assert n == 14 and whole <= seen, (seen, whole)

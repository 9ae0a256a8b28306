"""Each card saved as a picture, and presentation mode (static/save_card.js, card_picture.js, present.js),
in Chromium: every visible card has a save control; the heatmap's PNG is its canvas redrawn at twice the
device pixel ratio under its title, and not blank; the hull's SVG file parses and names its fonts; an HTML
card's PNG (drawn through an SVG <foreignObject>) is not blank; the static export saves with every network
request failing; presentation mode shows one card filling the window, steps with the keys, says where it
is, skips a hidden card, wakes a lazy panel and leaves the page as it was; the labels in both languages."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from browser_fixtures import browser, open_page, page, require_chromium  # noqa: F401
from browser_util import act, from_module, load_page, settle
from PIL import Image

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]

# (a card shown in presentation mode is position: fixed, so offsetParent is null: checkVisibility says it)
VISIBLE_CARDS = "(() => [...document.querySelectorAll('main.grid > section.card')].filter((c) => c.checkVisibility()))"
# the heatmap canvas's pixels wide, CSS pixels wide and high, and width on the screen
SIZES = (
    "(c => [c.width, parseFloat(c.style.width), parseFloat(c.style.height), c.getBoundingClientRect().width])"
    "(document.getElementById('heatmap'))"
)


def save(pg, card: str, fmt: str = "png") -> tuple[str, bytes]:
    """Click the card's save button for `fmt`; the download's file name and bytes."""
    with pg.expect_download(timeout=30_000) as info:
        pg.click(f"{card} > .card-save .card-save-btn[data-format='{fmt}']")
    d = info.value
    return d.suggested_filename, open(d.path(), "rb").read()


def pixels(data: bytes) -> np.ndarray:
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG"
    return np.asarray(img.convert("RGB"), dtype=np.int16)


def not_blank(px: np.ndarray) -> None:
    """More than a background: several colours, a good share of the pixels away from white."""
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 20
    assert (np.abs(px - 255).sum(axis=2) > 60).mean() > 0.02


def test_every_visible_card_has_a_save_control_and_keeps_it(page, server):
    load_page(page, server)
    settle(page)
    page.mouse.wheel(0, 20_000)  # the lazy panels wake and draw their cards (innerHTML: the control goes)
    page.wait_for_timeout(800)
    page.mouse.wheel(0, -20_000)
    missing = page.evaluate(
        f"() => {VISIBLE_CARDS}().filter((c) => !c.querySelector(':scope > .card-save .card-save-btn'))"
        ".map((c) => c.id || c.className)"
    )
    assert missing == []
    assert page.evaluate(f"() => {VISIBLE_CARDS}().length") >= 12
    assert page.locator("section.hull-card > .card-save .card-save-btn").count() == 2  # PNG and SVG
    assert page.errors == []


def test_the_heatmap_saves_as_its_canvas_at_twice_the_pixel_ratio(page, server):
    load_page(page, server)
    settle(page)
    css_w, css_h = page.evaluate(f"() => {SIZES}")[1:3]
    before = page.evaluate("() => document.getElementById('heatmap').toDataURL()")
    name, data = save(page, ".heatmap-card")
    assert re.fullmatch(r"qkv-heatmap-我投资了苹果，-L\d+H\d+\.png", name), name
    px = pixels(data)
    dpr = page.evaluate("devicePixelRatio")
    assert px.shape[1] == round(css_w * dpr * 2)
    assert px.shape[0] == round(css_h * dpr * 2) + round(30 * dpr * 2)  # the title's band above the canvas
    not_blank(px[round(30 * dpr * 2) :])
    title = px[: round(30 * dpr * 2)]
    assert (np.abs(title - 255).sum(axis=2) > 200).any()  # the title is written in its band
    # the page's canvas is drawn again at its own size, the same pixels as before
    assert page.evaluate("() => document.getElementById('heatmap').toDataURL()") == before
    assert page.get_attribute(".heatmap-card .card-save-btn", "data-state") == "saved"


def test_the_hull_saves_as_a_self_contained_svg_and_a_png(page, server):
    load_page(page, server)
    settle(page)
    name, data = save(page, ".hull-card", "svg")
    assert name.startswith("qkv-hull-") and name.endswith(".svg")
    root = ET.fromstring(data)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    assert root.find(ns + "title").text == page.inner_text(".hull-card h2")
    circles = root.findall(f".//{ns}circle")
    assert len(circles) == page.locator("#hull circle").count() > 1
    # the styles it took from app.css are written on it: a label's font as the page names it
    labels = [t for t in root.iter(ns + "text") if "font-family" in (t.get("style") or "")]
    assert labels and "Noto Sans CJK SC" in labels[-1].get("style")
    assert all("fill:" in (c.get("style") or "") for c in circles)
    _, png = save(page, ".hull-card", "png")
    not_blank(pixels(png))


def test_an_html_card_saves_as_a_png_that_is_not_blank(page, server):
    load_page(page, server)
    settle(page)
    box = page.locator(".next-card").bounding_box()
    name, data = save(page, ".next-card")
    assert name.startswith("qkv-next-")
    px = pixels(data)
    assert px.shape[1] == round(box["width"]) * 2 or abs(px.shape[1] - box["width"] * 2) <= 2
    not_blank(px)
    assert (px.sum(axis=2) < 300).mean() > 0.003  # its text, in dark ink (an empty card's frame has none)
    assert page.errors == []


def test_the_static_export_saves_with_every_network_request_failing(browser, bundled_export):  # noqa: F811
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    asked = []

    def refuse(route):
        asked.append(route.request.url)
        route.abort()

    context.route(re.compile(r"^(https?|wss?|ftp):"), refuse)
    try:
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        load_page(pg, bundled_export.as_uri())
        settle(pg)
        _, heat = save(pg, ".heatmap-card")
        not_blank(pixels(heat))
        _, svg = save(pg, ".hull-card", "svg")
        ET.fromstring(svg)
        _, steps = save(pg, ".steps-card")
        not_blank(pixels(steps))
        assert asked == [] and errors == []
    finally:
        context.close()


def test_presentation_mode_steps_one_card_at_a_time(browser, server):  # noqa: F811
    pg = open_page(browser, viewport={"width": 1280, "height": 720})
    try:
        load_page(pg, server)
        settle(pg)
        pg.evaluate("window.scrollTo(0, 700)")
        pg.wait_for_timeout(100)
        y0 = pg.evaluate("scrollY")
        typed = pg.input_value("#text")
        n = pg.evaluate(
            f"() => {VISIBLE_CARDS}().filter((c) => [...c.children].some((e) => !e.matches('.card-save'))).length"
        )
        first = pg.evaluate(f"() => {VISIBLE_CARDS}().findIndex((c) => c.getBoundingClientRect().bottom > 40)")
        pg.keyboard.press("p")
        shown = pg.evaluate("() => " + VISIBLE_CARDS + "().map((c) => c.getBoundingClientRect().toJSON())")
        assert len(shown) == 1
        bar = pg.locator("#present-bar").bounding_box()
        assert shown[0]["x"] == 0 and shown[0]["y"] == 0 and shown[0]["width"] == 1280
        assert abs(shown[0]["height"] + bar["height"] - 720) <= 1
        assert pg.inner_text("#present-step") == f"{first + 1} / {n}"
        assert float(pg.evaluate("getComputedStyle(document.documentElement).fontSize")[:-2]) >= 18
        pg.keyboard.press("ArrowRight")
        assert pg.inner_text("#present-step") == f"{first + 2} / {n}"
        token = pg.evaluate("qkv.state.token")
        pg.keyboard.press("ArrowLeft")  # steps back, and does not move the query token
        assert pg.inner_text("#present-step") == f"{first + 1} / {n}"
        assert pg.evaluate("qkv.state.token") == token
        pg.keyboard.press("End")
        assert pg.inner_text("#present-step") == f"{n} / {n}"
        last = pg.evaluate("() => " + VISIBLE_CARDS + "().map((c) => c.id)")
        assert last == ["vocab"]
        # the lazy panel shown wakes, as when scrolled to
        pg.wait_for_function("() => qkv.panels().find((p) => p.name === 'vocab').awake")
        pg.keyboard.press("Home")
        assert pg.inner_text("#present-step") == f"1 / {n}"
        pg.keyboard.press("PageDown")
        pg.keyboard.press("Space")
        assert pg.inner_text("#present-step") == f"3 / {n}"
        pg.keyboard.press("Escape")
        assert pg.evaluate(f"() => {VISIBLE_CARDS}().length") > n - 2
        assert pg.is_hidden("#present-bar")
        assert pg.evaluate("scrollY") == y0
        assert pg.input_value("#text") == typed
        assert pg.errors == []
    finally:
        pg.context.close()


def test_presentation_skips_a_hidden_card_and_leaves_with_its_button(page, server):
    load_page(page, server)
    settle(page)
    page.evaluate("document.querySelector('.lines-card').hidden = true")
    page.click("#present")
    names = []
    for _ in range(30):
        names.append(page.evaluate("() => " + VISIBLE_CARDS + "()[0].className"))
        if page.inner_text("#present-step").split(" / ")[0] == page.inner_text("#present-step").split(" / ")[1]:
            break
        page.click("#present-next")
    assert not any("lines-card" in c for c in names)
    assert any("heatmap-card" in c for c in names)
    page.click("#present-exit")
    assert page.is_hidden("#present-bar") and page.is_visible("#present")


def test_labels_in_both_languages(page, server):
    load_page(page, server.rstrip("/") + "/?lang=zh")
    settle(page)
    assert page.inner_text("#present") == "演示"
    assert page.get_attribute(".heatmap-card .card-save-btn", "title").startswith("把这张卡片存成 PNG")
    assert "SVG" in page.get_attribute(".hull-card .card-save-btn[data-format='svg']", "title")
    page.click("#lang")
    assert page.inner_text("#present") == "Present"
    btn = ".heatmap-card .card-save-btn"
    assert page.get_attribute(btn, "title") == "Save this card as a PNG picture (for slides)"
    assert page.get_attribute(btn, "aria-label") == "PNG: Save this card as a PNG picture (for slides)"
    page.keyboard.press("p")
    assert page.inner_text("#present-exit") == "Leave (Esc)"


def test_presentation_zooms_the_heatmap_sharp_and_its_cells_still_choose(page, server):
    load_page(page, server)
    settle(page)
    page.focus("#text")
    page.keyboard.press("End")
    page.keyboard.type("p")  # typed into the text: not a key for presenting
    assert page.is_hidden("#present-bar")
    page.keyboard.press("Backspace")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("p")
    while "heatmap-card" not in page.evaluate("() => " + VISIBLE_CARDS + "()[0].className"):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)  # the redraw at the new zoom (a resize: one animation frame)
    z = float(page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--present-zoom')"))
    assert z > 1.2
    w, css_w, _, shown_w = page.evaluate(f"() => {SIZES}")
    assert w == round(css_w * z) and abs(shown_w - css_w * z) < 1  # drawn at the zoom: as sharp as the page's
    heat = from_module(page, "heatmap.js", "m => ({ x0: m.heat.x0, y0: m.heat.y0, cell: m.heat.cell })")
    r = page.locator("#heatmap").bounding_box()
    target = 1 if page.evaluate("qkv.state.token") != 1 else 2
    x, y = r["x"] + (heat["x0"] + 0.5 * heat["cell"]) * z, r["y"] + (heat["y0"] + (target + 0.5) * heat["cell"]) * z
    act(page, lambda: page.mouse.click(x, y))
    assert page.evaluate("qkv.state.token") == target
    # a menu keeps its keys while presenting: ↓ on the layer menu chooses the next layer, the card stays
    while "heads-card" not in page.evaluate("() => " + VISIBLE_CARDS + "()[0].className"):
        page.keyboard.press("ArrowLeft")
    at = page.inner_text("#present-step")
    page.focus("#layer")
    act(page, lambda: page.keyboard.press("ArrowDown"))
    assert page.evaluate("qkv.state.layer") == 1 and page.inner_text("#present-step") == at
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    w, css_w = page.evaluate(f"() => {SIZES}")[:2]
    assert w == round(css_w)  # drawn at the page's own scale again (devicePixelRatio 1)


def test_a_failure_is_said_as_it_is_and_only_a_security_error_blames_the_browser(page, server):
    load_page(page, server)
    settle(page)
    button = ".next-card > .card-save .card-save-btn[data-format='png']"
    for name, says in (
        ("SecurityError", "will not turn this card into a picture"),
        ("TypeError", "could not be saved"),
    ):
        page.evaluate(  # the canvas's export throws as a tainted canvas (SecurityError) or a bug (TypeError) would
            "n => { HTMLCanvasElement.prototype.toBlob = function () {"
            " const e = new Error('boom'); e.name = n; throw e; }; }",
            name,
        )
        page.click(button)
        page.wait_for_function(f'() => document.querySelector("{button}").dataset.state === "refused"')
        title = page.get_attribute(button, "title")
        assert says in title, (name, title)
        assert ("boom" in title) == (name == "TypeError")


def test_a_files_name_keeps_whole_words_of_the_text(page, server):
    load_page(page, server)
    settle(page)
    act(page, lambda: page.fill("#text", "Yesterday I ate an apple and it was sweet"))
    act(page, lambda: page.click("#analyze"))
    settle(page)
    name, _ = save(page, ".heatmap-card")
    assert re.fullmatch(r"qkv-heatmap-Yesterday_I_ate_an_apple-L\d+H\d+\.png", name), name

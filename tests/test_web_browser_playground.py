"""The attention playground (static/playground.js) in a real browser: Debian's Chromium, Playwright.

The page computes q·k_j, s_j, e^{s_j}, a_j, a_j·v_j and z itself and shows them as `qkv attend` does
(its JSON's "display": exact forms such as 1/2 and ln 2, else 6 digits). Each test reads the
coordinates the page uses, runs qkv.analysis.attend.attend on them in Python, and compares every
number shown with attend's display text (and the page's doubles with attend's floats). The worked
example of the articles (q = (√2, 0), keys (ln 2, 0), (0, 1), (0, −1), values (0, 0), (4, 0), (0, 4),
d_k = 2: weights 1/2, 1/4, 1/4, z = (1, 1)) is checked against the article's own numbers too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from browser_fixtures import browser, from_module, near, page, require_chromium  # noqa: F401
from browser_util import load_page

from qkv.analysis.attend import attend
from qkv.analysis.numbers import fmt as attend_fmt
from qkv.analysis.numbers import parse_number

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

EXACT = 1e-12  # relative: the page and numpy both compute in double precision (they may differ in the last bits)


# ---------------------------------------------------------------------------
# driving and reading the panel
# ---------------------------------------------------------------------------

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


def open_playground(pg, url, lang="en"):
    """Load the page and wait until the card stops moving (the cards above it fill in after the first render)."""
    load_page(pg, url + f"?lang={lang}")
    pg.wait_for_function("() => window.qkv.playground && qkv.playground.frames > 0 && !qkv.playground.busy()")
    pg.wait_for_function("() => document.body.dataset.busy !== '1'")
    pg.evaluate(STILL)
    pg.locator("#pg-kplane").scroll_into_view_if_needed()


def act(pg, action):
    """Run an action and wait until the playground has redrawn after it (one animation frame later)."""
    before = pg.evaluate("qkv.playground.frames")
    action()
    pg.wait_for_function("n => qkv.playground.frames > n && !qkv.playground.busy()", arg=before, polling=50)


def state(pg) -> dict:
    return pg.evaluate("qkv.playground.state()")


def shown(pg) -> dict[tuple, str]:
    """Every number of the step table and formula line: (field, j, i) -> its text (each z twice: both kept equal)."""
    cells = pg.eval_on_selector_all(
        "#playground .pg-x",
        """xs => xs.map(x => [x.dataset.f,
        x.dataset.j === undefined ? null : +x.dataset.j,
        x.dataset.i === undefined ? null : +x.dataset.i, x.textContent])""",
    )
    out: dict[tuple, str] = {}
    for f, j, i, text in cells:
        key = (f, j, i)
        assert out.setdefault(key, text) == text, (key, out[key], text)
    return out


def expected(doc: dict, key: tuple):
    f, j, i = key
    x = doc[f]
    return x if j is None and i is None else x[i] if j is None else x[j] if i is None else x[j][i]


def check_against_attend(pg) -> dict:
    """Every number shown equals attend's display of the page's own q, K, V and d_k;
    the page's doubles equal attend's."""
    st = state(pg)
    steps = attend(st["q"], st["K"], st["V"], st["d_k"])
    doc = steps.to_json()
    cells = shown(pg)
    n = len(st["K"])
    assert len(cells) == n * 10 + 6  # per key: 2 products, dot, s, s − max, e^s, e^(s − max), a, 2 of a·v; and 6 more
    for key, text in cells.items():
        assert text == expected(doc["display"], key), (key, text, expected(doc["display"], key))
    page_steps = pg.evaluate("qkv.playground.steps()")
    for f in (
        "dot_terms",
        "dots",
        "scores",
        "shifted",
        "exps",
        "exps_shifted",
        "weights",
        "contributions",
        "z",
        "total",
        "total_shifted",
        "max_score",
        "d_k",
    ):
        assert np.allclose(page_steps[f], getattr(steps, f), rtol=EXACT, atol=0), (f, page_steps[f], getattr(steps, f))
    assert math.isclose(page_steps["sqrt_d_k"], math.sqrt(steps.d_k), rel_tol=EXACT)
    deltas = [float(c) for c in pg.eval_on_selector_all("#playground .pg-delta", "cs => cs.map(c => c.textContent)")]
    assert len(deltas) == n
    return doc


def z_inside_drawn_hull(pg) -> bool:
    """The ✕ of z, as drawn, lies strictly inside the drawn hull polygon (crossing rule, SVG coordinates)."""
    return pg.evaluate(r"""() => {
        const [x, y] = document.querySelector('#pg-vplane .pg-z').getAttribute('transform')
            .match(/-?[\d.]+/g).map(Number);
        const p = document.querySelector('#pg-vplane .pg-hull').getAttribute('points').trim().split(/\s+/)
            .map(q => q.split(',').map(Number));
        let inside = p.length >= 3 ? false : null;
        for (let i = 0, j = p.length - 1; i < p.length; j = i++)
            if ((p[i][1] > y) !== (p[j][1] > y)
                && x < (p[j][0] - p[i][0]) * (y - p[i][1]) / (p[j][1] - p[i][1]) + p[i][0])
                inside = !inside;
        return inside;
    }""")


def marker(pg, kind: str, j: int = 0) -> tuple[float, float]:
    """The centre of a point's marker on the screen (scrolled into view, the page at rest)."""
    plane = "#pg-vplane" if kind == "V" else "#pg-kplane"
    pg.evaluate(STILL)
    pg.locator(plane).scroll_into_view_if_needed()
    box = pg.locator(
        f'{plane} .pg-pt[data-kind="{kind}"][data-j="{j}"] :is(path, circle:not(.pg-hit), rect)'
    ).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(pg, kind: str, j: int, dx: float, dy: float, steps: int = 25):
    x, y = marker(pg, kind, j)

    def go():
        pg.mouse.move(x, y)
        pg.mouse.down()
        pg.mouse.move(x + dx, y + dy, steps=steps)
        pg.mouse.up()

    act(pg, go)
    return x + dx, y + dy


def inputs(pg) -> dict[str, str]:
    return dict(
        pg.eval_on_selector_all(
            "#playground .pg-in",
            """xs => xs.map(x =>
        [x.dataset.kind === 'dk' ? 'dk' : x.dataset.kind + x.dataset.j + '.' + x.dataset.i, x.value])""",
        )
    )


def fill(pg, kind: str, j: int, i: int, text: str):
    act(pg, lambda: pg.fill(f'#playground .pg-in[data-kind="{kind}"][data-j="{j}"][data-i="{i}"]', text))


def as_python(text: str) -> str:
    """The page's own notations, as numbers.parse_number writes them: √2 → sqrt(2), ln 2 → ln(2), π → pi."""
    import re

    text = text.replace("π", "pi").replace("·", "*").replace("−", "-")
    text = re.sub(r"√(\d+)", r"sqrt(\1)", text)
    text = re.sub(r"ln (\d+)", r"ln(\1)", text)
    return re.sub(r"(\d)\s*(sqrt|ln|pi)", r"\1*\2", text)


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------


def test_it_opens_on_the_articles_worked_example_with_attends_numbers(page, server):
    open_playground(page, server)
    st = state(page)
    # the article's numbers (chapter 5.5), read by attend's own parser
    assert st["q"] == [parse_number("sqrt(2)"), 0]
    assert st["K"] == [[parse_number("ln(2)"), 0], [0, 1], [0, -1]]
    assert st["V"] == [[0, 0], [4, 0], [0, 4]] and st["d_k"] == 2
    doc = check_against_attend(page)
    cells = shown(page)
    assert [cells[("weights", j, None)] for j in range(3)] == ["1/2", "1/4", "1/4"]
    assert [cells[("scores", j, None)] for j in range(3)] == ["ln 2", "0", "0"]
    assert [cells[("exps", j, None)] for j in range(3)] == ["2", "1", "1"]
    assert [cells[("z", None, i)] for i in range(2)] == ["1", "1"]
    assert cells[("sqrt_d_k", None, None)] == "√2" and cells[("dot_terms", 0, 0)] == "√2·ln 2"
    assert inputs(page)["q0.0"] == "√2" and inputs(page)["K0.0"] == "ln 2"
    # z in the triangle of the values: attend's linear program, the drawing, and the page's caption
    assert doc["hull"]["inside"] and z_inside_drawn_hull(page)
    assert page.get_attribute("#playground .pg-where", "data-where") == "inside"
    assert page.eval_on_selector_all("#playground .pg-hull", "h => h[0].getAttribute('points').split(' ').length") == 3
    assert page.errors == []


def test_a_seeded_random_case_typed_in_matches_attend(page, server):
    open_playground(page, server)
    rng = np.random.default_rng(12)
    for _ in range(2):  # 3 keys -> 5
        act(page, lambda: page.click("#playground .pg-add"))
    assert len(state(page)["K"]) == 5
    forms = ["sqrt(3)/2", "ln(3)", "-1/3", "2^-1", "exp(-1)", "pi/4", "log(8, 2)"]
    typed = {}
    for kind, rows in (("q", 1), ("K", 5), ("V", 5)):
        for j in range(rows):
            for i in range(2):
                text = forms[rng.integers(len(forms))] if rng.random() < 0.3 else f"{rng.uniform(-3, 3):.2f}"
                fill(page, kind, j, i, text)
                typed[(kind, j, i)] = text
    fill(page, "dk", 0, 0, "5")
    st = state(page)
    assert st["d_k"] == 5 and page.is_hidden("#playground .pg-error")
    for (kind, j, i), text in typed.items():  # what was typed is what the page computes with (attend's parser)
        value = st["q"][i] if kind == "q" else st[kind][j][i]
        assert math.isclose(value, parse_number(text), rel_tol=1e-15, abs_tol=0), (text, value)
    doc = check_against_attend(page)
    assert doc["hull"]["inside"] and z_inside_drawn_hull(page)
    # remove key 2: four keys left, the others keep their numbers
    act(page, lambda: page.click('#playground .pg-del[data-j="1"]'))
    after = state(page)
    assert after["K"] == [st["K"][j] for j in (0, 2, 3, 4)] and after["V"] == [st["V"][j] for j in (0, 2, 3, 4)]
    check_against_attend(page)
    assert page.errors == []


def test_dragging_a_key_moves_it_under_the_mouse_and_the_numbers_follow(page, server):
    open_playground(page, server)
    before = attend(*(lambda s: (s["q"], s["K"], s["V"], s["d_k"]))(state(page))).to_json()
    (_, y1), (_, y3) = marker(page, "K", 1), marker(page, "K", 2)  # k2 = (0, 1), k3 = (0, -1): pixels per unit
    px = abs(y3 - y1) / 2
    end = drag(page, "K", 0, 0.45 * px, -0.3 * px)
    st = state(page)
    k1 = st["K"][0]
    assert k1 != [parse_number("ln(2)"), 0] and k1[0] > parse_number("ln(2)") and k1[1] > 0
    # the key sits where the mouse let go, up to the snapping to 0.05 (half a step each way)
    mx, my = marker(page, "K", 0)
    assert abs(mx - end[0]) <= 0.025 * px + 1 and abs(my - end[1]) <= 0.025 * px + 1
    assert [round(c * 20) / 20 for c in k1] == k1  # snapped
    assert inputs(page)["K0.0"] == repr(k1[0]) and inputs(page)["K0.1"] == repr(k1[1])  # the inputs show it
    doc = check_against_attend(page)
    deltas = [float(c) for c in page.eval_on_selector_all("#playground .pg-delta", "cs => cs.map(c => c.textContent)")]
    for d, a, b in zip(deltas, doc["weights"], before["weights"]):
        assert near(d, a - b), (d, a - b)
    assert deltas[0] > 0  # k1 moved along q: q·k1 grew, and so did its weight
    assert page.is_visible("#pg-kplane .pg-ghost >> nth=0") and page.is_visible("#pg-vplane .pg-zghost")
    assert "→" in page.inner_text("#playground .pg-change")
    # a value: the weights stay, z moves with it
    drag(page, "V", 1, -0.5 * px, -0.5 * px)
    doc2 = check_against_attend(page)
    assert doc2["weights"] == doc["weights"] and doc2["z"] != doc["z"]
    assert [
        float(c) for c in page.eval_on_selector_all("#playground .pg-delta", "cs => cs.map(c => c.textContent)")
    ] == [0, 0, 0]
    assert doc2["hull"]["inside"] and z_inside_drawn_hull(page)
    # q
    drag(page, "q", 0, -0.2 * px, -0.6 * px)  # up the screen: y grows
    assert state(page)["q"][1] > 0
    check_against_attend(page)
    assert page.errors == []


def test_moving_a_key_halfway_to_q_shows_before_and_after(page, server):
    open_playground(page, server)
    old = state(page)
    before = attend(old["q"], old["K"], old["V"], old["d_k"]).to_json()
    page.select_option("#playground .pg-move-j", "1")
    act(page, lambda: page.click("#playground .pg-move"))
    new = state(page)
    half = [k + (q - k) / 2 for k, q in zip(old["K"][1], old["q"])]
    assert np.allclose(new["K"][1], half, rtol=EXACT, atol=0) and new["K"][0] == old["K"][0]
    assert inputs(page)["K1.0"] == attend_fmt(half[0])  # the exact form: √2/2
    doc = check_against_attend(page)
    deltas = [float(c) for c in page.eval_on_selector_all("#playground .pg-delta", "cs => cs.map(c => c.textContent)")]
    assert all(near(d, a - b) for d, a, b in zip(deltas, doc["weights"], before["weights"]))
    assert deltas[1] > 0 > deltas[0]  # the key that moved toward q gains weight, the others lose it
    change = page.inner_text("#playground .pg-change")
    assert "k2" in change and "1/4" in change and "→" in change
    assert page.errors == []


def test_the_presets_load_and_do_what_they_say(page, server):
    open_playground(page, server)
    # one key dominates: the first key takes nearly all the weight, and z is almost its value
    act(page, lambda: page.click('#playground [data-preset="dominant"]'))
    doc = check_against_attend(page)
    assert max(doc["weights"]) == doc["weights"][0] > 0.95
    assert np.linalg.norm(np.subtract(doc["z"], doc["V"][0])) < 0.05 * np.linalg.norm(doc["V"][0])
    # all keys equal: every weight 1/n, z the mean of the values
    act(page, lambda: page.click('#playground [data-preset="equal"]'))
    doc = check_against_attend(page)
    n = doc["n"]
    assert (
        n >= 3 and len(set(doc["dots"])) == 1 and len(set(doc["K"][j][0] for j in range(n))) == n
    )  # different keys, one score
    assert shown(page)[("weights", 0, None)] == attend_fmt(1 / n) == f"1/{n}"
    assert np.allclose(doc["z"], np.mean(doc["V"], axis=0), rtol=EXACT)
    # temperature: each row shows attend's weights at its d_k; a larger d_k gives flatter weights
    act(page, lambda: page.click('#playground [data-preset="temperature"]'))
    doc = check_against_attend(page)
    rows = page.eval_on_selector_all(
        "#playground .pg-trow", "rs => rs.map(r => [r.firstChild.textContent, r.lastChild.textContent])"
    )
    assert len(rows) >= 4
    tops = []
    for label, weights in rows:
        d_k = parse_number(as_python(label.split("=")[1].strip()))
        ref = attend(doc["q"], doc["K"], doc["V"], d_k).weights
        shown_w = [float(w) for w in weights.split("·")]
        assert np.allclose(shown_w, ref, atol=0.005 + 1e-12, rtol=0), (label, shown_w, ref)
        tops.append((d_k, max(ref)))
    tops = sorted(set(tops))  # the first row is the d_k now, which may be one of the others
    assert all(a[1] > b[1] for a, b in zip(tops, tops[1:]))  # sharper at small d_k
    # the d_k slider changes d_k to an exact power of two and the numbers follow
    slide = "r => { r.value = '3'; r.dispatchEvent(new Event('input', {bubbles: true})); }"
    act(page, lambda: page.eval_on_selector("#playground .pg-range", slide))
    assert state(page)["d_k"] == 8 and inputs(page)["dk"] == "8"
    check_against_attend(page)
    act(page, lambda: page.click('#playground [data-preset="article"]'))
    assert [shown(page)[("weights", j, None)] for j in range(3)] == ["1/2", "1/4", "1/4"]
    assert page.errors == []


def test_what_can_be_typed_and_what_is_refused(page, server):
    open_playground(page, server)
    api = "(xs) => xs.map(x => { try { return qkv.playground.parse(x); } catch (e) { return 'error: ' + e.message; } })"
    same = [
        "1/2",
        "sqrt(2)/2",
        "ln(2)",
        "2^-3",
        "2**-3",
        "-pi",
        "log(8, 2)",
        "exp(1)",
        "-2^2",
        "(1+2)*3/4",
        "e",
        "1e-3",
        "2*-3",
        "3/4-1/8",
        "2^0.5",
        "sqrt(3)*ln(5)/7",
    ]
    assert page.evaluate(api, same) == [parse_number(x) for x in same]
    own = ["√2", "ln 2", "2√3/3", "3 ln 2", "(3 ln 2)/2", "√2·ln 3", "π/2", "−1"]  # the page's notations (exact forms)
    got = page.evaluate(api, own)
    assert all(math.isclose(g, parse_number(as_python(x)), rel_tol=1e-15) for g, x in zip(got, own)), got
    bad = page.evaluate(api, ["abc", "2 3", "sqrt(-1)", "1/0", "", "ln", "import", "constructor"])
    assert all(isinstance(b, str) and b.startswith("error: ") and "\n" not in b for b in bad), bad
    # exact forms as attend shows them, on seeded numbers of every kind it recognises
    rng = np.random.default_rng(5)
    bases = [
        1,
        math.sqrt(2),
        math.sqrt(3),
        math.sqrt(30),
        math.log(2),
        math.log(7),
        math.sqrt(6) * math.log(5),
        math.pi,
        math.e,
    ]
    xs = [int(rng.integers(-40, 41)) / int(rng.integers(1, 65)) * bases[rng.integers(len(bases))] for _ in range(300)]
    xs += list(rng.normal(0, 3, 100)) + list(10.0 ** rng.uniform(-9, 9, 100)) + [0.0, -0.0, 1e-13, 1234567.0]
    assert page.evaluate("xs => xs.map(qkv.playground.display)", xs) == [attend_fmt(x) for x in xs]
    # a text that cannot be read: one line naming the coordinate, the last number kept
    old = state(page)
    fill(page, "K", 0, 0, "ln(2")
    error = page.inner_text("#playground .pg-error")
    assert page.is_visible("#playground .pg-error") and "k1 x" in error and "\n" not in error
    assert "bad" in page.get_attribute('#playground .pg-in[data-kind="K"][data-j="0"][data-i="0"]', "class")
    assert state(page)["K"] == old["K"]
    check_against_attend(page)
    fill(page, "dk", 0, 0, "-2")
    assert page.is_visible("#playground .pg-error") and state(page)["d_k"] == 2
    # near the largest float: e^{s_1} is ∞ (shown as attend shows it), the weights still come out
    fill(page, "dk", 0, 0, "2")
    fill(page, "K", 0, 0, "1e308")
    assert page.is_hidden("#playground .pg-error") and shown(page)[("exps", 0, None)] == "∞"
    check_against_attend(page)
    # past it: q·k1 overflows; attend refuses, the page says so in one line and keeps the last numbers
    kept = state(page)
    fill(page, "q", 0, 0, "2")
    with pytest.raises(ValueError, match="overflows"):
        attend(state(page)["q"], kept["K"], kept["V"], 2)
    assert page.is_visible("#playground .pg-error") and "q·k1" in page.inner_text("#playground .pg-error")
    assert page.evaluate("qkv.playground.steps().exps[0]") == math.inf  # the last steps stay shown
    fill(page, "q", 0, 0, "√2")
    fill(page, "K", 0, 0, "ln 3")
    fill(page, "dk", 0, 0, "3")
    assert page.is_hidden("#playground .pg-error") and state(page)["K"][0][0] == pytest.approx(math.log(3), rel=1e-15)
    check_against_attend(page)
    assert page.errors == []


def test_the_language_button_switches_the_playground(page, server):
    open_playground(page, server)
    fill(page, "K", 2, 1, "-1/2")
    title = lambda: page.inner_text("#playground h2")
    en = from_module(
        page, "i18n.js", "m => ['pg_title', 'pg_preset_temperature'].flatMap(k => [m.I18N.en[k], m.I18N.zh[k]])"
    )
    assert title() == en[0] and page.inner_text('#playground [data-preset="temperature"]') == en[2]
    numbers = shown(page)
    act(page, lambda: page.click("#lang"))
    assert title() == en[1] != en[0] and page.inner_text('#playground [data-preset="temperature"]') == en[3]
    assert shown(page) == numbers and state(page)["K"][2][1] == -0.5  # same numbers, same typed text
    assert inputs(page)["K2.1"] == "-1/2"
    act(page, lambda: page.click("#lang"))
    assert title() == en[0]
    assert page.errors == []


def test_it_works_in_the_static_export_from_disk_with_the_network_off(browser, bundled_export):
    out = bundled_export
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        open_playground(pg, out.as_uri())
        assert pg.evaluate("qkv.mode") == "static"
        assert [shown(pg)[("weights", j, None)] for j in range(3)] == ["1/2", "1/4", "1/4"]
        check_against_attend(pg)
        fill(pg, "V", 2, 0, "2")
        drag(pg, "K", 2, 30, -20)
        doc = check_against_attend(pg)
        assert doc["V"][2][0] == 2 and z_inside_drawn_hull(pg)
        assert [u for u in requests if not u.startswith("file:")] == []
        assert errors == []
    finally:
        context.close()

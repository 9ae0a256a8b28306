"""The heads panels in a real browser (Debian's Chromium, Playwright): where q, k and v come from, and
switching heads off.

A `qkv serve` of the bundled model runs on a free port. The numbers read off the page are held against
the Python API computed here by other paths: the trace's hook_q/hook_k/hook_v/hook_dots (not
/api/origin), and for an ablation the model with the head's rows of W_O zeroed (not the head mask the
server uses). Every expectation is computed at test time (the bundled model may be retrained).
"""

from __future__ import annotations

import copy
from functools import partial

import pytest
import torch
from browser_fixtures import bring_into_view, browser, page, require_chromium, shown_equal  # noqa: F401
from browser_util import act, choose, load_page

from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load

SENTENCE = "我 投资了 苹果 ，"
require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


def shown_vector(pg, where: str) -> list[str]:
    """The numbers of one vector row of the origin panel, as written (folded ones too)."""
    text = pg.eval_on_selector(f"#origin {where} .onums", "e => e.textContent")
    return [s.strip() for s in text.split(",")]


def all_shown_equal(shown: list[str], values) -> bool:
    values = [float(v) for v in values]
    return len(shown) == len(values) and all(shown_equal(s, v) for s, v in zip(shown, values))


def analyze(pg, text):
    pg.fill("#text", text)
    act(pg, lambda: pg.click("#analyze"))


def wait_origin(pg, layer, head, token):
    bring_into_view(pg, "#origin")  # the panel sleeps while off-screen
    pg.wait_for_selector(
        f"#origin[data-state=ready][data-layer='{layer}'][data-head='{head}'][data-token='{token}']", timeout=30_000
    )


def test_origin_view_equals_the_trace(page, server, bundled):
    model, tok = bundled
    cfg = model.cfg
    load_page(page, server + "?lang=en")
    analyze(page, SENTENCE)
    bring_into_view(page, "#ablate")  # the panel sleeps while off-screen
    ids = page.evaluate("qkv.view.ids")
    T = len(ids)
    _, tr = model.run_with_trace(torch.tensor([ids]))
    for layer, head, token in (
        (0, 0, T - 1),
        (cfg.n_layers - 1, cfg.n_heads - 1, T // 2),
        (cfg.n_layers // 2, 1 % cfg.n_heads, 0),
    ):
        choose(page, layer, head, token)
        wait_origin(page, layer, head, token)
        a = f"blocks.{layer}.attn."
        q, k, v = (tr[a + n][0, :, head] for n in ("hook_q", "hook_k", "hook_v"))
        dots = tr[a + "hook_dots"][0, head]
        x = tr[f"blocks.{layer}.ln1.hook_out"][0]
        assert all_shown_equal(shown_vector(page, "[data-vec=x]"), x[token])
        assert all_shown_equal(shown_vector(page, "[data-vec=q]"), q[token])
        rows = page.eval_on_selector_all(
            "#origin tr[data-key]",
            "rs => rs.map(r => [+r.dataset.key, r.querySelector('[data-field=dot]').textContent])",
        )
        assert [j for j, _ in rows] == list(range(token + 1))  # causal: the keys it can see
        for j, dot in rows:
            assert shown_equal(dot, float(dots[token, j])), (layer, head, token, j)
        # the step table below shows the same dot products
        steps = page.eval_on_selector_all(
            "#steps tr[data-key]",
            "rs => rs.map(r => [+r.dataset.key, r.querySelector('[data-field=dot]').textContent])",
        )
        assert dict(steps) == dict(rows)
        # one key's numbers: the one with the largest dot, then another one clicked
        for pick in (None, 0):
            if pick is not None:
                page.click(f"#origin tr[data-key='{pick}']")
            j = int(page.get_attribute("#origin-key", "data-key"))
            if pick is None:
                assert j == int(dots[token, : token + 1].argmax())
            else:
                assert j == pick
            assert all_shown_equal(shown_vector(page, "[data-vec=k]"), k[j])
            assert all_shown_equal(shown_vector(page, "[data-vec=v]"), v[j])
            assert all_shown_equal(shown_vector(page, "[data-vec=product]"), q[token] * k[j])
            assert shown_equal(page.inner_text("#origin [data-field=sum]"), float(dots[token, j]))
    assert page.errors == []


def w_o_zeroed(model, heads):
    other = copy.deepcopy(model)
    d = model.cfg.d_head
    with torch.no_grad():
        for L, h in heads:
            other.blocks[L].attn.W_O.weight[:, h * d : (h + 1) * d] = 0.0
    return other


def next_rows(pg) -> dict[int, tuple[str, str]]:
    rows = pg.eval_on_selector_all(
        "#ablate .ab-next tr[data-id]",
        """rs => rs.map(r => [+r.dataset.id,
        r.querySelector('[data-field=before]').textContent, r.querySelector('[data-field=after]').textContent])""",
    )
    return {i: (b, a) for i, b, a in rows}


def check_label(pg, doc, lang, L, h):
    """A head's detector label: its kind's short name and score where it stands out, else "—" (head_roles)."""
    shown = pg.inner_text(f"#ablate button[data-layer='{L}'][data-head='{h}'] .ab-label")
    label = doc["labels"][L][h]
    if not label["shown"]:
        assert shown == "—", (L, h, shown)
        return
    name, mass = shown.rsplit(" ", 1)
    assert name == doc["names"][lang][label["category"]]["short"] and shown_equal(mass, label["mass"]), (L, h, shown)


def toggle(pg, layer, head, expect_heads: str):
    pg.click(f"#ablate button.ab-head[data-layer='{layer}'][data-head='{head}']")
    pg.wait_for_selector(f"#ablate[data-state=ready][data-heads='{expect_heads}']", timeout=30_000)


def test_ablation_changes_the_probabilities_as_the_python_api(page, server, bundled):
    from qkv.apps.web.routes_heads import head_labels

    model, tok = bundled
    cfg = model.cfg
    load_page(page, server + "?lang=en")
    analyze(page, SENTENCE)
    bring_into_view(page, "#ablate")  # the panel sleeps while off-screen
    ids = page.evaluate("qkv.view.ids")
    T = len(ids)
    # each head's label is the head detector's (qkv.head_scores): its strongest kind, and that score
    doc = head_labels(model, tok)
    page.wait_for_function(
        "() => document.querySelectorAll('#ablate .ab-label').length && "
        "[...document.querySelectorAll('#ablate .ab-label')].every(e => e.textContent)",
        timeout=30_000,
    )
    for L in range(cfg.n_layers):
        for h in range(cfg.n_heads):
            check_label(page, doc, "en", L, h)

    x = torch.tensor([ids])
    with torch.no_grad():
        before = model.next_token_probs(model(x))[0]
    chosen = [(0, 1 % cfg.n_heads), (cfg.n_layers - 1, 0)]
    toggle(page, *chosen[0], f"{chosen[0][0]}/{chosen[0][1]}")
    toggle(page, *chosen[1], ",".join(f"{L}/{h}" for L, h in sorted(chosen)))
    with torch.no_grad():
        after = model.next_token_probs(w_o_zeroed(model, chosen)(x))[0]
    for token in (T - 1, 1):  # another query token: the same answer, read at another position
        if page.evaluate("qkv.state.token") != token:
            act(page, partial(page.click, f"#tokens .token[data-pos='{token}']"))
            bring_into_view(page, "#ablate")  # the click scrolled to the tokens: wake the panel again
        rows = next_rows(page)
        assert rows
        top_before = set(torch.topk(before[token], 10).indices.tolist())
        top_after = set(torch.topk(after[token], 10).indices.tolist())
        assert set(rows) == top_before | top_after
        for i, (b, a) in rows.items():
            assert shown_equal(b, float(before[token, i])) and shown_equal(a, float(after[token, i])), (token, i, b, a)
        changed = any(abs(float(after[token, i]) - float(before[token, i])) > 1e-6 for i in rows)
        assert changed  # switching two heads off moves some probability
    # the later layers' patterns: the chosen head's row of the last layer, before and after
    L, h, token = cfg.n_layers - 1, 0, T - 1
    choose(page, L, h, token)
    bring_into_view(page, "#ablate")  # choosing scrolled to the selects: wake the panel again
    _, tr0 = model.run_with_trace(x)
    _, tr1 = w_o_zeroed(model, chosen).run_with_trace(x)
    rows = page.eval_on_selector_all(
        "#ablate .ab-row-table tr[data-key]",
        """rs => rs.map(r => [+r.dataset.key,
        r.querySelector('[data-field=before]').textContent, r.querySelector('[data-field=after]').textContent])""",
    )
    assert [j for j, _, _ in rows] == list(range(token + 1))
    for j, b, a in rows:
        assert shown_equal(b, float(tr0["pattern", L][0, h, token, j])) and shown_equal(
            a, float(tr1["pattern", L][0, h, token, j])
        )
    # all heads on again: nothing changed
    page.click("#ablate-clear")
    page.wait_for_selector("#ablate[data-state=ready][data-heads='']")
    assert not page.query_selector_all("#ablate .ab-next tr[data-id]")
    assert page.errors == []


def test_static_export_says_run_qkv_serve(browser, bundled_export):
    out = bundled_export
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=en")
        assert pg.evaluate("qkv.mode") == "static"
        for panel in ("origin", "ablate"):
            bring_into_view(pg, f"#{panel}")
            assert pg.get_attribute(f"#{panel}", "data-state") == "note"
            assert "qkv serve" in pg.inner_text(f"#{panel}")
        act(pg, lambda: pg.click("#lang"))
        bring_into_view(pg, "#origin")
        assert "qkv serve" in pg.inner_text("#origin")
        bring_into_view(pg, "#ablate")
        assert "关掉" in pg.inner_text("#ablate")
        assert errors == []
    finally:
        context.close()


def test_the_grid_shows_the_detectors_labels_in_chinese(page, server, bundled):
    """Beside every head, the short Chinese name of its kind and its score, as qkv.head_scores measures them."""
    from qkv.apps.web.routes_heads import head_labels

    model, tok = bundled
    doc = head_labels(model, tok)
    load_page(page, server + "?lang=zh")
    analyze(page, SENTENCE)
    bring_into_view(page, "#ablate")  # the panel sleeps while off-screen
    page.wait_for_function(
        "() => document.querySelectorAll('#ablate .ab-label').length && "
        "[...document.querySelectorAll('#ablate .ab-label')].every(e => e.textContent)",
        timeout=60_000,
    )
    for L, row in enumerate(doc["labels"]):
        for h, _ in enumerate(row):
            check_label(page, doc, "zh", L, h)
    assert f"{doc['n_sequences']}" in page.inner_text("#ablate-caption")

"""The page on a GPT-NeoX (Pythia) directory: its residual panel shows a parallel block as it is computed, one
sum x + attn_out + mlp_out and no resid_mid row (TransformerLens records none there), with the caption that
says so, in English and Chinese, and no script error. (The documents themselves: test_family_neox.py.)"""

from __future__ import annotations

import pytest
from browser_fixtures import browser, require_chromium  # noqa: F401 (fixture)
from browser_util import act, choose, free_port, load_page, start_server, stop

require_chromium()
pytest.importorskip("transformers")
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]

from neox_dirs import random_model, save_dir, tokenizer  # noqa: E402, F401 (fixture)


@pytest.mark.slow
@pytest.mark.parametrize("variant, parallel", [("pythia", True), ("phi3", False)])
def test_the_residual_panel_shows_a_parallel_block_as_it_is(variant, parallel, browser, tokenizer, tmp_path):  # noqa: F811
    d = save_dir(random_model(variant), tmp_path / variant, tokenizer)
    proc, url = start_server("--ckpt", str(d), "--port", str(free_port()))
    try:
        for lang, words in (("en", "A parallel block"), ("zh", "并行块")):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            pg = context.new_page()
            errors = []
            pg.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            load_page(pg, f"{url}?lang={lang}")
            pg.fill("#text", "the cat sat on the mat")
            act(pg, lambda pg=pg: pg.click("#analyze"))
            choose(pg, 1, 2, 3)
            rows = pg.eval_on_selector_all("#residual .rrow", "rs => rs.map(r => r.dataset.row)")
            assert ("resid_mid" in rows) != parallel, rows
            assert {"x", "attn_out", "x_plus_attn", "mlp_out", "resid_post"} <= set(rows)
            assert (words in pg.inner_text("#residual")) == parallel
            assert errors == []
            context.close()
    finally:
        stop(proc)

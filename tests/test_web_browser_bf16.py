"""The page of a model computed in bfloat16 (`qkv explain TEXT --html FILE --dtype bfloat16`, and `qkv
serve --dtype bfloat16`) says so in its model line; a float32 page says nothing of its dtype."""

from __future__ import annotations

import pytest
from browser_fixtures import browser, open_page, require_chromium  # noqa: F401
from browser_util import load_page
from cli_util import run_ok

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.slow]

SENTENCE = "我 投资了 股票"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bfloat16_page_says_its_dtype(browser, tmp_path, capsys, lang):
    pages = {}
    for dtype in ("bfloat16", "float32"):
        pages[dtype] = tmp_path / f"{dtype}.html"
        run_ok(capsys, ["explain", SENTENCE, "--html", str(pages[dtype]), "--dtype", dtype, "--lang", lang])
    pg = open_page(browser)
    try:
        load_page(pg, pages["bfloat16"].as_uri())
        said = pg.inner_text("#model-dtype")
        assert said == {"en": "computed in bfloat16", "zh": "以 bfloat16 计算"}[lang]
        assert said in pg.inner_text("#model-line")
        load_page(pg, pages["float32"].as_uri())
        assert pg.query_selector("#model-dtype") is None
        assert not pg.errors, pg.errors
    finally:
        pg.context.close()

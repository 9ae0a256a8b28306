"""The page's scores of a Gemma 2 model (decode.js scaledScores): soft-capped and hidden beyond each sliding-window
layer's window as the model's own hook_attn_scores are (to float32's rounding: tanh is not bit for bit)."""

from __future__ import annotations

import pytest
from browser_fixtures import browser, from_module, page, require_chromium  # noqa: F401 (fixtures)
from browser_util import load_page

pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]


def test_the_pages_gemma_scores_are_the_models(page, server, tmp_path):  # noqa: F811
    pytest.importorskip("transformers")
    import torch
    from gemma_olmo_dirs import random_model, save_dir, tokenizer_for

    from qkv.analysis.packing import pack
    from qkv.apps.web.view import view
    from qkv.core.hub.pretrained import load_pretrained

    d = save_dir(random_model("gemma2"), tmp_path / "gemma2", tokenizer_for("gemma2"))
    model, tokenizer = load_pretrained(d)
    text = "the cat sat on the mat. the dog ate an apple."
    doc = view(model, tokenizer, text)
    assert doc["soft_cap"] == 3.0 and doc["windows"] == [6, None, 6, None]
    _, tr = model.run_with_trace(torch.tensor([tokenizer.encode(text)]))
    scores = torch.stack([tr["attn_scores", L][0] for L in range(model.cfg.n_layers)])
    load_page(page, server + "?lang=en")
    worst = from_module(
        page,
        "decode.js",
        """({ decode, scaledScores }, [doc, scores]) => {
        const m = doc.model, T = doc.tokens.length;
        const mine = scaledScores(decode(doc.arrays.dots), m.n_layers, m.n_heads, T, doc.scale, m.causal, T,
                                  doc.soft_cap, doc.windows);
        const model = decode(scores);
        let worst = 0;
        for (let i = 0; i < mine.length; i++) {
          if ((mine[i] === -Infinity) !== (model[i] === -Infinity)) return Infinity;
          if (mine[i] !== -Infinity) worst = Math.max(worst, Math.abs(mine[i] - model[i]));
        }
        return worst;
    }""",
        [doc, pack(scores)],
    )
    assert worst <= 1e-6

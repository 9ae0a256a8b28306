"""Direct logit attribution (qkv.analysis.attribution): the terms add up to the model's own logit (a float64
model: to float64 rounding; float32: to its rounding), on every norm and with or without biases and
positions; one head's term recomputed by hand from its z (hook_z, not hook_result), W_O's columns and a
final-norm scale computed from the residual stream by hand. Bad input: one line, in Chinese and English."""

from __future__ import annotations

import pytest
import torch

from qkv.analysis.attribution import logit_attribution
from qkv.core.model import make_model
from qkv.core.see.indices import TextError
from qkv.core.spec.config import ModelConfig
from qkv.presentation.i18n import say_error

BASE = dict(d_vocab=41, n_ctx=16, d_model=24, n_heads=4, n_layers=3, init_std=0.2)
VARIANTS = {
    "layernorm, biases, learned positions": dict(),
    "layernorm, no biases, rope": dict(bias=False, unembed_bias=False, pos="rope"),
    "rmsnorm, gated, grouped-query, rope": dict(norm="rms", mlp="gated", n_kv_heads=2, pos="rope", bias=False),
    "rmsnorm, biases, sinusoidal": dict(norm="rms", n_kv_heads=1, pos="sinusoidal", qkv_bias=True),
    "no norm, biases, learned": dict(norm="none"),
    "no norm, no biases, no positions": dict(norm="none", bias=False, unembed_bias=False, pos="none"),
    "attention only, tied": dict(mlp="none", tie_embeddings=True),
}
IDS = [3, 17, 17, 8, 40, 0, 3, 22]


def build(dtype=torch.float32, seed: int = 0, **kw):
    """A random model whose norms' scales and shifts (and biases) are far from 1 and 0."""
    torch.manual_seed(seed)
    model = make_model(ModelConfig(**{**BASE, **kw})).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_((1.0 + 0.5 * torch.randn(p.shape)) if name.endswith("weight") else 0.3 * torch.randn(p.shape))
    return model.to(dtype)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_terms_add_up_to_the_logit(variant):
    kw = VARIANTS[variant]
    exact = build(torch.float64, **kw)
    with torch.no_grad():
        logits = exact(torch.tensor([IDS]))[0]  # (T, d_vocab), the fused path
    # RMSNorm computes its scale in float32 whatever the model's dtype (as transformers does): float32 rounding
    tol = dict(rel=0, abs=1e-6) if exact.cfg.norm == "rms" else dict(rel=0, abs=1e-10)
    for position, token in ((7, 5), (2, 40), (0, 0)):
        a = logit_attribution(exact, IDS, position, token)
        assert a.logit == pytest.approx(float(logits[position, token]), **tol)
        assert a.total == pytest.approx(a.logit, **tol)  # exactly, to float64 rounding (RMSNorm: float32's)
        assert max(abs(v) for v in a.components.values()) > 0.1  # terms far larger than the tolerance
    float32 = build(torch.float32, **kw)
    a = logit_attribution(float32, IDS, -1, 11)
    assert a.total == pytest.approx(a.logit, abs=1e-4 * max(1.0, abs(a.logit)))
    # what each variant has, it lists; what it lacks, it does not
    names = list(a.components)
    assert names[0] == "embed" and ("pos_embed" in names) == (exact.cfg.pos in ("learned", "sinusoidal"))
    assert ("L0_mlp" in names) == (exact.cfg.mlp != "none") and ("L0_b_O" in names) == exact.cfg.bias
    assert ("b_U" in names) == exact.cfg.unembed_bias
    assert ("ln_final_b" in names) == (exact.cfg.norm == "pre" and exact.cfg.bias)
    heads = [n for n in names if "H" in n]
    assert heads == [f"L{L}H{h}" for L in range(3) for h in range(4)]
    assert a.heads.shape == (3, 4) and a.heads[1, 2].item() == a.components["L1H2"]


@pytest.mark.parametrize("variant", ["layernorm, biases, learned positions", "rmsnorm, gated, grouped-query, rope"])
def test_one_heads_term_by_hand_from_its_z_and_w_o(variant):
    model = build(torch.float64, **VARIANTS[variant])
    cfg = model.cfg
    L, h, i, token = 1, 3, 6, 29
    _, tr = model.run_with_trace(torch.tensor([IDS]))
    z = tr[f"blocks.{L}.attn.hook_z"][0, i, h]  # (d_head,)
    W_O = model.blocks[L].attn.W_O.weight[:, h * cfg.d_head : (h + 1) * cfg.d_head]  # (d_model, d_head)
    c = W_O @ z  # (d_model,): z_h W_O[h] in the column convention of nn.Linear
    x = tr[f"blocks.{cfg.n_layers - 1}.hook_resid_post"][0, i]  # the stream the final norm reads
    if cfg.norm == "pre":
        s = torch.sqrt(((x - x.mean()) ** 2).mean() + cfg.ln_eps)
        c = c - c.mean()
    else:  # RMSNorm's scale is computed in float32 whatever the model's dtype, as transformers' (layernorm.py)
        s = torch.sqrt((x.float() ** 2).mean() + cfg.ln_eps).to(x.dtype)
    with torch.no_grad():
        want = float((c / s * model.ln_final.weight) @ model.unembed.weight[token])
    a = logit_attribution(model, IDS, i, token)
    assert a.components[f"L{L}H{h}"] == pytest.approx(want, abs=1e-10)
    assert abs(want) > 1e-3  # a term that could have been wrong


def test_the_document_lists_heads_and_mlps_per_layer():
    model = build()
    a = logit_attribution(model, torch.tensor([IDS]), -1)  # token None: the model's own top prediction
    assert a.token == int(model(torch.tensor([IDS]))[0, -1].argmax())
    doc = a.to_json()
    assert doc["kind"] == "logit-attribution" and doc["position"] == len(IDS) - 1
    assert len(doc["heads"]) == 3 and all(len(row) == 4 for row in doc["heads"]) and len(doc["mlp"]) == 3
    assert [c["name"] for c in doc["components"]] == list(a.components)
    assert sum(c["value"] for c in doc["components"]) == pytest.approx(doc["logit"], abs=1e-4)
    assert doc["heads"][2][1] == a.components["L2H1"] and doc["mlp"][0] == a.components["L0_mlp"]


def refused(fn, *args, **kw) -> dict[str, str]:
    with pytest.raises(TextError) as e:
        fn(*args, **kw)
    said = {lang: say_error(e.value, lang) for lang in ("en", "zh")}
    assert all(s and "\n" not in s for s in said.values()), said
    assert said["en"] != said["zh"]
    return said


def test_a_token_by_its_word_and_the_words_it_refuses():
    from qkv.core.text.tokenizers import WordTokenizer

    tok = WordTokenizer.train("我 投资了 苹果 ， 股价 涨了 。 他 吃了 香蕉 。")
    model = build(d_vocab=tok.vocab_size)
    ids = tok.encode("我 投资了 苹果 ，")
    a = logit_attribution(model, ids, -1, "股价", tokenizer=tok)
    assert a.token == tok.encode("股价")[0] and a.token_text == "股价"
    assert a.tokens == [tok.display(i) for i in ids] and "投资了" in a.tokens
    refused(logit_attribution, model, ids, -1, "股价 涨了", tokenizer=tok)  # two tokens
    refused(logit_attribution, model, ids, -1, "火星", tokenizer=tok)  # not in the vocabulary
    refused(logit_attribution, model, ids, -1, "股价")  # a word, and no tokenizer to read it
    refused(logit_attribution, model, ids, -1, tok.vocab_size)  # an id out of range
    refused(logit_attribution, model, ids, -1, 1.5)
    said = refused(logit_attribution, model, ids, len(ids), 0)  # position out of range
    assert "位置" in said["zh"]


def test_the_models_it_cannot_split_are_refused():
    said = refused(logit_attribution, build(norm="post"), IDS, -1, 0)
    assert "post-norm" in said["en"]
    refused(logit_attribution, build(residual=False), IDS, -1, 0)
    encoder = make_model(
        ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    said = refused(logit_attribution, encoder, [1, 2], -1, 0)
    assert "编码器" in said["zh"]

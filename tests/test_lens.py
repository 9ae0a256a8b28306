"""The logit lens (qkv.analysis.lens) against other routes to the same numbers: the residual stream caught by
raw PyTorch forward hooks on the blocks (not the trace), pushed through the final norm written out with
torch's functional ops (or the RMSNorm formula) and the unembedding's matrix by hand; the last row against
softmax(model(ids)) on the fused path. Bad input: one line, in Chinese and in English."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from qkv.analysis.lens import lens_top, logit_lens
from qkv.core.model import make_model
from qkv.core.see.indices import TextError
from qkv.core.spec.config import ModelConfig
from qkv.presentation.i18n import say_error

BASE = dict(d_vocab=53, n_ctx=16, d_model=24, n_heads=4, n_layers=3, init_std=0.2)  # peaked: the rows differ
VARIANTS = {
    "gpt2-like": dict(),
    "llama-like": dict(norm="rms", mlp="gated", n_kv_heads=2, pos="rope", bias=False, activation="silu"),
    "post-norm": dict(norm="post"),
    "no-norm": dict(norm="none", pos="sinusoidal"),
    "attention-only": dict(mlp="none", tie_embeddings=True),
}


def build(seed: int = 0, **kw):
    """A random model whose norms' scales and shifts are far from 1 and 0 (so that skipping them shows)."""
    torch.manual_seed(seed)
    model = make_model(ModelConfig(**{**BASE, **kw})).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln" in name or name.startswith("ln_final"):
                p.copy_((1.0 + 0.5 * torch.randn(p.shape)) if name.endswith("weight") else 0.3 * torch.randn(p.shape))
    return model


def stream_by_forward_hooks(model, ids):
    """Each block's input, and the last block's output, caught by torch's own forward hooks."""
    caught = {}

    def catch(layer):
        def hook(module, inputs, output):
            caught[layer] = inputs[0].detach()
            caught["out"] = output.detach()

        return hook

    handles = [block.register_forward_hook(catch(L)) for L, block in enumerate(model.blocks)]
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for h in handles:
            h.remove()
    return [caught[L] for L in range(model.cfg.n_layers)] + [caught["out"]]


def final_norm_by_hand(model, x):
    cfg, ln = model.cfg, model.ln_final
    if cfg.norm == "pre":
        return F.layer_norm(x, (cfg.d_model,), ln.weight, ln.bias, cfg.ln_eps)
    if cfg.norm == "rms":
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + cfg.ln_eps) * ln.weight
    return x  # post-norm (the blocks end in their norm) and norm="none"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_row_is_the_stream_through_the_final_norm_and_unembedding(variant):
    model = build(**VARIANTS[variant])
    ids = torch.randint(0, BASE["d_vocab"], (1, 11), generator=torch.Generator().manual_seed(3))
    P = logit_lens(model, ids)
    assert P.shape == (BASE["n_layers"] + 1, 11, BASE["d_vocab"]) and P.dtype == torch.float32
    W_U, b_U = model.unembed.weight, model.unembed.bias
    with torch.no_grad():
        for L, x in enumerate(stream_by_forward_hooks(model, ids)):
            logits = final_norm_by_hand(model, x[0]) @ W_U.T + (0.0 if b_U is None else b_U)  # (T, d_vocab)
            torch.testing.assert_close(P[L], torch.softmax(logits, -1), atol=2e-6, rtol=1e-4)
        torch.testing.assert_close(P[-1], torch.softmax(model(ids)[0], -1), atol=2e-6, rtol=1e-4)
    # the layers do differ: the lens is not one row copied
    assert (P[0] - P[-1]).abs().max() > 1e-3


def test_the_shapes_of_ids_agree_and_top_k_is_the_lens_top_k():
    model = build()
    ids = [5, 9, 2, 40, 7, 7]
    P = logit_lens(model, ids)
    torch.testing.assert_close(logit_lens(model, torch.tensor(ids)), P)
    torch.testing.assert_close(logit_lens(model, torch.tensor([ids])), P)
    doc = lens_top(model, ids, position=-2, k=4)
    assert doc["kind"] == "logit-lens" and doc["position"] == 4 and len(doc["layers"]) == BASE["n_layers"] + 1
    for L, row in enumerate(doc["layers"]):
        top = torch.topk(P[L, 4], 4)
        assert [r["id"] for r in row["top"]] == top.indices.tolist()
        assert [r["p"] for r in row["top"]] == pytest.approx(top.values.tolist(), rel=1e-5)
        assert row["p_final"] == pytest.approx(float(P[L, 4, int(P[-1, 4].argmax())]), rel=1e-5)
    assert doc["layers"][-1]["top"][0]["id"] == doc["final"]["id"] == int(model(torch.tensor([ids]))[0, 4].argmax())


def test_lens_top_names_the_tokens_with_a_tokenizer():
    from qkv.core.text.tokenizers import CharTokenizer

    tok = CharTokenizer.train("abcdefghij")
    model = build(d_vocab=tok.vocab_size)
    ids = tok.encode("abcab")
    doc = lens_top(model, ids, k=3, tokenizer=tok)
    assert doc["tokens"] == list("abcab")
    assert all(r["token"] == tok.display(r["id"]) for row in doc["layers"] for r in row["top"])


def refused(fn, *args, **kw) -> dict[str, str]:
    with pytest.raises(TextError) as e:
        fn(*args, **kw)
    said = {lang: say_error(e.value, lang) for lang in ("en", "zh")}
    assert all(s and "\n" not in s for s in said.values()), said
    assert said["en"] != said["zh"]  # the catalogue, not the English text in both
    return said


def test_bad_input_is_one_line_in_both_languages():
    model = build()
    refused(logit_lens, model, torch.zeros(2, 5, dtype=torch.long))  # two sequences
    refused(logit_lens, model, [1, 2, 999])  # not in the vocabulary
    refused(logit_lens, model, list(range(BASE["n_ctx"] + 1)))  # longer than n_ctx
    refused(logit_lens, model, torch.rand(5))  # not ids
    said = refused(lens_top, model, [1, 2, 3], position=3)
    assert "3" in said["en"] and "位置" in said["zh"]
    refused(lens_top, model, [1, 2, 3], k=0)
    encoder = make_model(
        ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    said = refused(logit_lens, encoder, [1, 2, 3])
    assert "encoder" in said["en"] and "编码器" in said["zh"]
    translator = make_model(ModelConfig(arch="seq2seq", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1))
    assert "translation" in refused(lens_top, translator, [1, 2, 3])["en"]  # its decoder needs a source too

"""qkv.explain (qkv.analysis.explain, shown by qkv.presentation.explanation): the numbers shown are the model's,
in both languages, and bad input is one line."""

import json
import math

import pytest
import torch

from qkv import GPT, ModelConfig
from qkv.apps.cli import commands
from qkv.apps.cli.parser import build_parser
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train.checkpoint import save
from qkv.presentation.explanation import explain

TEXT = "the cat sat on the mat; the dog sat on the log."
WORDS = "患者 服用 华法林 后 出现 黑便"


def make_model(tokenizer, seed=0, **kw):
    torch.manual_seed(seed)
    cfg = dict(d_vocab=tokenizer.vocab_size, n_ctx=64, d_model=32, n_heads=2, n_layers=2, init_std=0.3)
    return GPT(ModelConfig(**{**cfg, **kw})).eval()


@pytest.fixture(scope="module")
def char():
    tok = train_tokenizer("char", TEXT)
    return make_model(tok), tok


@pytest.mark.parametrize("pos", ["learned", "rope"])
@pytest.mark.parametrize("token", [None, 5, -3])
def test_head_table_is_the_trace(pos, token):
    tok = train_tokenizer("char", TEXT)
    model = make_model(tok, pos=pos)
    ex = explain(model, tok, TEXT, layer=1, head=1, token=token)
    d = ex.to_json()
    ids = torch.tensor([tok.encode(TEXT)])
    _, tr = model.run_with_trace(ids)
    t = len(d["ids"]) - 1 if token is None else token % len(d["ids"])
    assert d["token"] == t and d["query"] == tok.display(d["ids"][t])
    rows = d["attention"]["rows"]
    assert [r["pos"] for r in rows] == list(range(t + 1))  # one row per visible key, by position
    weights = torch.tensor([r["weight"] for r in rows])
    torch.testing.assert_close(weights, tr["pattern", 1][0, 1, t, : t + 1])
    assert weights.sum().item() == pytest.approx(1.0, abs=1e-6)
    q, k = (tr["rot_q", 1], tr["rot_k", 1]) if pos == "rope" else (tr["q", 1], tr["k", 1])
    expected = q[0, t, 1] @ k[0, : t + 1, 1].T / math.sqrt(model.cfg.d_head)  # computed here, not read from the trace
    # a dot product's rounding error scales with |q| |k_j|, not with the (possibly cancelled) result
    scale = (q[0, t, 1].norm() * k[0, : t + 1, 1].norm(dim=-1).max()).item()
    torch.testing.assert_close(torch.tensor([r["scaled"] for r in rows]), expected, rtol=1e-5, atol=1e-6 * scale)
    torch.testing.assert_close(
        torch.tensor([r["dot"] for r in rows]), expected * math.sqrt(model.cfg.d_head), rtol=1e-5, atol=1e-6 * scale
    )
    argmax = int(weights.argmax())
    assert d["attention"]["argmax"] == argmax
    marked = [line for line in ex.to_text().splitlines() if "◀ largest" in line]
    assert len(marked) == 1 and marked[0].split()[0] == str(argmax)
    assert ex.to_markdown().count("◀ largest") == 1


def test_z_and_residual_numbers(char):
    model, tok = char
    d = explain(model, tok, TEXT, layer=0, head=1, token=10, top=3).to_json()
    _, tr = model.run_with_trace(torch.tensor([tok.encode(TEXT)]))
    z = tr["z", 0][0, 10, 1]
    assert d["z"]["norm"] == pytest.approx(z.norm().item(), rel=1e-5)
    assert d["z"]["first"] == pytest.approx(z[:4].tolist(), abs=1e-6) and d["z"]["check"] < 1e-5
    A, v = tr["pattern", 0][0, 1, 10, :11], tr["v", 0][0, :11, 1]
    contrib = A * v.norm(dim=-1)
    values = d["z"]["values"]
    assert len(values) == 3 and [x["pos"] for x in values] == torch.topk(contrib, 3).indices.tolist()
    assert values[0]["share"] == pytest.approx((contrib.max() / contrib.sum()).item(), rel=1e-5)
    W_O = model.blocks[0].attn.head_weights()["W_O"][1]  # (d_head, d_model)
    r = d["residual"]
    assert r["head_out"] == pytest.approx((z @ W_O).norm().item(), rel=1e-4)
    x, out = tr["resid_pre", 0][0, 10], tr["attn_out", 0][0, 10]
    assert r["x"] == pytest.approx(x.norm().item(), rel=1e-5)
    assert (
        r["x_plus_attn"] == pytest.approx(r["resid_mid"], rel=1e-5) == pytest.approx((x + out).norm().item(), rel=1e-5)
    )


def test_post_norm_shows_the_layernorm():
    tok = train_tokenizer("char", TEXT)
    ex = explain(make_model(tok, norm="post"), tok, TEXT, layer=1, head=0)
    text = ex.to_text()
    assert "LayerNorm(x + attn_out)" in text and "(= resid_mid)" not in text
    assert ex.to_json()["residual"]["norm"] == "post"


@pytest.mark.parametrize("token", [-1, 7])
def test_next_token_table_is_topk_of_softmax(char, token):
    model, tok = char
    d = explain(model, tok, TEXT, token=token, top=4).to_json()
    ids = tok.encode(TEXT)
    probs = torch.softmax(model(torch.tensor([ids])), dim=-1)[0, token]
    values, indices = torch.topk(probs, 4)
    assert [t["id"] for t in d["next"]["top"]] == indices.tolist()
    assert [t["prob"] for t in d["next"]["top"]] == pytest.approx(values.tolist(), abs=1e-6)
    assert [t["token"] for t in d["next"]["top"]] == [tok.display(i) for i in indices.tolist()]
    actual = d["next"]["actual"]
    if token == -1:
        assert actual is None
    else:
        nxt = ids[token + 1]
        assert actual["id"] == nxt and actual["prob"] == pytest.approx(probs[nxt].item(), abs=1e-6)
        assert actual["rank"] == 1 + int((probs > probs[nxt]).sum())


def test_summary_entropy_and_argmax(char):
    model, tok = char
    d = explain(model, tok, TEXT, token=12).to_json()
    _, tr = model.run_with_trace(torch.tensor([tok.encode(TEXT)]))
    assert d["mode"] == "summary" and len(d["heads"]) == 4
    for h in d["heads"]:
        row = tr["pattern", h["layer"]][0, h["head"], 12, :13].double()
        entropy = -sum(p * math.log2(p) for p in row.tolist() if p > 0)
        assert h["entropy_bits"] == pytest.approx(entropy, abs=1e-6)
        assert h["top_pos"] == int(row.argmax()) and h["top_weight"] == pytest.approx(row.max().item(), abs=1e-6)
    assert d["max_entropy_bits"] == pytest.approx(math.log2(13))
    assert [(h["layer"], h["head"]) for h in explain(model, tok, TEXT, layer=-1).to_json()["heads"]] == [(1, 0), (1, 1)]
    assert [(h["layer"], h["head"]) for h in explain(model, tok, TEXT, head=1).to_json()["heads"]] == [(0, 1), (1, 1)]


def test_chinese_labels_and_no_mojibake():
    tok = train_tokenizer("char", "患者服用华法林后出现黑便。")
    model = make_model(tok)
    for layer, head in [(0, 1), (None, None)]:
        ex = explain(model, tok, "患者服用华法林后出现黑便", layer=layer, head=head, lang="zh")
        for out in (ex.to_text(), ex.to_markdown(), json.dumps(ex.to_json(), ensure_ascii=False)):
            assert "华" in out
            assert "\ufffd" not in out and not any("\u00c0" <= c <= "\u00ff" for c in out)  # no UTF-8 read as Latin-1
            assert out.encode("utf-8").decode("utf-8") == out
        assert all("词元" in out and "注意力权重" in out for out in (ex.to_text(), ex.to_markdown()))
    assert "第一步" in explain(model, tok, "患者服用", layer=0, head=0, lang="zh").to_text()
    assert "Step 1" in explain(model, tok, "患者服用", layer=0, head=0).to_text()


def test_word_tokenizer_one_row_per_word():
    tok = train_tokenizer("word", WORDS, segment="none")
    ex = explain(make_model(tok), tok, WORDS, layer=0, head=0)
    rows = [r["token"] for r in ex.to_json()["attention"]["rows"]]
    assert [r for r in rows if r != "␣"] == WORDS.split() and rows.count("␣") == 5  # spaces are tokens: shown as ␣
    text = ex.to_text()
    assert "␣ is a space" in text and all(w in text for w in WORDS.split())


def test_json_roundtrip_and_fields(char):
    model, tok = char
    for kw in ({"layer": 0, "head": 0}, {}):
        d = explain(model, tok, TEXT, **kw).to_json()
        again = json.loads(json.dumps(d, ensure_ascii=False))
        assert again == d
        assert {
            "format",
            "version",
            "kind",
            "lang",
            "mode",
            "text",
            "cropped",
            "tokens",
            "ids",
            "token",
            "query",
            "layer",
            "head",
            "model",
            "next",
        } <= set(d)
        assert (d["format"], d["version"], d["kind"]) == ("qkv-explain", 1, "explain")
        assert d["tokens"] == [tok.display(i) for i in tok.encode(TEXT)] and d["ids"] == tok.encode(TEXT)
        assert ({"attention", "z", "residual"} <= set(d)) == bool(kw) and ("heads" in d) != bool(kw)


def test_long_text_is_cropped_from_the_left():
    tok = train_tokenizer("char", TEXT)
    model = make_model(tok, n_ctx=16)
    ex = explain(model, tok, TEXT, layer=0, head=0)
    d = ex.to_json()
    assert d["cropped"] == len(TEXT) - 16 and d["ids"] == tok.encode(TEXT)[-16:]
    assert "the first 31 are dropped" in ex.to_text()


def test_training_mode_is_kept_but_not_used():
    tok = train_tokenizer("char", TEXT)
    model = make_model(tok, dropout_attn=0.5).train()
    d = explain(model, tok, TEXT, layer=0, head=0).to_json()
    assert model.training and d["attention"]["weight_sum"] == pytest.approx(1.0, abs=1e-6)


def test_non_causal_model_sees_every_token():
    tok = train_tokenizer("char", TEXT)
    d = explain(make_model(tok, causal=False), tok, TEXT, layer=0, head=0, token=3).to_json()
    assert len(d["attention"]["rows"]) == len(TEXT)


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"text": ""}, "empty"),
        ({"text": "the cat ate a zebra"}, "not in the tokenizer's vocabulary"),
        ({"layer": 2}, "0..1"),
        ({"layer": -3}, "0..1"),
        ({"layer": 0, "head": 5}, "0..1"),
        ({"token": 200}, f"0..{len(TEXT) - 1}"),
        ({"top": 0}, "at least 1"),
        ({"lang": "fr"}, "zh, en"),
    ],
)
def test_bad_input_is_one_line(char, kw, words):
    model, tok = char
    with pytest.raises(ValueError) as err:
        explain(model, tok, **{"text": TEXT, **kw})
    message = str(err.value)
    assert words in message and "\n" not in message


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_cli_glue(char, tmp_path, capsys, fmt):
    model, tok = char
    save(tmp_path / "ckpt", model, tok)
    args = build_parser().parse_args(
        [
            "explain",
            "--ckpt",
            str(tmp_path / "ckpt"),
            TEXT,
            "--layer",
            "1",
            "--head",
            "0",
            "--token",
            "-2",
            "--top",
            "3",
            "--format",
            fmt,
            "--lang",
            "zh",
        ]
    )
    commands.explain(args)
    out = capsys.readouterr().out
    if fmt == "json":
        d = json.loads(out)
        assert d["kind"] == "explain" and d["token"] == len(TEXT) - 2 and len(d["next"]["top"]) == 3
        assert d["attention"]["rows"][-1]["token"] == tok.display(tok.encode(TEXT)[-2])
    else:
        assert "q·k/√d" in out and "注意力权重" in out and "◀ 最大" in out
        assert ("| 位置 |" in out) == (fmt == "markdown")

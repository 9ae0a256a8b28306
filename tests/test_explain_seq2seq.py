"""qkv explain, its JSON, the page's data and the web API on a translation model (arch="seq2seq"):
for each target word, the source words its cross-attention reads. The numbers shown are the trace's
(q·k is hook_dots, the weight hook_pattern, each row adds up to 1), recomputed here from q and k; the
translation is the greedy one; text in both languages; bad input is one line.

The model: a tiny encoder-decoder trained for 120 steps on six short corpus pairs, which it then
translates word for word (the fixture checks), saved once per test session (`tiny_translator`,
shared with test_figures_seq2seq and test_web_browser_translate).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from qkv.analysis.cross_attention import explain_translation, gold_alignment
from qkv.analysis.packing import unpack
from qkv.analysis.schema import validate
from qkv.apps.cli import main
from qkv.apps.web.translation_view import translation_view
from qkv.core.decode.beam import BOS, EOS
from qkv.core.decode.translate import translate
from qkv.core.train.checkpoint import load, save
from qkv.presentation.explanation import explain

SOURCE = "爷爷 吃了 一些 香蕉 。"
STEPS = 120


def tiny_pairs():
    from qkv.core.text.corpus import pairs

    return [p for p in pairs("train", n_sentences=200) if len(p.zh) <= 7][:6]


def tiny_translator(root) -> Path:  # noqa: F821
    """The checkpoint directory of the tiny zh->en model under `root` (trained on the first call)."""
    from qkv.core.decode import translate as tr
    from qkv.core.model.seq2seq import Seq2Seq, seq2seq_loss
    from qkv.core.spec.config import ModelConfig

    out = root / "tiny-translator"
    if (out / "state.json").exists():
        return out
    chosen = tiny_pairs()
    tok = tr.build_tokenizer([p.zh for p in chosen] + [p.en for p in chosen])
    torch.manual_seed(0)
    model = Seq2Seq(
        ModelConfig(arch="seq2seq", d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2, d_mlp=64)
    )
    src, mask, tgt_in, tgt_out = tr.collate(tr.make_examples(tok, [(p.zh, p.en) for p in chosen], 16))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(STEPS):
        loss = seq2seq_loss(model(src, tgt_in, mask), tgt_out)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    for p in chosen:  # it learned them: the greedy translation is the corpus's
        assert translate(model, tok, p.text("zh")) == p.text("en"), p
    save(out, model, tok)
    return out


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_translator(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def translator(ckpt):
    model, tok = load(ckpt)
    return model.eval(), tok


def traced(model, tok, doc):
    _, tr = model.run_with_trace(torch.tensor([doc["source"]["ids"]]), torch.tensor([doc["target"]["ids"]]))
    return tr


def cross(tr, layer, hook):
    return tr[f"decoder.blocks.{layer}.cross_attn.{hook}"][0]


# ---------------------------------------------------------------------------- the document


@pytest.mark.parametrize("layer, head, token", [(None, None, None), (0, 1, 0), (-1, 0, -1), (1, 1, 2)])
def test_each_target_words_row_is_the_trace(translator, layer, head, token):
    model, tok = translator
    doc = explain_translation(model, tok, SOURCE, layer=layer, head=head, token=token)
    validate({**doc, "lang": "en"})
    assert doc["translation"] == translate(model, tok, SOURCE) == "grandpa ate some banana ."
    assert doc["source"]["tokens"] == SOURCE.split()
    assert doc["target"]["ids"][0] == BOS and doc["target"]["written_ids"][-1] == EOS
    assert doc["target"]["written_ids"][:-1] == doc["target"]["ids"][1:]  # step i writes what step i + 1 reads
    L = 1 if layer is None else layer % 2
    H = doc["head"]
    tr = traced(model, tok, doc)
    q, k = cross(tr, L, "hook_q")[:, H], cross(tr, L, "hook_k")[:, H]  # (T_target, d_head), (T_source, d_head)
    dots = q @ k.T  # computed here from q and k, not read from hook_dots
    A = cross(tr, L, "hook_pattern")[H]  # (T_target, T_source)
    assert len(doc["reads"]) == len(doc["target"]["ids"]) == A.shape[0]
    for i, r in enumerate(doc["reads"]):
        weights = torch.tensor([x["weight"] for x in r["rows"]])
        torch.testing.assert_close(weights, A[i])
        assert weights.sum().item() == pytest.approx(1.0, abs=1e-6)
        scale = (q[i].norm() * k.norm(dim=-1).max()).item()  # a dot product's rounding error scales with |q| |k|
        torch.testing.assert_close(torch.tensor([x["dot"] for x in r["rows"]]), dots[i], rtol=1e-5, atol=1e-6 * scale)
        assert [x["token"] for x in r["rows"]] == SOURCE.split()
        assert r["token"] == doc["target"]["written"][i] and r["top_pos"] == int(A[i].argmax())
        mean = cross(tr, L, "hook_pattern").double().mean(0)[i]
        assert r["mean_top_pos"] == int(mean.argmax()) and r["mean_top_weight"] == pytest.approx(mean.max().item())
    t = doc["token"]
    rows = doc["attention"]["rows"]
    torch.testing.assert_close(
        torch.tensor([x["scaled"] for x in rows]),
        dots[t] / math.sqrt(model.cfg.d_head),
        rtol=1e-5,
        atol=1e-6 * (q[t].norm() * k.norm(dim=-1).max()).item(),
    )
    v = cross(tr, L, "hook_v")[:, H]  # the source words' values
    assert doc["z"]["check"] < 1e-5 and doc["z"]["hull"]["inside"] is True
    assert doc["z"]["norm"] == pytest.approx((A[t] @ v).norm().item(), rel=1e-5)
    probs = torch.softmax(model(torch.tensor([doc["source"]["ids"]]), torch.tensor([doc["target"]["ids"]])), -1)[0, t]
    assert [x["id"] for x in doc["next"]["top"]] == torch.topk(probs, 5).indices.tolist()
    assert doc["next"]["actual"]["id"] == doc["target"]["written_ids"][t]


def test_defaults_are_the_last_layer_its_sharpest_head_and_the_last_word(translator):
    model, tok = translator
    doc = explain_translation(model, tok, SOURCE)
    tr = traced(model, tok, doc)
    A = cross(tr, 1, "hook_pattern").double()  # (n_heads, T_target, T_source)
    entropy = -(A * A.log2()).sum(-1).mean(-1)  # no weight is exactly 0 here
    assert doc["layer"] == 1 and doc["head_choice"] == "sharpest" and doc["head"] == int(entropy.argmin())
    assert [h["entropy_bits"] for h in doc["heads"]] == pytest.approx(entropy.tolist(), abs=1e-9)
    assert doc["token"] == 3 and doc["query"] == "banana" and doc["query_reads"] == "some"  # not "." nor </s>
    assert explain_translation(model, tok, SOURCE, head=0)["head_choice"] == "given"


def test_a_given_target_is_fed_to_the_decoder_as_it_is(translator):
    model, tok = translator
    doc = explain_translation(model, tok, "爷爷吃了一些香蕉。", target="grandpa ate some banana banana .", token=-1)
    assert doc["text"] == SOURCE  # typed without spaces: cut into the words the model knows
    assert doc["translated"] is False and doc["finished"] is True
    assert doc["target"]["written"] == ["grandpa", "ate", "some", "banana", "banana", ".", "</s>"]
    assert doc["query"] == "</s>" and doc["next"]["actual"]["token"] == "</s>"


def test_the_traced_pass_passes_the_checks(translator):
    from qkv.analysis import cross_attention as analysis
    from qkv.core.see.invariants import check

    model, tok = translator
    report = check(analysis.trace(model, analysis.read(model, tok, SOURCE)))
    assert report.passed and any("source's values" in item.name for item in report.items)


def test_the_bundled_translation_model_if_there_is_one():
    from qkv.core.hub import bundled

    try:
        model, tok = load(bundled.default_translate_ckpt())
    except (AttributeError, ValueError) as e:
        pytest.skip(f"no bundled translation model: {e}")
    text = "我 昨天 吃了 苹果 。"
    doc = explain(model, tok, text, lang="zh").to_json()
    validate(doc)
    assert doc["translation"] == translate(model, tok, text) and doc["layer"] == model.cfg.n_layers - 1


# ---------------------------------------------------------------------------- shown


@pytest.mark.parametrize(
    "lang, words",
    [("en", ("Translation model", "Step 1", "reads most", "◀")), ("zh", ("翻译模型", "第一步", "最关注", "原文词"))],
)
def test_text_and_markdown_in_both_languages(translator, lang, words):
    model, tok = translator
    ex = explain(model, tok, SOURCE, layer=1, head=0, token=0, lang=lang)
    doc = ex.to_json()
    for out in (ex.to_text(), ex.to_markdown()):
        assert all(w in out for w in words), out[:400]
        assert "grandpa ate some banana ." in out
        for r in doc["reads"]:  # every number of every row, as printed
            assert all(f"{x['dot']:.4f}" in out and f"{x['weight']:.4f}" in out for x in r["rows"])
    other = explain(model, tok, SOURCE, layer=1, head=0, token=0, lang="zh" if lang == "en" else "en").to_text()
    assert other != ex.to_text()
    assert ("z lies inside the convex hull of the 5 source words' values" in ex.to_text()) == (lang == "en")


def test_the_gpt_explanation_is_not_touched():
    """A GPT's document keeps its kind and keys: the translation's blocks are only for kind "translation"."""
    from qkv.core.hub.bundled import default_ckpt

    gpt, tok = load(default_ckpt())
    d = explain(gpt, tok, "我 投资了 苹果 ，", layer=1, head=2).to_json()
    assert d["kind"] == "explain" and "reads" not in d and "hull" not in d["z"]
    assert "source word" not in explain(gpt, tok, "我 投资了 苹果 ，", layer=1, head=2).to_text()


# ---------------------------------------------------------------------------- the command line


def run_ok(capsys, argv) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def run_error(capsys, argv) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc != 0 and len(lines) == 1 and lines[0].startswith("qkv: error: "), err
    return lines[0]


def test_cli_explain_text_and_json(ckpt, capsys):
    out = run_ok(capsys, ["explain", "--ckpt", str(ckpt), SOURCE, "--lang", "zh"])
    assert "翻译模型" in out and "grandpa ate some banana ." in out
    doc = json.loads(
        run_ok(
            capsys,
            [
                "explain",
                "--ckpt",
                str(ckpt),
                SOURCE,
                "--format",
                "json",
                "--layer",
                "0",
                "--head",
                "1",
                "--token",
                "1",
                "--top",
                "3",
            ],
        )
    )
    validate(doc)
    assert (doc["kind"], doc["layer"], doc["head"], doc["token"], doc["query"]) == ("translation", 0, 1, 1, "ate")
    assert len(doc["next"]["top"]) == 3


@pytest.mark.parametrize(
    "args, words",
    [
        (["榴莲 。"], "'榴莲'"),
        ([SOURCE, "--token", "9"], "0..5"),
        ([SOURCE, "--layer", "2"], "the decoder has 2 layers"),
        ([SOURCE, "--head", "-3"], "2 heads"),
        (["   "], "empty"),
    ],
)
def test_cli_bad_input_is_one_line(ckpt, capsys, args, words):
    assert words in run_error(capsys, ["explain", "--ckpt", str(ckpt), *args])


# ---------------------------------------------------------------------------- the page's data and the API


def test_translation_view_holds_the_three_attentions(translator):
    model, tok = translator
    doc = translation_view(model, tok, SOURCE, name="tiny")
    validate(doc)
    tr = traced(model, tok, doc)
    assert doc["model"]["n_encoder_layers"] == 2 and doc["target"]["written"][-1] == "</s>"
    for part, name, shape in (
        ("cross", "decoder.blocks.{L}.cross_attn.hook_pattern", (6, 5)),
        ("decoder", "decoder.blocks.{L}.attn.hook_pattern", (6, 6)),
        ("encoder", "encoder.blocks.{L}.attn.hook_pattern", (5, 5)),
    ):
        A = unpack(doc["parts"][part]["arrays"]["pattern"])  # (L, H, T_query, T_key)
        assert A.shape[2:] == shape
        expected = np.stack([tr[name.format(L=L)][0].numpy() for L in range(2)])
        assert np.array_equal(A, expected), part
    assert doc["parts"]["decoder"]["arrays"]["pattern"]["layout"] == "lower"
    probs = tr["probs"][0]
    actual = unpack(doc["arrays"]["actual_prob"])
    assert actual == pytest.approx(probs[torch.arange(6), torch.tensor(doc["target"]["written_ids"])].numpy())


def test_gold_alignment_only_for_the_corpus_translation():
    p = tiny_pairs()[4]  # 爷爷 吃了 一些 香蕉 。 / grandpa ate some banana .
    cells, why = gold_alignment(list(p.zh), [*p.en, "</s>"])
    assert why == "gold" and cells == sorted((e, z) for z, e in p.links)
    assert gold_alignment(list(p.en), [*p.zh, "</s>"])[0] == sorted(p.links)  # the other direction
    assert gold_alignment(list(p.zh), ["grandpa", "ate", "</s>"]) == (None, "differs")
    assert gold_alignment(["香蕉", "爷爷", "吃了"], ["x", "</s>"]) == (None, "no_pair")


@pytest.fixture(scope="module")
def client(translator, ckpt):
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    return TestClient(create_app(*translator, str(ckpt)), base_url="http://127.0.0.1:8000")


def test_api_on_a_translation_model(client):
    info = client.get("/api/model").json()
    validate(info)
    assert info["model"]["arch"] == "seq2seq" and info["compare"] is None and info["source_lang"] == "zh"
    assert info["examples"] and all(not e.isascii() for e in info["examples"])  # Chinese sentences: its source
    r = client.post("/api/view", json={"text": info["examples"][0]})
    assert r.status_code == 200 and validate(r.json()) is None and r.json()["kind"] == "translation-view"
    r = client.post("/api/explain", json={"text": SOURCE, "layer": 1, "head": 0, "token": 2, "lang": "zh"})
    assert r.status_code == 200 and r.json()["kind"] == "translation" and r.json()["query"] == "some"
    for path, body, words in (
        ("/api/explain", {"text": SOURCE, "token": 7}, "0..5"),
        ("/api/explain", {"text": SOURCE, "layer": 5}, "decoder has 2 layers"),
        ("/api/view", {"text": "榴莲"}, "榴莲"),
        ("/api/view", {"ids": [3, 4]}, "source text"),
        ("/api/generate", {"text": SOURCE}, "translates"),
        ("/api/compare", {"a": SOURCE, "b": SOURCE, "word": "香蕉"}, "translation model"),
    ):
        r = client.post(path, json=body)
        assert r.status_code == 400 and words in r.json()["error"], (path, r.text)


def test_static_page_of_a_translation_model(translator, tmp_path):
    from qkv.apps.web.export import export_html

    path = export_html(*translator, SOURCE, tmp_path / "t.html", name="tiny", layer=0, head=1, token=-1)
    html = path.read_text(encoding="utf-8")
    assert '"kind":"translation-view"' in html and '"start":{"layer":0,"head":1,"token":5}' in html
    with pytest.raises(ValueError, match="6 target steps"):
        export_html(*translator, SOURCE, tmp_path / "u.html", token=6)

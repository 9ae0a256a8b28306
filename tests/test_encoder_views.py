"""explain, view, compare, the web API and the CLI on pretrained models: MiniLM (a BERT encoder, no LM
head) and a tiny random-weight GPT-2 saved by transformers with a byte-level BPE tokenizer.

For the encoder: every key is visible (the full attention matrix, sent whole), there is no next-token
section and the text says why, generating is a one-line error. For the GPT-2 directory: the next-token
probabilities qkv shows are transformers' softmax(logits).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from qkv.analysis.explain import explain as explain_doc
from qkv.analysis.schema import NEXT_ARRAYS, validate
from qkv.analysis.word_similarity import compare
from qkv.apps.cli import main
from qkv.apps.web.view import unpack_view, view
from qkv.presentation.explanation import explain

APPLE_A, APPLE_B = "I ate an apple", "I bought Apple shares"


def run_ok(capsys, argv) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err
    return out


def run_error(capsys, argv) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error: "), err
    return lines[0]


# ---------------------------------------------------------------------------- MiniLM: explain


def test_explain_one_head_of_minilm_sees_every_key_and_predicts_nothing(minilm):
    model, tok = minilm
    doc = explain_doc(model, tok, APPLE_A, layer=2, head=5)
    validate({**doc, "lang": "en"})
    assert doc["tokens"] == ["[CLS]", "i", "ate", "an", "apple", "[SEP]"]
    assert doc["token"] == 4 and doc["query"] == "apple"  # the default query skips [SEP]
    assert doc["next"] is None and doc["model"]["causal"] is False and doc["model"]["has_lm_head"] is False
    rows = doc["attention"]["rows"]
    assert [r["pos"] for r in rows] == list(range(6))  # keys after the query too
    _, tr = model.run_with_trace(torch.tensor([tok.encode(APPLE_A)]))
    A = tr["pattern", 2][0, 5, 4]  # (T,): this head's row for "apple"
    assert np.allclose([r["weight"] for r in rows], A.tolist(), atol=1e-6)
    assert A[5] > 0 and abs(sum(r["weight"] for r in rows) - 1) < 1e-5


@pytest.mark.parametrize("lang, why", [("en", "encoder"), ("zh", "编码器")])
def test_explain_text_of_an_encoder_says_why_there_is_no_next_token(minilm, lang, why):
    model, tok = minilm
    text = explain(model, tok, APPLE_A, layer=2, head=5, lang=lang).to_text()
    last = text.strip().splitlines()[-1]
    assert why in last and "softmax(h W_out" not in text
    assert "[SEP]" in text and "◀" in text  # the table of keys, every one
    summary = explain(model, tok, "Embeddings change", lang=lang).to_text()  # every head, and a WordPiece note
    assert "⁀" in summary and why in summary.strip().splitlines()[-1]


def test_explain_summary_of_minilm_counts_every_key(minilm):
    model, tok = minilm
    doc = explain_doc(model, tok, APPLE_A, token=1)
    assert len(doc["heads"]) == 6 * 12 and doc["next"] is None
    assert doc["max_entropy_bits"] == pytest.approx(np.log2(6))  # all 6 keys, not the 2 up to the query


# ---------------------------------------------------------------------------- MiniLM: the page's data


def test_view_of_minilm_sends_the_full_matrix_and_no_next_tokens(minilm):
    model, tok = minilm
    doc = view(model, tok, "The embeddings of a word", name="minilm")
    validate(doc)
    ids = tok.encode("The embeddings of a word")
    assert doc["tokens"][:5] == ["[CLS]", "the", "em", "⁀bed", "⁀ding"]
    assert doc["special"] == [0, len(ids) - 1] and doc["continues"] == [3, 4, 5]
    assert "layout" not in doc["arrays"]["pattern"] and not set(NEXT_ARRAYS) & set(doc["arrays"])
    A = unpack_view(doc)
    _, tr = model.run_with_trace(torch.tensor([ids]))
    pattern = torch.stack([tr["pattern", L][0] for L in range(6)]).numpy()
    assert np.array_equal(A["pattern"], pattern)
    assert (np.triu(A["pattern"], 1) > 0).any()  # keys after the query carry weight
    m = doc["model"]
    assert m["has_lm_head"] is False and m["parameters"] == model.num_params()
    assert m["design"] == "encoder" and m["generates"] is False and m["translates"] is False
    assert (
        m["loaded_from"]["name"] == "minilm"
        and "MiniLM" in m["loaded_from"]["title"]
        and m["loaded_from"]["architecture"] == "bert"
    )
    assert m["weights_bytes"] > 80e6  # model.safetensors, 87 MB


def test_compare_apple_on_minilm_is_the_cosine_of_its_hidden_states(minilm):
    model, tok = minilm
    doc = compare(model, tok, APPLE_A, APPLE_B, "apple")
    validate(doc)
    assert doc["a"]["tokens"][doc["a"]["pos"]] == "apple" == doc["b"]["tokens"][doc["b"]["pos"]]
    cos = [s["cosine"] for s in doc["stages"]]
    assert len(cos) == 6 + 2 and cos[0] == pytest.approx(1, abs=1e-6)  # the same row of W_E
    hidden = [model(torch.tensor([tok.encode(s)]))[0, p] for s, p in ((APPLE_A, 4), (APPLE_B, 3))]  # the output
    assert cos[-1] == pytest.approx(torch.cosine_similarity(*hidden, dim=0).item(), abs=1e-5)
    assert cos[-1] < 0.95  # the two readings have drifted apart


def test_compare_needs_the_word_in_both_sentences(minilm):
    from qkv.core.see.indices import TextError

    model, tok = minilm
    with pytest.raises(TextError, match="not in the sentence"):
        compare(model, tok, APPLE_A, "I bought shares", "apple")


# ---------------------------------------------------------------------------- MiniLM: web API, export


@pytest.fixture(scope="module")
def client(minilm):
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    return TestClient(create_app(*minilm, "minilm"), base_url="http://127.0.0.1:8000")


def test_api_on_minilm(client, minilm):
    info = client.get("/api/model").json()
    validate(info)
    assert info["examples"][0] == APPLE_A and info["compare"] == {"a": APPLE_A, "b": APPLE_B, "word": "apple"}
    assert all("[UNK]" not in minilm[1].pieces(e) for e in info["examples"])
    assert info["model"]["loaded_from"]["path"].endswith("model") and info["model"]["has_lm_head"] is False
    r = client.post("/api/view", json={"text": APPLE_A})
    assert r.status_code == 200 and validate(r.json()) is None
    r = client.post("/api/compare", json={"a": APPLE_A, "b": APPLE_B, "word": "apple"})
    assert r.status_code == 200 and len(r.json()["stages"]) == 8
    r = client.post("/api/explain", json={"text": APPLE_A, "layer": 2, "head": 5})
    assert r.status_code == 200 and r.json()["next"] is None


def test_generate_on_an_encoder_is_a_400_that_says_why(client):
    r = client.post("/api/generate", json={"text": APPLE_A})
    assert r.status_code == 400 and "encoder" in r.json()["error"]


def test_html_export_of_minilm(minilm, tmp_path):
    from qkv.apps.web.export import export_html

    path = export_html(*minilm, APPLE_A, tmp_path / "page.html", name="minilm", layer=2, head=5)
    html = path.read_text(encoding="utf-8")
    data = json.loads(html.split('<script id="qkv-data" type="application/json">')[1].split("</script>")[0])
    assert data["view"]["model"]["has_lm_head"] is False and "next_probs" not in data["view"]["arrays"]
    assert data["compare"]["word"] == "apple" and data["start"] == {"layer": 2, "head": 5}


# ---------------------------------------------------------------------------- MiniLM: the CLI


def test_cli_explain_on_minilm(capsys, minilm):
    out = run_ok(capsys, ["explain", APPLE_A, "--ckpt", "minilm", "--layer", "2", "--head", "5"])
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r[:2] for r in rows[:6]] == [
        ["0", "[CLS]"],
        ["1", "i"],
        ["2", "ate"],
        ["3", "an"],
        ["4", "apple"],
        ["5", "[SEP]"],
    ]
    assert "P(next token)" not in out and "No next-token prediction" in out


def test_cli_generate_on_minilm_is_one_line(capsys, minilm):
    assert "encoder" in run_error(capsys, ["generate", "--ckpt", "minilm", "--prompt", "I ate"])


def test_cli_info_on_minilm(capsys, minilm):
    out = run_ok(capsys, ["info", "--ckpt", "minilm"])
    first = out.splitlines()[0]
    assert "all-MiniLM-L6-v2" in first and f"{minilm[0].num_params():,} parameters" in first and "encoder" in first
    assert "  n_layers = 6" in out and "  causal = False" in out


# ---------------------------------------------------------------------------- a GPT-2 directory


SENTENCES = "the cat sat on the mat . i ate an apple . i bought apple shares . the dog ate a bone .\n"


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """A random-weight GPT-2 saved by transformers, with a byte-level BPE tokenizer trained here."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import ByteLevelBPETokenizer

    d = tmp_path_factory.mktemp("gpt2")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([SENTENCES] * 20, vocab_size=320, min_frequency=1, show_progress=False)
    bpe.save(str(d / "tokenizer.json"))
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=bpe.get_vocab_size(), bos_token_id=0, eos_token_id=0
    )
    hf = transformers.GPT2LMHeadModel(cfg).eval()
    hf.save_pretrained(d, safe_serialization=True)
    return d, hf


def test_gpt2_dir_explain_next_tokens_are_transformers_softmax(gpt2_dir):
    from tokenizers import Tokenizer

    from qkv.core.train.checkpoint import load

    d, hf = gpt2_dir
    model, tok = load(d)
    text = "i ate an apple"
    ids = tok.encode(text)
    assert ids == Tokenizer.from_file(str(d / "tokenizer.json")).encode(text).ids  # qkv reads its tokenizer.json
    doc = explain_doc(model, tok, text, layer=1, head=0, token=2, top=5)
    validate({**doc, "lang": "en"})
    with torch.no_grad():
        probs = hf(torch.tensor([ids])).logits.softmax(-1)[0]  # (T, d_vocab)
    assert doc["model"]["causal"] and len(doc["attention"]["rows"]) == 3  # keys 0..2 only
    for row in doc["next"]["top"]:
        assert row["prob"] == pytest.approx(probs[2, row["id"]].item(), abs=1e-5)
    assert [r["id"] for r in doc["next"]["top"]] == torch.topk(probs[2], 5).indices.tolist()
    assert doc["next"]["actual"]["prob"] == pytest.approx(probs[2, ids[3]].item(), abs=1e-5)
    text_out = explain(model, tok, text, layer=1, head=0, lang="zh").to_text()
    assert "softmax(h W_out)，" in text_out


def test_gpt2_dir_view_and_compare(gpt2_dir):
    from qkv.core.train.checkpoint import load

    d, hf = gpt2_dir
    model, tok = load(d)
    doc = view(model, tok, "i ate an apple", name=str(d))
    validate(doc)
    A = unpack_view(doc)
    ids = doc["ids"]
    with torch.no_grad():
        probs = hf(torch.tensor([ids])).logits.softmax(-1)[0]
    assert np.allclose(A["next_probs"], torch.topk(probs, 10, dim=-1).values.numpy(), atol=1e-5)
    assert doc["arrays"]["pattern"]["layout"] == "lower"
    src = doc["model"]["loaded_from"]
    assert src["architecture"] == "gpt2" and src["path"] == str(d.resolve()) and doc["model"]["weights_bytes"] > 0
    c = compare(model, tok, "i ate an apple", "i bought apple shares", "apple")  # " apple" inside a sentence
    assert c["a"]["tokens"][c["a"]["pos"]].strip("␣ ") == "apple" and len(c["stages"]) == 4


def test_gpt2_dir_cli(capsys, gpt2_dir):
    d, _ = gpt2_dir
    out = run_ok(capsys, ["explain", "i ate an apple", "--ckpt", str(d), "--layer", "0", "--head", "1"])
    assert "softmax(h W_out) at position" in out
    out = run_ok(capsys, ["info", "--ckpt", str(d)])
    assert "gpt2" in out.splitlines()[0] and "decoder" in out.splitlines()[0]

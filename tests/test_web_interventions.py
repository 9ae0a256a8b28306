"""The explorer's intervention endpoints (qkv.apps.web.routes_interventions): /api/lens, /api/attribution and
/api/patch, through an in-process client.

Each answer is held against the Python API called here directly (lens_top, logit_attribution, patch_text),
and against a route that does not go through it: the model's own logits for the lens's last row and the
attribution's sum, and patched runs made here with model.run_with_hooks for the patching cells. Bad input
is a 400 or 422 with one line, in English and (Accept-Language: zh) in Chinese.
"""

from __future__ import annotations

import re

import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, Encoder, ModelConfig, WordTokenizer, load
from qkv.analysis.attribution import logit_attribution
from qkv.analysis.lens import lens_top
from qkv.analysis.patch import patch_text
from qkv.analysis.schema import validate
from qkv.apps.web import routes_interventions
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt

SENTENCE = "我 投资了 苹果 ，"
CLEAN, CORRUPT, ANSWER, WRONG = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，", "味道", "股价"
ZH = {"accept-language": "zh-CN,zh;q=0.9"}
HAN = re.compile("[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


@pytest.fixture(scope="module")
def client(bundled):
    return TestClient(create_app(*bundled, "bundled"), base_url="http://127.0.0.1:8000")


def client_of(model, tok, name="tiny"):
    return TestClient(create_app(model.eval(), tok, name), base_url="http://127.0.0.1:8000")


def ok(response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()


def close(a, b, tol=1e-6) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def refused(client, path, body, status, needle_en=None) -> tuple[str, str]:
    """The one line `path` answers `body` with, in English and in Chinese (each checked: one line, the status)."""
    lines = []
    for headers in ({}, ZH):
        r = client.post(path, json=body, headers=headers)
        assert r.status_code == status, (path, body, r.status_code, r.text)
        line = r.json()["error"]
        assert line and "\n" not in line and "Traceback" not in line, line
        lines.append(line)
    en, zh = lines
    assert en != zh and HAN.search(zh) and not HAN.search(re.sub(r"'[^']*'|“[^”]*”|\([^)]*\)", "", en)), lines
    if needle_en:
        assert needle_en in en, en
    return en, zh


# ------------------------------------------------------------------ the logit lens


@pytest.mark.parametrize("position", [3, -1, 0])
def test_lens_is_lens_top_and_its_last_row_is_the_models_output(client, bundled, position):
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    doc = ok(client.post("/api/lens", json={"ids": ids, "token": position, "top": 7}))
    assert doc == lens_top(model, ids, position=position, k=7, tokenizer=tok)
    assert doc["kind"] == "logit-lens" and len(doc["layers"]) == model.cfg.n_layers + 1
    validate(doc)
    # the last row is softmax(model(ids)) at that position: the model's own forward, not the lens's
    with torch.no_grad():
        p = torch.softmax(model(torch.tensor([ids]))[0, position].double(), -1)
    top = torch.topk(p, 7)
    last = doc["layers"][-1]["top"]
    assert [c["id"] for c in last] == top.indices.tolist() and doc["final"]["id"] == int(p.argmax())
    assert all(close(c["p"], float(q), 1e-5) for c, q in zip(last, top.values))
    assert [c["token"] for c in last] == [tok.display(i) for i in top.indices.tolist()]
    # the text reads as its ids do (the default position: the last)
    assert ok(client.post("/api/lens", json={"text": SENTENCE})) == lens_top(model, ids, -1, 5, tok)


# ------------------------------------------------------------------ direct logit attribution


@pytest.mark.parametrize("target", [None, "味道", 126])
def test_attribution_is_the_python_apis_and_sums_to_the_models_logit(client, bundled, target):
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    body = {"text": SENTENCE, "token": 3} | ({"target": target} if target is not None else {})
    doc = ok(client.post("/api/attribution", json=body))
    assert doc == logit_attribution(model, ids, position=3, token=target, tokenizer=tok).to_json()
    assert doc["kind"] == "logit-attribution"
    validate(doc)
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0, 3]
    want = int(logits.argmax()) if target is None else target if isinstance(target, int) else tok.encode(target)[0]
    assert doc["token"] == want and doc["token_text"] == tok.display(want)
    assert close(doc["logit"], float(logits[want]), 1e-5)  # the model's own logit, by its plain forward
    terms = [c["value"] for c in doc["components"]]
    assert close(sum(terms), doc["logit"], 1e-5) and close(doc["total"], sum(terms), 1e-12)
    heads = torch.tensor(doc["heads"])
    assert heads.shape == (model.cfg.n_layers, model.cfg.n_heads)
    named = {c["name"]: c["value"] for c in doc["components"]}
    assert all(named[f"L{L}H{h}"] == heads[L, h] for L in range(heads.shape[0]) for h in range(heads.shape[1]))
    assert [named[f"L{L}_mlp"] for L in range(model.cfg.n_layers)] == doc["mlp"]


# ------------------------------------------------------------------ activation patching


def patched_by_hand(model, clean, corrupt, answer, wrong, name, index, by_head):
    """The metric of the corrupted run with the clean run's piece at `name` (position or head `index`) put in,
    made here with run_with_hooks (not qkv.analysis.patch)."""
    seen = {}
    with torch.no_grad():
        model.run_with_hooks(torch.tensor([clean]), fwd_hooks=[(name, lambda a, hook: seen.setdefault("x", a.clone()))])

        def put(a, hook):
            a = a.clone()
            if by_head:
                a[:, :, index] = seen["x"][:, :, index]  # (B, T, n_heads, d_head): head `index` everywhere
            else:
                a[:, index] = seen["x"][:, index]  # (B, T, d_model): position `index`
            return a

        logits = model.run_with_hooks(torch.tensor([corrupt]), fwd_hooks=[(name, put)])
    return float(logits[0, -1, answer] - logits[0, -1, wrong])


@pytest.mark.parametrize("site", ["resid_pre", "attn_out", "mlp_out", "z"])
def test_patch_is_patch_text_and_its_cells_are_patched_runs(client, bundled, site):
    model, tok = bundled
    body = {"clean": CLEAN, "corrupt": CORRUPT, "answer": ANSWER, "wrong": WRONG, "site": site}
    doc = ok(client.post("/api/patch", json=body))
    assert doc == patch_text(model, tok, CLEAN, CORRUPT, ANSWER, WRONG, site=site).to_json(tok)
    validate(doc)
    clean, corrupt = tok.encode(CLEAN), tok.encode(CORRUPT)
    a, w = tok.encode(ANSWER)[0], tok.encode(WRONG)[0]
    with torch.no_grad():
        both = model(torch.tensor([clean, corrupt]))[:, -1]
    assert close(doc["clean"], float(both[0, a] - both[0, w]), 1e-5)
    assert close(doc["corrupted"], float(both[1, a] - both[1, w]), 1e-5)
    assert doc["clean"] > doc["corrupted"]  # the pair separates the two senses on this model
    values = torch.tensor(doc["values"], dtype=torch.float64)
    share = (values - doc["corrupted"]) / (doc["clean"] - doc["corrupted"])
    assert torch.allclose(torch.tensor(doc["normalized"], dtype=torch.float64), share, atol=1e-9)
    by_head = site == "z"
    assert values.shape == (model.cfg.n_layers, model.cfg.n_heads if by_head else len(clean))
    name = {"resid_pre": "blocks.{L}.hook_resid_pre", "attn_out": "blocks.{L}.hook_attn_out",
            "mlp_out": "blocks.{L}.hook_mlp_out", "z": "blocks.{L}.attn.hook_z"}[site]  # fmt: skip
    for L, i in ((0, 2), (model.cfg.n_layers - 1, values.shape[1] - 1), (1, 1)):
        m = patched_by_hand(model, clean, corrupt, a, w, name.format(L=L), i, by_head)
        assert close(float(values[L, i]), m, 1e-4), (site, L, i)


def test_the_panel_opens_on_a_pair_the_bundled_model_reads(client, bundled):
    model, tok = bundled
    doc = ok(client.get("/api/patch"))
    validate(doc)
    assert doc["kind"] == "patch-example" and doc["sites"] == ["resid_pre", "attn_out", "mlp_out", "z"]
    ex = doc["example"]
    assert ex == {"clean": CLEAN, "corrupt": CORRUPT, "answer": ANSWER, "wrong": WRONG}
    assert len(tok.encode(ex["clean"])) == len(tok.encode(ex["corrupt"]))
    assert len(tok.encode(ex["answer"])) == len(tok.encode(ex["wrong"])) == 1


def test_patching_work_is_bounded_and_the_refusal_says_how_many_tokens_fit(client, bundled, monkeypatch):
    model, tok = bundled
    params, L = model.num_params(), model.cfg.n_layers
    monkeypatch.setattr(routes_interventions, "PATCH_WORK", 3 * 3 * L * params)  # three tokens per position site
    body = {"clean": CLEAN, "corrupt": CORRUPT, "answer": ANSWER, "wrong": WRONG, "site": "resid_pre"}
    en, zh = refused(client, "/api/patch", body, 400, "use at most 3 tokens")
    assert "at most 3 tokens" in en and "3 个词元" in zh
    three = {**body, "clean": "我 吃了 ，", "corrupt": "我 投资了 ，"}
    assert ok(client.post("/api/patch", json=three))["site"] == "resid_pre"  # 3 tokens: within the bound
    # z patches n_layers x n_heads pieces whatever T: 3 x L x H x params fits 3 tokens
    monkeypatch.setattr(routes_interventions, "PATCH_WORK", 3 * L * model.cfg.n_heads * params)
    refused(client, "/api/patch", {**body, "site": "z"}, 400, "use at most 3 tokens")
    assert ok(client.post("/api/patch", json={**three, "site": "z"}))["site"] == "z"
    monkeypatch.setattr(routes_interventions, "PATCH_WORK", params)  # not even one token
    refused(client, "/api/patch", body, 400, "even for one token")


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    "path, body, status, needle",
    [
        ("/api/lens", {"text": SENTENCE, "token": 9}, 400, "token 9 is out of range"),
        ("/api/lens", {"text": SENTENCE, "top": 0}, 422, "top"),
        ("/api/lens", {"token": 0}, 422, "give either text or ids"),
        ("/api/lens", {"ids": [0, 10**6]}, 400, "token id 1000000 is out of range"),
        ("/api/lens", {"text": ""}, 400, "the text is empty"),
        ("/api/attribution", {"text": SENTENCE, "target": "吃了 苹果"}, 400, "is 2 tokens"),
        ("/api/attribution", {"text": SENTENCE, "target": 10**6}, 400, "is out of range"),
        ("/api/attribution", {"text": SENTENCE, "target": 1.5}, 422, "target"),
        ("/api/attribution", {"text": SENTENCE, "target": ""}, 400, "the target of the attribution must be a word"),
        # a string is a word, digits too: the page sends what its field reads as an id (173, #173) as a number
        ("/api/attribution", {"text": SENTENCE, "target": "173"}, 400, "'173' is 2 tokens"),
        ("/api/patch", {"clean": CLEAN, "corrupt": SENTENCE, "answer": ANSWER, "wrong": WRONG}, 400, "has 5 tokens ("),
        ("/api/patch", {"clean": CLEAN, "corrupt": CORRUPT, "answer": "味道 很", "wrong": WRONG}, 400, "is 2 tokens"),
        ("/api/patch", {"clean": CLEAN, "corrupt": CORRUPT, "answer": "", "wrong": WRONG}, 400, "not empty"),
        ("/api/patch", {"clean": CLEAN, "corrupt": CORRUPT, "answer": ANSWER, "wrong": WRONG, "site": "q"}, 422, "'z'"),
        ("/api/patch", {"clean": CLEAN, "corrupt": CORRUPT, "answer": ANSWER}, 422, "wrong"),
        ("/api/patch", {"clean": "", "corrupt": CORRUPT, "answer": ANSWER, "wrong": WRONG}, 400, "the text is empty"),
    ],
)
def test_bad_input_is_one_line_in_both_languages(client, path, body, status, needle):
    refused(client, path, body, status, needle)


def test_bodies_are_bounded_before_they_are_read(client):
    big = {"ids": [1] * 4096, "token": 0}
    assert client.post("/api/lens", json=big).status_code == 400  # read (n_ctx refuses it), not a 413
    J = {"content-type": "application/json"}
    r = client.post("/api/lens", content=b'{"text": "' + b"x" * 70_000 + b'"}', headers=J)
    assert r.status_code == 413 and "\n" not in r.json()["error"]
    assert client.post("/api/patch", content=b'{"clean": "' + b"x" * 300_000 + b'"}', headers=J).status_code == 413


# ------------------------------------------------------------------ families the panels cannot serve


def tiny_word():
    return WordTokenizer.train("我 吃了 苹果 ， 他 投资了 苹果 。 味道 股价")


def test_an_encoder_and_a_translation_model_are_refused_in_one_line():
    tok = tiny_word()
    torch.manual_seed(0)
    enc = Encoder(ModelConfig(arch="bert", d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2))
    c = client_of(enc, tok)
    body = {"text": "我 吃了 苹果"}
    refused(c, "/api/lens", body, 400, "the logit lens reads a GPT's residual stream")
    refused(c, "/api/attribution", body, 400, "direct logit attribution")
    patch = {"clean": "我 吃了 苹果", "corrupt": "他 吃了 苹果", "answer": "味道", "wrong": "股价"}
    refused(c, "/api/patch", patch, 400, "no logits")
    assert ok(c.get("/api/patch")) | {"format": None} == {"format": None, "version": 1, "kind": "patch-example",
                                                             "example": None, "sites": []}  # fmt: skip
    tr = TestClient(create_app(*load(default_translate_ckpt()), "bundled-translate"), base_url="http://127.0.0.1")
    refused(tr, "/api/lens", {"text": "我 吃了 苹果"}, 400, "the logit lens reads a GPT's residual stream")
    refused(tr, "/api/attribution", {"text": "我 吃了 苹果"}, 400, "direct logit attribution")
    refused(tr, "/api/patch", {**patch, "corrupt": "我 买了 苹果"}, 400, "two")
    assert ok(tr.get("/api/patch"))["example"] is None


def test_attention_only_and_post_norm_gpts():
    tok = tiny_word()
    torch.manual_seed(0)
    shape = dict(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2)
    bare = GPT(ModelConfig(**shape, mlp="none")).eval()
    c = client_of(bare, tok)
    example = ok(c.get("/api/patch"))
    assert example["sites"] == ["resid_pre", "attn_out", "z"]  # no MLP: no mlp_out
    assert example["example"] is None  # 昨天 and the rest are not its words: the page opens on its own sentence
    patch = {"clean": "我 吃了 苹果", "corrupt": "他 投资了 苹果", "answer": "味道", "wrong": "股价"}
    refused(c, "/api/patch", {**patch, "site": "mlp_out"}, 400, "no MLP")
    assert ok(c.post("/api/patch", json={**patch, "site": "attn_out"})) == patch_text(
        bare, tok, patch["clean"], patch["corrupt"], "味道", "股价", site="attn_out"
    ).to_json(tok)
    doc = ok(c.post("/api/attribution", json={"text": "我 吃了 苹果"}))
    assert doc["mlp"] is None and close(doc["total"], doc["logit"], 1e-5)
    post = GPT(ModelConfig(**shape, norm="post")).eval()
    c = client_of(post, tok)
    refused(c, "/api/attribution", {"text": "我 吃了 苹果"}, 400, "post-norm")
    lens = ok(c.post("/api/lens", json={"text": "我 吃了 苹果"}))
    assert lens == lens_top(post, tok.encode("我 吃了 苹果"), -1, 5, tok)

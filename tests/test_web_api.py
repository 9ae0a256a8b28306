"""The explorer's JSON API (qkv.apps.web.server) on the bundled model, through an in-process client."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from qkv import load
from qkv.analysis.packing import dumps, pack, unpack
from qkv.analysis.schema import validate
from qkv.analysis.word_similarity import compare
from qkv.apps.web.server import ASSETS, allowed_hosts, asset, create_app, host_name
from qkv.apps.web.view import unpack_view, view
from qkv.core.decode.sample import generate_ids
from qkv.core.hub.bundled import default_ckpt
from qkv.presentation.explanation import explain

SENTENCE = "我 投资了 苹果 ，"


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


@pytest.fixture(scope="module")
def client(bundled):
    model, tokenizer = bundled
    return TestClient(create_app(model, tokenizer, "bundled"), base_url="http://127.0.0.1:8000")


def error_of(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == status and isinstance(body["error"], str)
    assert body["error"] and "\n" not in body["error"] and "Traceback" not in body["error"]
    return body["error"]


def test_model_endpoint_lists_examples_the_model_can_read(client, bundled):
    doc = client.get("/api/model").json()
    validate(doc)
    assert doc["model"]["n_layers"] == bundled[0].cfg.n_layers and doc["model"]["tokenizer"] == "word"
    assert SENTENCE in doc["examples"]
    assert doc["compare"] == {"a": "我 昨天 吃了 苹果", "b": "我 上周 投资了 苹果", "word": "苹果"}
    pair = compare(*bundled, doc["compare"]["a"], doc["compare"]["b"], "苹果")
    assert pair["same_position"]  # the default pair puts the word at one position in both sentences
    for text in doc["examples"]:
        assert client.post("/api/view", json={"text": text}).status_code == 200


def test_view_endpoint_returns_the_view_document(client, bundled):
    doc = client.post("/api/view", json={"text": SENTENCE}).json()
    validate(doc)
    direct = view(*bundled, SENTENCE, "bundled")
    assert doc == direct  # bit for bit: one process; the server's threads use torch's thread count too
    assert doc["tokens"] == [bundled[1].display(i) for i in bundled[1].encode(SENTENCE)]


def js_scaled_scores(dots: np.ndarray, scale: float) -> np.ndarray:
    """What the page computes (decode.js scaledScores): Math.fround(dot / Math.fround(scale)), causal mask −∞."""
    out = (dots.astype(np.float64) / np.float64(np.float32(scale))).astype(np.float32)
    T = dots.shape[-1]
    out[..., np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    return out


@pytest.mark.parametrize("d_model, n_heads", [(384, 6), (96, 3), (40, 5), (128, 4)])
def test_the_pages_scaled_scores_are_the_models_bit_for_bit(d_model, n_heads):
    from qkv import GPT, ModelConfig

    torch.manual_seed(d_model)
    model = GPT(ModelConfig(d_vocab=50, n_ctx=64, d_model=d_model, n_heads=n_heads, n_layers=2)).eval()
    _, tr = model.run_with_trace(torch.randint(0, 50, (1, 64)))
    for L in range(2):
        dots, scores = tr["dots", L][0].numpy(), tr["attn_scores", L][0].numpy()
        # one correctly rounded float32 division on both sides: bit for bit by construction
        np.testing.assert_array_equal(js_scaled_scores(dots, math.sqrt(d_model // n_heads)), scores)


def test_view_numbers_are_the_traced_activations(bundled):
    model, tokenizer = bundled
    doc = view(model, tokenizer, SENTENCE)
    arrays = unpack_view(doc)
    ids = torch.tensor([tokenizer.encode(SENTENCE)])
    _, tr = model.run_with_trace(ids)  # the same forward pass as view's, in this process: the same floats
    for L in range(model.cfg.n_layers):
        np.testing.assert_array_equal(arrays["pattern"][L], tr["pattern", L][0].numpy())
        np.testing.assert_array_equal(arrays["dots"][L], np.tril(tr["dots", L][0].numpy()))  # causal: lower triangle
        scores = tr["attn_scores", L][0].numpy()
        np.testing.assert_array_equal(js_scaled_scores(arrays["dots"][L], doc["scale"]), scores)
        z = tr["z", L][0].transpose(0, 1)  # (T, H, d) -> (H, T, d)
        np.testing.assert_allclose(arrays["z_norm"][L], z.norm(dim=-1).numpy(), rtol=1e-6)
        np.testing.assert_array_equal(arrays["z_first"][L], z[..., :4].numpy())
    probs = tr["probs"][0]
    np.testing.assert_array_equal(arrays["next_probs"][:, 0], probs.max(-1).values.numpy())
    np.testing.assert_array_equal(arrays["next_ids"][:, 0], probs.argmax(-1).numpy())


def test_projected_z_is_the_same_convex_combination_of_projected_values(bundled):
    arrays = unpack_view(view(*bundled, "患者 服用 华法林 后 出现了 黑便 。"))
    A, v2, z2 = arrays["pattern"].astype(float), arrays["v_2d"].astype(float), arrays["z_2d"].astype(float)
    np.testing.assert_allclose(np.einsum("lhij,lhjc->lhic", A, v2), z2, atol=1e-5)
    assert ((arrays["kept_2d"] > 0) & (arrays["kept_2d"] <= 1 + 1e-6)).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_the_2d_picture_keeps_nearly_the_principal_variance(bundled, seed):
    """Subspace iteration's two directions against the principal pair (a full eigendecomposition)."""
    from qkv.apps.web.view import _values_2d

    torch.manual_seed(seed)
    v, z = torch.randn(3, 2, 40, 24) * torch.linspace(3, 0.1, 24), torch.randn(3, 2, 40, 24)
    v2, z2, kept = _values_2d(v, z)
    c = v.double() - v.double().mean(2, keepdim=True)
    eig = torch.linalg.eigvalsh(c.transpose(-1, -2) @ c)
    best = eig[..., -2:].sum(-1) / eig.sum(-1)
    assert (kept <= best + 1e-9).all() and (kept >= 0.97 * best).all(), kept / best
    np.testing.assert_allclose(v2.var(2, unbiased=False).sum(-1) / c.var(2, unbiased=False).sum(-1), kept, rtol=1e-9)


def test_a_one_token_text_has_a_view(bundled):
    arrays = unpack_view(view(*bundled, "我"))
    assert arrays["pattern"].shape[-2:] == (1, 1) and (arrays["pattern"] == 1).all()
    assert arrays["actual_prob"].shape == (0,) and np.isfinite(arrays["v_2d"]).all()


def test_pack_round_trips_and_keeps_infinities():
    x = torch.tensor([[1.5, -float("inf")], [0.0, 3.25]])
    p = pack(x)
    assert p["dtype"] == "float32" and p["shape"] == [2, 2]
    np.testing.assert_array_equal(unpack(p), x.numpy())
    assert unpack(pack(torch.tensor([3, -1]))).dtype == np.int32


def test_explain_endpoint_equals_explain(client, bundled):
    token = len(bundled[1].encode(SENTENCE)) - 2
    body = {"text": SENTENCE, "layer": 1, "head": 0, "token": token, "lang": "zh"}
    doc = client.post("/api/explain", json=body).json()
    validate(doc)
    assert doc == explain(*bundled, SENTENCE, layer=1, head=0, token=token, lang="zh").to_json()  # one process


def test_generate_endpoint_matches_generate_ids(client, bundled):
    model, tokenizer = bundled
    body = {"text": SENTENCE, "max_new_tokens": 8, "temperature": 0.7, "top_k": 20, "seed": 3}
    doc = client.post("/api/generate", json=body).json()
    validate(doc)
    ids = tokenizer.encode(SENTENCE)
    new = list(generate_ids(model, ids, 8, 0.7, 20, None, 3))  # the same process, ops and seed: the same tokens
    assert doc["ids"] == ids + new and doc["text"] == tokenizer.decode(ids + new)
    assert doc["text"] == SENTENCE + doc["added"]


def test_generate_stops_at_n_ctx(client, bundled):
    model, tokenizer = bundled
    n_ctx = model.cfg.n_ctx
    words = lambda T: next(
        " ".join(["苹果"] * k) for k in range(1, n_ctx + 1) if len(tokenizer.encode(" ".join(["苹果"] * k))) >= T
    )
    text = words(n_ctx - 3)  # room for 3 more (or fewer)
    doc = client.post("/api/generate", json={"text": text, "max_new_tokens": 50, "temperature": 0}).json()
    assert len(doc["ids"]) == n_ctx
    full = words(n_ctx)  # n_ctx tokens: no room left
    assert len(tokenizer.encode(full)) == n_ctx
    assert "fills n_ctx" in error_of(client.post("/api/generate", json={"text": full, "max_new_tokens": 5}), 400)


def test_generate_says_when_it_stops_at_n_ctx(client, bundled):
    model, tokenizer = bundled
    n_ctx, T = model.cfg.n_ctx, len(tokenizer.encode(SENTENCE))
    doc = client.post("/api/generate", json={"text": SENTENCE, "max_new_tokens": n_ctx, "temperature": 0}).json()
    assert len(doc["ids"]) == n_ctx and doc["stopped"] == {
        "asked": n_ctx,
        "made": n_ctx - T,
        "n_ctx": n_ctx,
        "end": False,
    }
    doc = client.post("/api/generate", json={"text": SENTENCE, "max_new_tokens": n_ctx - T, "temperature": 0}).json()
    assert len(doc["ids"]) == n_ctx and doc["stopped"] is None  # all it asked for: nothing to say


def test_model_says_whether_whitespace_is_a_token():
    """space_tokens / whitespace_tokens against the vocabularies' own strings, for three tokenizers."""
    from qkv import GPT, ModelConfig
    from qkv.apps.web.model_doc import space_tokens
    from qkv.core.text.tokenizers import train_tokenizer

    text = "i ate apple .\nwe ate pear .\n"
    for tok in (
        train_tokenizer("char", text),
        train_tokenizer("word", text, whitespace=True),
        train_tokenizer("word", text, whitespace=False),
        train_tokenizer("word", text.replace("\n", " "), whitespace=False),
    ):
        pieces = [tok.decode([i]) for i in range(tok.vocab_size)]
        info = create_app(GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=8, n_heads=2, n_layers=1)), tok)
        got = TestClient(info, base_url="http://127.0.0.1:8000").get("/api/model").json()["model"]
        assert got["space_tokens"] == (" " in pieces) and got == {**got, **space_tokens(tok, tok.vocab_size)}
        assert got["whitespace_tokens"] == any(p and p.isspace() for p in pieces), pieces


@pytest.mark.parametrize(
    "extra",
    [
        {"temperature": 1e-320},
        {"temperature": 1e-45},
        {"top_p": 1e-320},
        {"temperature": 1e-320, "top_p": 1e-320, "top_k": 1},
    ],
)
def test_generate_survives_extreme_sampling_values(client, extra):
    doc = client.post("/api/generate", json={"text": SENTENCE, "max_new_tokens": 3, "seed": 0, **extra}).json()
    assert len(doc["ids"]) == len(client.post("/api/view", json={"text": SENTENCE}).json()["ids"]) + 3


def test_generated_ids_are_viewed_as_generated(client, bundled):
    """Decoding and re-tokenizing may not give the same tokens (two words with no space between
    them read as one unknown word, or are cut apart with a space): the page views the ids that
    generation returned."""
    model, tokenizer = bundled
    ids = tokenizer.encode("我 投资了") + tokenizer.encode("苹果")  # (with ␣ tokens: no space token between the words)
    doc = client.post("/api/view", json={"ids": ids}).json()
    validate(doc)
    assert doc["ids"] == ids and doc == view(model, tokenizer, name="bundled", ids=ids)
    assert "out of range" in error_of(client.post("/api/view", json={"ids": [0, 10**6]}), 400)
    assert "either" in error_of(client.post("/api/view", json={"text": SENTENCE, "ids": ids}), 422)


def test_a_view_too_big_for_a_page_is_refused():
    from qkv import GPT, CharTokenizer, ModelConfig
    from qkv.analysis.inputs import MAX_CELLS, check_size

    cfg = ModelConfig(d_vocab=10, n_ctx=2048, d_model=16, n_heads=16, n_layers=12, d_head=1)
    most = math.isqrt(MAX_CELLS // (12 * 16))
    check_size(cfg, most)  # fits
    with pytest.raises(ValueError, match=f"at most {most} tokens"):
        check_size(cfg, most + 1)
    tok = CharTokenizer.train("ab")
    model = GPT(ModelConfig(d_vocab=2, n_ctx=2048, d_model=16, n_heads=16, n_layers=12, d_head=1))
    c = TestClient(create_app(model, tok), base_url="http://127.0.0.1")
    assert "more than a page can show" in error_of(c.post("/api/view", json={"text": "ab" * 1000}), 400)


def test_compare_endpoint(client, bundled):
    doc = client.post("/api/compare", json={"a": "我 昨天 吃了 苹果", "b": "我 投资了 苹果", "word": "苹果"}).json()
    validate(doc)
    assert doc == compare(*bundled, "我 昨天 吃了 苹果", "我 投资了 苹果", "苹果")  # one process
    cos = {s["label"]: s["cosine"] for s in doc["stages"]}
    assert cos["embed"] == pytest.approx(1.0, abs=1e-6)  # the same row of W_E in both sentences
    assert cos["L3 out"] < 0.99  # ...and different once attention has mixed in the context
    assert doc["a"]["tokens"][doc["a"]["pos"]] == "苹果" == doc["b"]["tokens"][doc["b"]["pos"]]


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"text": ""}, "empty"),
        ({"text": " ".join(["苹果"] * 200)}, "n_ctx"),  # more than n_ctx = 64 tokens
    ],
)
def test_view_refuses_bad_text_with_a_400(client, body, needle):
    assert needle in error_of(client.post("/api/view", json=body), 400)


@pytest.mark.parametrize(
    "path, kwargs",
    [
        ("/api/view", {"content": b"{not json", "headers": {"content-type": "application/json"}}),
        ("/api/view", {"json": {}}),
        ("/api/view", {"json": {"text": 3}}),
        ("/api/view", {"json": {"text": SENTENCE, "extra": 1}}),
        ("/api/view", {"json": ["text"]}),
        ("/api/view", {"json": {"text": "苹果 " * 3000}}),  # over MAX_CHARS: refused before tokenizing
        ("/api/explain", {"json": {"text": SENTENCE, "top": 0}}),
        ("/api/explain", {"json": {"text": SENTENCE, "lang": "fr"}}),
        (
            "/api/generate",
            {"content": b'{"text": "x", "temperature": NaN}', "headers": {"content-type": "application/json"}},
        ),
        ("/api/generate", {"json": {"text": SENTENCE, "top_p": 1.5}}),
        ("/api/generate", {"json": {"text": SENTENCE, "max_new_tokens": 10**9}}),
        ("/api/compare", {"json": {"a": "x"}}),
        ("/api/explain", {"json": {"text": SENTENCE, "layer": True, "head": 0}}),  # strict: no bool for an int
        ("/api/explain", {"json": {"text": SENTENCE, "layer": "1", "head": 0}}),
    ],
)
def test_malformed_requests_get_a_422(client, path, kwargs):
    error_of(client.post(path, **kwargs), 422)


def test_values_out_of_range_get_a_400(client):
    assert "layer" in error_of(client.post("/api/explain", json={"text": SENTENCE, "layer": 9, "head": 0}), 400)
    assert "token" in error_of(
        client.post("/api/explain", json={"text": SENTENCE, "layer": 0, "head": 0, "token": 99}), 400
    )
    assert "not in the sentence" in error_of(
        client.post("/api/compare", json={"a": "我", "b": "我 吃了", "word": "苹果"}), 400
    )


def test_unknown_routes_and_methods_are_json_errors(client):
    error_of(client.get("/api/nothing"), 404)
    error_of(client.get("/api/view"), 405)
    error_of(client.delete("/api/model"), 405)
    error_of(client.get("/docs"), 404)  # the interactive docs would load a CDN: switched off


@pytest.mark.parametrize(
    "path",
    [
        "/assets/../server.py",
        "/assets/..%2Fserver.py",
        "/assets/%2e%2e%2fserver.py",
        "/assets/index.html",
        "/assets/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "/assets/main.js%00.py",
        "/assets/",
        "/assets/MAIN.JS",
        "/../../etc/passwd",
        "/static/main.js",
        "/assets/main.js/..%2F..%2Fserver.py",
    ],
)
def test_nothing_but_the_assets_can_be_read(client, path):
    r = client.get(path)
    assert r.status_code in (404, 405), (path, r.status_code)
    assert "import" not in r.text and "root:" not in r.text


def test_the_page_and_its_assets_are_served_with_a_strict_policy(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    for name, kind in ASSETS.items():
        r = client.get(f"/assets/{name}")
        assert r.status_code == 200 and r.headers["content-type"] == kind and r.text == asset(name)


def test_the_page_loads_nothing_from_the_network():
    for name in ("index.html", *ASSETS):
        text = asset(name)
        urls = re.findall(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}""", text, flags=re.I)
        assert not [u for u in urls if "w3.org" not in u], (name, urls)  # the SVG namespace is a name, not a fetch


def test_host_header_is_checked(bundled):
    c = TestClient(create_app(*bundled), base_url="http://127.0.0.1:8000")  # checked by default
    assert c.get("/api/model").status_code == 200
    assert c.get("/api/model", headers={"host": "localhost:8000"}).status_code == 200
    assert "answers requests" in error_of(c.get("/api/model", headers={"host": "evil.example:8000"}), 400)
    assert c.get("/api/model", headers={"host": "[::1]:8000"}).status_code == 200
    assert allowed_hosts("0.0.0.0") is None and allowed_hosts("fe80::1") == {"fe80::1"}
    assert host_name("[fe80::1]:8000") == "fe80::1" and host_name("localhost") == "localhost"


def test_a_model_of_other_text_offers_what_it_writes():
    from qkv import GPT, CharTokenizer, ModelConfig
    from qkv.apps.web.model_doc import model_doc

    tok = CharTokenizer.train("xyz.")
    torch.manual_seed(0)
    doc = model_doc(GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=1)), tok)
    validate(doc)
    assert len(doc["examples"]) == 1 and set(doc["examples"][0]) <= set("xyz.") and doc["compare"] is None
    assert len(tok.encode(doc["examples"][0])) == 16  # the first token and 15 generated


def test_view_json_is_written_as_json_dumps_would(bundled):
    doc = view(*bundled, SENTENCE)
    assert json.loads(dumps(doc)) == doc
    assert dumps(doc) == json.dumps(doc, ensure_ascii=False).encode("utf-8")


def test_causal_matrices_travel_as_lower_triangles(bundled):
    doc = view(*bundled, SENTENCE)
    T = len(doc["tokens"])
    for name in ("dots", "pattern"):
        p = doc["arrays"][name]
        assert p["layout"] == "lower" and len(base64.b64decode(p["data"])) == 4 * 16 * T * (T + 1) // 2
    x = torch.randn(2, 3, 4, 4)
    np.testing.assert_array_equal(unpack(pack(x, lower=True)), np.tril(x.numpy()))


def test_connections_to_the_server_have_nagle_off():
    """asyncio sets TCP_NODELAY only when the socket says IPPROTO_TCP; without it, each keep-alive
    response stalled ~40 ms between headers and body (the browser's delayed ACK)."""
    import asyncio
    import socket

    from qkv.apps.web.listen import listening_socket

    async def main():
        seen = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listening_socket("127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        nodelay = await asyncio.wait_for(seen, 10)
        writer.close()
        server.close()
        return nodelay

    assert asyncio.run(main()) != 0


def test_compare_reads_each_sentence_alone_even_without_the_mask():
    """A batch pads the shorter sentence; a non-causal model would attend to the padding."""
    from qkv import GPT, ModelConfig, WordTokenizer
    from qkv.analysis.representations import vectors_at

    tok = WordTokenizer.train("a b c d e f")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2, causal=False)).eval()
    a, b = "a b c", "d e f a b c d e"
    doc = compare(model, tok, a, b, "c")
    for side in ("a", "b"):
        assert doc[side]["tokens"][doc[side]["pos"]] == "c"
    # compare reads each sentence alone too, with these very calls: the same floats, hence abs=1e-12
    alone = [vectors_at(model, [tok.encode(t)], [doc[s]["pos"]]) for s, t in (("a", a), ("b", b))]
    for stage in doc["stages"]:
        x, y = alone[0][stage["name"]][0], alone[1][stage["name"]][0]
        assert stage["cosine"] == pytest.approx(float(x @ y / np.linalg.norm(x) / np.linalg.norm(y)), abs=1e-12)


def test_chinese_typed_without_spaces_is_cut_into_the_models_words(client, bundled):
    """The bundled model reads space-separated words; a sentence typed the usual Chinese way is cut
    into the words it knows (the most probable split), and shown that way."""
    model, tokenizer = bundled
    doc = client.post("/api/view", json={"text": "我投资了苹果，"}).json()
    assert doc["text"] == SENTENCE and doc["ids"] == tokenizer.encode(SENTENCE)
    assert client.post("/api/generate", json={"text": "我投资了苹果，", "temperature": 0}).json()["prompt"] == SENTENCE
    cmp = client.post("/api/compare", json={"a": "我昨天吃了苹果", "b": "我投资了苹果", "word": "苹果"}).json()
    assert cmp == compare(model, tokenizer, "我 昨天 吃了 苹果", "我 投资了 苹果", "苹果")
    unknown = client.post("/api/view", json={"text": "我投资了榴莲"}).json().get("unknown")  # read, and named
    assert unknown is None or "榴莲" in [u["text"] for u in unknown]  # (None: a model without a fallback)


def test_respace_cuts_longest_words_first():
    from qkv import WordTokenizer

    tok = WordTokenizer.train("我 投资 投资了 了 苹果 。")
    assert tok.respace("我投资了苹果。") == "我 投资了 苹果 。"
    assert tok.respace("我投资了香蕉") is None  # 香 is no word of it
    assert WordTokenizer.train("我投资").respace("我投资") is None  # no space token: nothing to write between words


def test_concurrent_requests_each_get_their_own_trace(client, bundled):
    """The tap recorder is process-wide; the server lets one forward pass run at a time."""
    from concurrent.futures import ThreadPoolExecutor

    texts = ["我 投资了 苹果 ，", "我 昨天 吃了 苹果 ，", "i ate apple ,", "i invested in apple ,"] * 3
    with ThreadPoolExecutor(6) as pool:
        docs = list(pool.map(lambda t: client.post("/api/view", json={"text": t}).json(), texts))
    for text, doc in zip(texts, docs, strict=True):
        assert doc == view(*bundled, text, "bundled")


@pytest.mark.parametrize(
    "body, content_type, said",
    [
        (b'{"text": ', "application/json", "the body is not valid JSON (at character 9: Expecting value)"),
        (b"", "application/json", "the request has no body: send a JSON object"),
        (b"[1, 2]", "application/json", "the body must be a JSON object (with Content-Type: application/json)"),
        (b"hello", "text/plain", "the body must be a JSON object (with Content-Type: application/json)"),
        (b"{}", "application/json", "give either text or ids"),
        (b'{"text": 5}', "application/json", "text: Input should be a valid string"),
    ],
)
def test_a_malformed_body_is_said_of_the_body(client, body, content_type, said):
    r = client.post("/api/view", content=body, headers={"Content-Type": content_type})
    assert r.status_code == 422 and r.json() == {"error": said, "status": 422}


@pytest.mark.parametrize("lang, words", [("en", "another program is using that port"), ("zh", "已经被别的程序占用了")])
def test_a_taken_port_is_said_in_the_users_language_with_what_to_do(lang, words):
    import socket

    from qkv.apps.web.listen import listening_socket
    from qkv.core.io.refusal import Refusal
    from qkv.presentation.i18n import say_error

    with socket.socket() as held:  # without SO_REUSEADDR's help: a socket listening on the port holds it
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(Refusal) as caught:
            listening_socket("127.0.0.1", port)
    line = say_error(caught.value, lang)
    assert words in line and f"--port {port + 1}" in line and "\n" not in line.strip()

"""Every refusal the explorer's API answers, and the CLI's errors, come from the zh/en message catalogue.

The walk: every route of create_app (read from the app itself, so that a new route without refusals
here fails) gets at least one request for each kind of refusal it has, sent without a language
(English, word for word what the server said before the catalogue) and with Accept-Language: zh
(Chinese, from the catalogue: the error object the answer was said from carries a key, and so does
every error and phrase inside it). The model is a tiny GPT with a word tokenizer that has no
fallback, so that a word it does not know is refused (the bundled model reads any text).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, ModelConfig, WordTokenizer

S = "我 吃了 苹果"
UNKNOWN = "我 龘龘"  # 龘 is in no vocabulary here
J = {"content-type": "application/json"}
ZH = {"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"}
HAN = re.compile("[\u4e00-\u9fff]")


def raw(body: bytes) -> dict:
    return {"content": body, "headers": J}


def post(url: str, body=None, **kwargs) -> tuple:
    return ("post", url, {"json": body, **kwargs} if body is not None else kwargs)


VALID = {  # a body each POST route accepts, to be spoiled one way at a time
    "/api/view": {"text": S},
    "/api/explain": {"text": S},
    "/api/generate": {"text": S},
    "/api/compare": {"a": S, "b": S, "word": "苹果"},
    "/api/origin": {"text": S, "layer": 0, "head": 0, "token": 0},
    "/api/ablate": {"text": S, "heads": [[0, 0]]},
    "/api/side": {"a": S, "b": S},
    "/api/vocab": {"query": "我"},
    "/api/transform": {"layer": 0, "head": 0},
    "/api/lens": {"text": S},
    "/api/attribution": {"text": S},
    "/api/patch": {"clean": S, "corrupt": "他 吃了 苹果", "answer": "苹果", "wrong": "我"},
    "/api/export": {"text": S},
    "/api/tour/view": {"text": S, "positions": False},
    "/api/tour/order": {"a": S, "b": S},
    "/api/tour/translate": {"text": S},
}
# what every POST route is refused for (besides its own refusals, OWN)
COMMON = {
    "wrong method": lambda url: (
        "put" if url in ("/api/vocab", "/api/patch") else "get",
        url,
        {},
    ),  # 405 (a GET exists)
    "bad json": lambda url: post(url, **raw(b'{"text": ')),
    "not an object": lambda url: post(url, ["text"]),
    "unknown field": lambda url: post(url, {**VALID[url], "nonsense": 1}),
    "too large": lambda url: post(url, **raw(b'{"text": "' + b"x" * 300_000 + b'"}')),
}
OWN = {
    "/api/view": {
        "no body": post("/api/view"),
        "neither text nor ids": post("/api/view", {}),
        "text not a string": post("/api/view", {"text": 3}),
        "text too long": post("/api/view", {"text": "苹果 " * 2001}),
        "too many ids": post("/api/view", {"ids": [0] * 4001}),
        "id not an integer": post("/api/view", {"ids": [0, "1"]}),
        "unknown word": post("/api/view", {"text": UNKNOWN}),
        "empty text": post("/api/view", {"text": ""}),
        "too many tokens": post("/api/view", {"text": "我 " * 20}),
        "id out of range": post("/api/view", {"ids": [0, 10**6]}),
    },
    "/api/explain": {
        "bad layer": post("/api/explain", {"text": S, "layer": 9, "head": 0}),
        "bad head": post("/api/explain", {"text": S, "layer": 0, "head": 5}),
        "bad position": post("/api/explain", {"text": S, "layer": 0, "head": 0, "token": 99}),
        "layer not an integer": post("/api/explain", {"text": S, "layer": "1", "head": 0}),
        "top too small": post("/api/explain", {"text": S, "top": 0}),
        "unknown lang": post("/api/explain", {"text": S, "lang": "fr"}),
        "unknown word": post("/api/explain", {"text": UNKNOWN}),
        "missing text": post("/api/explain", {"layer": 0}),
    },
    "/api/generate": {
        "temperature NaN": post("/api/generate", **raw(b'{"text": "x", "temperature": NaN}')),
        "top_p too large": post("/api/generate", {"text": S, "top_p": 1.5}),
        "too many new tokens": post("/api/generate", {"text": S, "max_new_tokens": 10**9}),
        "negative seed": post("/api/generate", {"text": S, "seed": -1}),
        "text fills n_ctx": post("/api/generate", {"text": "我 " * 8}),  # n_ctx = 16 tokens
        "unknown word": post("/api/generate", {"text": UNKNOWN}),
    },
    "/api/compare": {
        "missing field": post("/api/compare", {"a": S}),
        "word not in sentence": post("/api/compare", {"a": "我", "b": S, "word": "苹果"}),
        "unknown word": post("/api/compare", {"a": UNKNOWN, "b": S, "word": "我"}),
    },
    "/api/origin": {
        "neither text nor ids": post("/api/origin", {"layer": 0, "head": 0, "token": 0}),
        "bad layer": post("/api/origin", {"text": S, "layer": 5, "head": 0, "token": 0}),
        "bad position": post("/api/origin", {"text": S, "layer": 0, "head": 0, "token": -9}),
        "too many ids": post("/api/origin", {"ids": [0] * 4097, "layer": 0, "head": 0, "token": 0}),
        "unknown word": post("/api/origin", {"text": UNKNOWN, "layer": 0, "head": 0, "token": 0}),
    },
    "/api/ablate": {
        "pair too short": post("/api/ablate", {"text": S, "heads": [[0]]}),
        "heads not a list": post("/api/ablate", {"text": S, "heads": "all"}),
        "too many pairs": post("/api/ablate", {"text": S, "heads": [[0, 0]] * 5}),
        "bad layer": post("/api/ablate", {"text": S, "heads": [[7, 0]]}),
        "unknown word": post("/api/ablate", {"text": UNKNOWN, "heads": [[0, 0]]}),
    },
    "/api/side": {
        "top too small": post("/api/side", {"a": S, "b": S, "top": 0}),
        "unknown word": post("/api/side", {"a": S, "b": UNKNOWN}),
    },
    "/api/vocab": {
        "unknown kind": post("/api/vocab", {"kind": "noun"}),
        "query too long": post("/api/vocab", {"query": "x" * 201}),
    },
    "/api/transform": {
        "missing head": post("/api/transform", {"layer": 0}),
        "bad layer": post("/api/transform", {"layer": 2, "head": 0}),
        "bad head": post("/api/transform", {"layer": 0, "head": -3}),
    },
    "/api/lens": {
        "neither text nor ids": post("/api/lens", {"token": 0}),
        "bad position": post("/api/lens", {"text": S, "token": 9}),
        "top too small": post("/api/lens", {"text": S, "top": 0}),
        "unknown word": post("/api/lens", {"text": UNKNOWN}),
    },
    "/api/attribution": {
        "target of two tokens": post("/api/attribution", {"text": S, "target": "吃了 苹果"}),
        "unknown target": post("/api/attribution", {"text": S, "target": "龘"}),
        "target out of range": post("/api/attribution", {"text": S, "target": 99}),
        "bad position": post("/api/attribution", {"text": S, "token": -9}),
    },
    "/api/patch": {
        "unequal lengths": post("/api/patch", {"clean": S, "corrupt": "他 吃了", "answer": "苹果", "wrong": "我"}),
        "answer of two tokens": post("/api/patch", {"clean": S, "corrupt": S, "answer": "吃了 苹果", "wrong": "我"}),
        "unknown wrong word": post("/api/patch", {"clean": S, "corrupt": S, "answer": "苹果", "wrong": "龘"}),
        "unknown site": post("/api/patch", {"clean": S, "corrupt": S, "answer": "苹果", "wrong": "我", "site": "q"}),
        "unknown word": post("/api/patch", {"clean": UNKNOWN, "corrupt": S, "answer": "苹果", "wrong": "我"}),
    },
    "/api/export": {
        "bad layer": post("/api/export", {"text": S, "layer": 5}),
        "bad position": post("/api/export", {"text": S, "token": -9}),
        "unknown panel": post("/api/export", {"text": S, "panel": "nowhere"}),
        "part of a GPT": post("/api/export", {"text": S, "part": "cross"}),
        "too many inputs": post(
            "/api/export",
            {"text": S, "inputs": {p: {str(k): "x" for k in range(6)} for p in ("side", "patch", "vocab")}},
        ),
        "unknown word": post("/api/export", {"text": UNKNOWN}),
    },
    "/api/tour/view": {
        "positions not a bool": post("/api/tour/view", {"text": S, "positions": "no"}),
        "empty text": post("/api/tour/view", {"text": "", "positions": False}),
        "unknown word": post("/api/tour/view", {"text": UNKNOWN, "positions": False}),
    },
    "/api/tour/order": {
        "missing b": post("/api/tour/order", {"a": S}),
        "unknown word": post("/api/tour/order", {"a": S, "b": UNKNOWN}),
    },
    "/api/tour/translate": {"missing text": post("/api/tour/translate", {})},
}
ROUTE_REFUSALS = {  # (method, path of the route) -> {kind: (method, url, kwargs)}
    **{("POST", path): {**{k: make(path) for k, make in COMMON.items()}, **own} for path, own in OWN.items()},
    ("GET", "/"): {"post": ("post", "/", {}), "wrong host": ("get", "/", {"headers": {"host": "evil.example"}})},
    ("GET", "/assets/{name}"): {"no such asset": ("get", "/assets/secret.txt", {}), "post": ("post", "/assets/x", {})},
    ("GET", "/api/model"): {
        "delete": ("delete", "/api/model", {}),
        "body too large": post("/api/model", content=b"x" * 5000),
    },
    ("GET", "/api/heads"): {"post": ("post", "/api/heads", {})},
    ("GET", "/api/patch"): {"delete": ("delete", "/api/patch", {})},
    ("GET", "/api/vocab"): {
        "limit too small": ("get", "/api/vocab?limit=0", {}),
        "limit not a number": ("get", "/api/vocab?limit=ten", {}),
        "unknown match": ("get", "/api/vocab?match=suffix", {}),
        "put": ("put", "/api/vocab", {}),
    },
    ("GET", "/openapi.json"): {"post": ("post", "/openapi.json", {})},
    (None, "no such route"): {"unknown route": ("get", "/api/nothing", {})},
}

# what each request was answered before the catalogue existed (the server of commit HEAD at this
# change, on the same tiny model): the English must stay word for word
ENGLISH = {
    (("POST", "/api/view"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/view"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/view"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/view"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/view"), "too large"): (413, "the request body is larger than the 69,632 bytes this endpoint takes"),
    (("POST", "/api/view"), "no body"): (422, "the request has no body: send a JSON object"),
    (("POST", "/api/view"), "neither text nor ids"): (422, "give either text or ids"),
    (("POST", "/api/view"), "text not a string"): (422, "text: Input should be a valid string"),
    (("POST", "/api/view"), "text too long"): (422, "text: String should have at most 4000 characters"),
    (("POST", "/api/view"), "too many ids"): (
        422,
        "ids: List should have at most 4000 items after validation, not 4001",
    ),
    (("POST", "/api/view"), "id not an integer"): (422, "ids.1: Input should be a valid integer"),
    (("POST", "/api/view"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/view"), "empty text"): (400, "the text is empty: type at least one token"),
    (("POST", "/api/view"), "too many tokens"): (400, "the text has 39 tokens; this model reads at most n_ctx = 16"),
    (("POST", "/api/view"), "id out of range"): (400, "token id 1000000 is out of range: the vocabulary has ids 0..7"),
    (("POST", "/api/explain"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/explain"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/explain"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/explain"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/explain"), "too large"): (
        413,
        "the request body is larger than the 69,632 bytes this endpoint takes",
    ),
    (("POST", "/api/explain"), "bad layer"): (
        400,
        "layer 9 is out of range: the model has 2 layers (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/explain"), "bad head"): (
        400,
        "head 5 is out of range: each layer has 2 heads (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/explain"), "bad position"): (
        400,
        "token 99 is out of range: the text has 5 tokens (use 0..4 or -5..-1)",
    ),
    (("POST", "/api/explain"), "layer not an integer"): (422, "layer: Input should be a valid integer"),
    (("POST", "/api/explain"), "top too small"): (422, "top: Input should be greater than or equal to 1"),
    (("POST", "/api/explain"), "unknown lang"): (422, "lang: String should match pattern '^(zh|en)$'"),
    (("POST", "/api/explain"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/explain"), "missing text"): (422, "text: Field required"),
    (("POST", "/api/generate"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/generate"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/generate"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/generate"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/generate"), "too large"): (
        413,
        "the request body is larger than the 69,632 bytes this endpoint takes",
    ),
    (("POST", "/api/generate"), "temperature NaN"): (422, "temperature: Input should be a finite number"),
    (("POST", "/api/generate"), "top_p too large"): (422, "top_p: Input should be less than or equal to 1"),
    (("POST", "/api/generate"), "too many new tokens"): (
        422,
        "max_new_tokens: Input should be less than or equal to 256",
    ),
    (("POST", "/api/generate"), "negative seed"): (422, "seed: Input should be greater than or equal to 0"),
    (("POST", "/api/generate"), "text fills n_ctx"): (
        400,
        "the text already fills n_ctx = 16 tokens: shorten it to generate more",
    ),
    (("POST", "/api/generate"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/compare"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/compare"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/compare"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/compare"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/compare"), "too large"): (
        413,
        "the request body is larger than the 200,704 bytes this endpoint takes",
    ),
    (("POST", "/api/compare"), "missing field"): (422, "b: Field required"),
    (("POST", "/api/compare"), "word not in sentence"): (400, "the word '苹果' is not in the sentence '我'"),
    (("POST", "/api/compare"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/origin"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/origin"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/origin"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/origin"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/origin"), "too large"): (
        413,
        "the request body is larger than the 69,632 bytes this endpoint takes",
    ),
    (("POST", "/api/origin"), "neither text nor ids"): (422, "give either text or ids"),
    (("POST", "/api/origin"), "bad layer"): (
        400,
        "layer 5 is out of range: the model has 2 layers (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/origin"), "bad position"): (
        400,
        "token -9 is out of range: the text has 5 tokens (use 0..4 or -5..-1)",
    ),
    (("POST", "/api/origin"), "too many ids"): (
        422,
        "ids: List should have at most 4096 items after validation, not 4097",
    ),
    (("POST", "/api/origin"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/ablate"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/ablate"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/ablate"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/ablate"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/ablate"), "too large"): (
        413,
        "the request body is larger than the 135,168 bytes this endpoint takes",
    ),
    (("POST", "/api/ablate"), "pair too short"): (
        422,
        "heads.0: List should have at least 2 items after validation, not 1",
    ),
    (("POST", "/api/ablate"), "heads not a list"): (422, "heads: Input should be a valid list"),
    (("POST", "/api/ablate"), "too many pairs"): (400, "5 pairs given; the model has 4 heads: list each head once"),
    (("POST", "/api/ablate"), "bad layer"): (
        400,
        "layer 7 is out of range: the model has 2 layers (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/ablate"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/side"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/side"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/side"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/side"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/side"), "too large"): (
        413,
        "the request body is larger than the 135,168 bytes this endpoint takes",
    ),
    (("POST", "/api/side"), "top too small"): (422, "top: Input should be greater than or equal to 1"),
    (("POST", "/api/side"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/vocab"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/vocab"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/vocab"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/vocab"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/vocab"), "too large"): (413, "the request body is larger than the 4,096 bytes this endpoint takes"),
    (("POST", "/api/vocab"), "unknown kind"): (
        422,
        "kind: Input should be 'word', 'char', 'byte', 'piece' or 'special'",
    ),
    (("POST", "/api/vocab"), "query too long"): (422, "query: String should have at most 200 characters"),
    (("POST", "/api/transform"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/transform"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/transform"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/transform"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/transform"), "too large"): (
        413,
        "the request body is larger than the 4,096 bytes this endpoint takes",
    ),
    (("POST", "/api/transform"), "missing head"): (422, "head: Field required"),
    (("POST", "/api/transform"), "bad layer"): (
        400,
        "layer 2 is out of range: the model has 2 layers (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/transform"), "bad head"): (
        400,
        "head -3 is out of range: each layer has 2 heads (use 0..1 or -2..-1)",
    ),
    (("GET", "/"), "post"): (405, "Method Not Allowed"),
    (("GET", "/"), "wrong host"): (400, "this server answers requests to 127.0.0.1, ::1, localhost only"),
    (("GET", "/assets/{name}"), "no such asset"): (404, "no asset 'secret.txt'"),
    (("GET", "/assets/{name}"), "post"): (405, "Method Not Allowed"),
    (("GET", "/api/model"), "delete"): (405, "Method Not Allowed"),
    (("GET", "/api/model"), "body too large"): (
        413,
        "the request body is larger than the 4,096 bytes this endpoint takes",
    ),
    (("GET", "/api/heads"), "post"): (405, "Method Not Allowed"),
    (("GET", "/api/vocab"), "limit too small"): (422, "query.limit: Input should be greater than or equal to 1"),
    (("GET", "/api/vocab"), "limit not a number"): (
        422,
        "query.limit: Input should be a valid integer, unable to parse string as an integer",
    ),
    (("GET", "/api/vocab"), "unknown match"): (422, "query.match: Input should be 'prefix' or 'substring'"),
    (("GET", "/api/vocab"), "put"): (405, "Method Not Allowed"),
    (("GET", "/openapi.json"), "post"): (405, "Method Not Allowed"),
    ((None, "no such route"), "unknown route"): (404, "Not Found"),
    (("POST", "/api/lens"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/lens"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/lens"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/lens"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/lens"), "too large"): (413, "the request body is larger than the 69,632 bytes this endpoint takes"),
    (("POST", "/api/lens"), "neither text nor ids"): (422, "give either text or ids"),
    (("POST", "/api/lens"), "bad position"): (
        400,
        "token 9 is out of range: the text has 5 tokens (use 0..4 or -5..-1)",
    ),
    (("POST", "/api/lens"), "top too small"): (422, "top: Input should be greater than or equal to 1"),
    (("POST", "/api/lens"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/attribution"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/attribution"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/attribution"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/attribution"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/attribution"), "too large"): (
        413,
        "the request body is larger than the 135,168 bytes this endpoint takes",
    ),
    (("POST", "/api/attribution"), "target of two tokens"): (
        400,
        "'吃了 苹果' is 3 tokens for this tokenizer ('吃了' '␣' '苹果'); a logit belongs to one token: give one id",
    ),
    (("POST", "/api/attribution"), "unknown target"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘' (nearest known words: none shares a character)",  # noqa: E501
    ),
    (("POST", "/api/attribution"), "target out of range"): (
        400,
        "token id 99 is out of range: the vocabulary has ids 0..7",
    ),
    (("POST", "/api/attribution"), "bad position"): (
        400,
        "token -9 is out of range: the text has 5 tokens (use 0..4 or -5..-1)",
    ),
    (("POST", "/api/patch"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/patch"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/patch"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/patch"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/patch"), "too large"): (
        413,
        "the request body is larger than the 266,240 bytes this endpoint takes",
    ),
    (("POST", "/api/patch"), "unequal lengths"): (
        400,
        "the clean text has 5 tokens (我|␣|吃了|␣|苹果) and the corrupted one 3 (他|␣|吃了): patching puts a piece of one run in the place of the same piece of the other, so both need the same number of tokens",  # noqa: E501
    ),
    (("POST", "/api/patch"), "answer of two tokens"): (
        400,
        "'吃了 苹果' is 3 tokens here ('吃了' '␣' '苹果'): the answer and the wrong word must each be one token",
    ),
    (("POST", "/api/patch"), "unknown wrong word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/patch"), "unknown site"): (422, "site: Input should be 'resid_pre', 'attn_out', 'mlp_out' or 'z'"),
    (("POST", "/api/patch"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("GET", "/api/patch"), "delete"): (405, "Method Not Allowed"),
    (("POST", "/api/export"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/export"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/export"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/export"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/export"), "too large"): (
        413,
        "the request body is larger than the 200,704 bytes this endpoint takes",
    ),
    (("POST", "/api/export"), "bad layer"): (
        400,
        "layer 5 is out of range: the model has 2 layers (use 0..1 or -2..-1)",
    ),
    (("POST", "/api/export"), "bad position"): (
        400,
        "token -9 is out of range: the text has 5 tokens (use 0..4 or -5..-1)",
    ),
    (("POST", "/api/export"), "unknown panel"): (
        400,
        "panel must be one of compare, side, lens, origin, attribution, patch, ablate, vocab, transform, got 'nowhere'",
    ),
    (("POST", "/api/export"), "part of a GPT"): (
        400,
        "part names one of a translation model's attentions; this model has one kind: leave it out (got 'cross')",
    ),
    (("POST", "/api/export"), "too many inputs"): (
        400,
        "a panel's inputs may hold at most 16 values in all, of at most 400 characters each; got 18",
    ),
    (("POST", "/api/export"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/tour/view"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/tour/view"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/tour/view"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/tour/view"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/tour/view"), "too large"): (
        413,
        "the request body is larger than the 69,632 bytes this endpoint takes",
    ),
    (("POST", "/api/tour/view"), "positions not a bool"): (422, "positions: Input should be a valid boolean"),
    (("POST", "/api/tour/view"), "empty text"): (400, "the text is empty: type at least one token"),
    (("POST", "/api/tour/view"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/tour/order"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/tour/order"), "bad json"): (422, "the body is not valid JSON (at character 9: Expecting value)"),
    (("POST", "/api/tour/order"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/tour/order"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/tour/order"), "too large"): (
        413,
        "the request body is larger than the 135,168 bytes this endpoint takes",
    ),
    (("POST", "/api/tour/order"), "missing b"): (422, "b: Field required"),
    (("POST", "/api/tour/order"), "unknown word"): (
        400,
        "1 word is not in the tokenizer's vocabulary: '龘龘' (nearest known words: none shares a character)",
    ),
    (("POST", "/api/tour/translate"), "wrong method"): (405, "Method Not Allowed"),
    (("POST", "/api/tour/translate"), "bad json"): (
        422,
        "the body is not valid JSON (at character 9: Expecting value)",
    ),
    (("POST", "/api/tour/translate"), "not an object"): (
        422,
        "the body must be a JSON object (with Content-Type: application/json)",
    ),
    (("POST", "/api/tour/translate"), "unknown field"): (422, "nonsense: Extra inputs are not permitted"),
    (("POST", "/api/tour/translate"), "too large"): (
        413,
        "the request body is larger than the 69,632 bytes this endpoint takes",
    ),
    (("POST", "/api/tour/translate"), "missing text"): (422, "text: Field required"),
}


@pytest.fixture(scope="module")
def tiny():
    tok = WordTokenizer.train("我 吃了 苹果 ， 他 投资了 苹果 。")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2))
    return model.eval(), tok


@pytest.fixture(scope="module")
def app(tiny):
    from qkv.apps.web.server import create_app

    return create_app(*tiny, "tiny")


@pytest.fixture
def client(app):
    return TestClient(app, base_url="http://127.0.0.1:8000")


@pytest.fixture
def said(monkeypatch):
    """The errors the server's answers were said from, with the language each was said in."""
    from qkv.apps.web import inputs as requests

    seen = []

    def spy(error, lang):
        seen.append((error, lang))
        return real(error, lang)

    real = requests.say_error
    monkeypatch.setattr(requests, "say_error", spy)
    return seen


def catalogued(item) -> bool:
    """Whether `item` (a refusal or phrase) has a catalogue key, and so does every error and phrase in it."""
    from qkv.core.io.refusal import Phrase, Refusal

    def inside(value) -> bool:
        if isinstance(value, (Refusal, Phrase)):
            return catalogued(value)
        if isinstance(value, BaseException):
            return False  # an error without a key: said in English in every language
        if isinstance(value, list):
            return all(inside(v) for v in value)
        return True

    return bool(getattr(item, "key", None)) and all(inside(v) for v in item.fields.values())


def answer(client, request, headers=None) -> tuple[int, str]:
    method, url, kwargs = request
    kwargs = {**kwargs, "headers": {**kwargs.get("headers", {}), **(headers or {})}}
    response = getattr(client, method)(url, **kwargs)
    body = response.json()
    assert body["status"] == response.status_code and isinstance(body["error"], str), body
    return response.status_code, body["error"]


def cases():
    return [(route, kind, request) for route, kinds in ROUTE_REFUSALS.items() for kind, request in kinds.items()]


def test_every_route_of_the_app_has_its_refusals_walked(app):
    routes = {(m, r.path) for r in app.routes for m in (r.methods or ()) if m != "HEAD"}
    walked = {route for route in ROUTE_REFUSALS if route[0] is not None}
    assert routes == walked, f"routes without refusals here: {routes - walked}; gone: {walked - routes}"
    assert set(ENGLISH) == {(route, kind) for route, kind, _ in cases()}, "every case has its English"


@pytest.mark.parametrize("route, kind, request_", cases(), ids=lambda v: v if isinstance(v, str) else None)
def test_each_refusal_is_said_in_english_as_before_and_in_chinese_from_the_catalogue(
    client, said, route, kind, request_
):
    status, en = answer(client, request_)
    assert 400 <= status < 500, (status, en)
    assert (status, en) == ENGLISH[(route, kind)]
    said.clear()
    zh_status, zh = answer(client, request_, ZH)
    assert zh_status == status
    assert zh != en and HAN.search(zh), zh
    assert "\n" not in en and "\n" not in zh
    assert said and all(lang == "zh" for _, lang in said)
    error = said[-1][0]
    assert catalogued(error), f"{kind}: {error!r} is said in English in Chinese too"


def test_the_language_is_the_first_one_qkv_speaks(client):
    from qkv.apps.web.inputs import lang_of

    assert lang_of("") == lang_of("fr-FR,de;q=0.8") == lang_of("zh;q=0, en") == "en"
    assert lang_of("zh-CN,zh;q=0.9,en;q=0.8") == lang_of("fr, zh-TW;q=0.5") == lang_of("en;q=0.3, zh") == "zh"
    request = post("/api/view", {"text": ""})
    assert answer(client, request, {"accept-language": "en-GB,en;q=0.9"})[1] == answer(client, request)[1]
    assert HAN.search(answer(client, request, {"accept-language": "zh-Hans"})[1])


def test_a_bug_is_a_500_in_both_languages(tiny, monkeypatch):
    from qkv.apps.web import server

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(server, "compare", broken)
    client = TestClient(server.create_app(*tiny, "tiny"), base_url="http://127.0.0.1", raise_server_exceptions=False)
    request = post("/api/compare", {"a": S, "b": S, "word": "苹果"})
    assert answer(client, request) == (500, "internal error: RuntimeError: boom")
    status, zh = answer(client, request, ZH)
    assert status == 500 and HAN.search(zh) and zh.endswith("RuntimeError: boom")  # what broke, as Python says it


def test_the_pages_requests_say_its_language():
    """static/api.js sends the page's language with every request (GET and POST)."""
    from qkv.apps.web.server import asset

    js = asset("api.js")
    assert '"Accept-Language"' in js and "S.lang" in js
    assert (
        "{ headers }" in js and "...headers" in js
    )  # the same headers, the language among them, on the GET and on the POST


# ------------------------------------------------------------------ a translation model's own refusals


@pytest.fixture(scope="module")
def translator_client():
    from qkv import load
    from qkv.apps.web.server import create_app
    from qkv.core.hub.bundled import default_translate_ckpt

    return TestClient(create_app(*load(default_translate_ckpt()), "bundled-translate"), base_url="http://127.0.0.1")


@pytest.mark.parametrize(
    "request_, english",
    [
        (post("/api/view", {"ids": [1, 2]}), "a translation model reads a source text, not token ids"),
        (post("/api/compare", {"a": "我", "b": "我", "word": "我"}), "a translation model is not compared across"),
        (post("/api/side", {"a": "我", "b": "我"}), "a translation model is shown across its two sentences"),
        (post("/api/generate", {"text": "我"}), "this model translates: it writes a target sentence"),
        (post("/api/transform", {"layer": 0, "head": 0}), "the transform panel reads a GPT's or an encoder's"),
        (post("/api/origin", {"text": "我", "layer": 0, "head": 0, "token": 0}), "the origin of q, k and v is shown"),
        (post("/api/ablate", {"text": "我", "heads": [[0, 0]]}), "switching heads off is shown on the next-token"),
        (
            post("/api/explain", {"text": "我", "layer": 0, "head": 0, "token": 99}),
            "token 99 is out of range: the transl",
        ),
    ],
)
def test_what_a_translation_model_refuses_is_said_in_both_languages(translator_client, said, request_, english):
    status, en = answer(translator_client, request_)
    assert status == 400 and en.startswith(english), en
    said.clear()
    status, zh = answer(translator_client, request_, ZH)
    assert status == 400 and HAN.search(zh) and zh != en and catalogued(said[-1][0]), zh


# ------------------------------------------------------------------ the command line


def cli_error(capsys, argv) -> str:
    from qkv.apps.cli import main

    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc != 0 and "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    "argv, english",
    [
        (["explain", "我 吃了", "--layer", "99", "--head", "0"], "qkv: error: layer 99 is out of range: the model has"),
        (["explain", "我 吃了", "--token", "-999"], "qkv: error: token -999 is out of range: the text has"),
        (["explain", "我", "--ckpt", "/nonexistent/qkv-run"], "qkv: error: checkpoint directory /nonexistent/qkv-run"),
        (["attend", "--q", "√x,0", "--k", "1,0", "--v", "1"], "qkv: error: q: cannot read '√x' as a number: unknown"),
        (["attend", "--q", "1,2,3", "--k", "1,0; 0,1", "--v", "1; 2"], "qkv: error: K has 2 columns but q has 3"),
    ],
)
def test_the_cli_says_its_errors_in_chinese_with_lang_zh(capsys, argv, english):
    en = cli_error(capsys, argv)
    assert en.startswith(english), en
    zh = cli_error(capsys, [*argv, "--lang", "zh"])
    assert zh.startswith("qkv: 错误：") and HAN.search(zh.removeprefix("qkv: 错误：")), zh
    assert "error" not in zh and zh != en
    assert cli_error(capsys, [*argv, "--lang", "en"]) == en


def test_a_position_in_chinese_is_written_as_a_position():
    """Positions count from 0: Chinese says 位置 N (and 层 N, 头 N), never 第 N 个."""
    from qkv.core.see.indices import check_token
    from qkv.presentation.i18n import catalogue, say_error

    with pytest.raises(ValueError) as info:
        check_token(7, 5)
    assert str(info.value) == "token 7 is out of range: the text has 5 tokens (use 0..4 or -5..-1)"
    assert say_error(info.value, "zh").startswith("位置 7 超出范围")
    for area in ("errors", "requests"):
        for key, text in catalogue("zh", area).items():
            assert not re.search(r"第 ?(\d+|\{\w+\}) ?个", text), f"{area}.{key}: {text}"


# ------------------------------------------------------------------ every refusal the source raises is in the catalogue

SRC = Path(__file__).resolve().parents[1] / "src" / "qkv"


def refusal_keys(source: str) -> list[tuple[str, frozenset | None, int]]:
    """(key, keyword names or None when **fields are passed, line) of each literal key a source raises or
    phrases: AnyRefusal.of("area.name", ...), phrase("area.name", ...), either branch of an if-else."""
    found = []
    for call in ast.walk(ast.parse(source)):
        if not (isinstance(call, ast.Call) and call.args):
            continue
        func = call.func
        if not (
            (isinstance(func, ast.Attribute) and func.attr == "of")
            or (isinstance(func, ast.Name) and func.id == "phrase")
        ):
            continue
        arg = call.args[0]
        keys = [arg] if isinstance(arg, ast.Constant) else [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else []
        names = {k.arg for k in call.keywords}
        for key in keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and "." in key.value:
                found.append((key.value, None if None in names else frozenset(names), call.lineno))
    return found


def test_every_refusal_key_the_source_raises_exists_with_its_fields():
    from qkv.presentation.i18n import catalogue

    problems, seen = [], set()
    for path in sorted(SRC.rglob("*.py")):
        for key, given, line in refusal_keys(path.read_text(encoding="utf-8")):
            seen.add(key)
            area, _, name = key.rpartition(".")
            for lang in ("en", "zh"):
                text = catalogue(lang, area).get(name)
                if text is None:
                    problems.append(f"{path.relative_to(SRC)}:{line}: no {key} in {lang}")
                elif given is not None and set(given) != {f for _, f, _, _ in string.Formatter().parse(text) if f}:
                    problems.append(f"{path.relative_to(SRC)}:{line}: {key} is given {sorted(given)} in {lang}")
    assert problems == []
    assert {"errors.index_range", "errors.unknown_one", "requests.too_large", "errors.number_because"} <= seen


def test_the_names_said_inside_sentences_are_in_the_catalogue():
    """The keys built from a name (a family, a stack, an index, a tokenizer's noun) exist, and a
    family's English is the title messages always gave it."""
    from qkv.core.io.refusal import family_title
    from qkv.core.spec.family import FAMILIES
    from qkv.core.text.tokenizers import BPETokenizer, CharTokenizer, WordTokenizer

    for family in FAMILIES.values():
        assert str(family_title(family)) == family.title
        assert HAN.search(say_error_of(family_title(family), "zh"))
        for stack in family.stacks:
            if stack.name:
                assert say_error_of(phrase_of(f"errors.stack_{stack.name}"), "zh")
    for what in ("layer", "head", "token"):
        assert say_error_of(phrase_of(f"errors.what_{what}"), "zh")
    for tok in (BPETokenizer, CharTokenizer, WordTokenizer):
        noun = getattr(tok, "noun", "token")
        for n in (noun, noun + "s"):
            assert say_error_of(phrase_of(f"errors.noun_{n}"), "zh")


def phrase_of(key):
    from qkv.core.io.refusal import phrase

    return phrase(key)


def say_error_of(item, lang) -> str:
    """A phrase said alone, as a sentence would say it (KeyError when the catalogue lacks it)."""
    from qkv.presentation.i18n import t

    return t(item.key, lang, **item.fields)


def test_numbers_that_are_not_finite_are_refused_in_both_languages(tiny, said):
    """A model with a NaN weight: generating and the transform panel are refused (core/finite.py), in
    English as before and in Chinese from the catalogue, naming the weight."""
    import copy

    from qkv.apps.web.server import create_app

    model = copy.deepcopy(tiny[0])
    with torch.no_grad():
        model.get_parameter("blocks.0.attn.W_QKV.weight").fill_(float("nan"))
    client = TestClient(create_app(model, tiny[1], "nan"), base_url="http://127.0.0.1")
    for request, english in [
        (post("/api/generate", {"text": S, "temperature": 0}), "NaN or infinite values in the next-token logits; the"),
        (post("/api/transform", {"layer": 0, "head": 0}), "NaN or infinite values in layer 0 head 0's W_Q; the"),
    ]:
        status, en = answer(client, request)
        assert status == 400 and en.startswith(english) and "blocks.0.attn.W_QKV.weight" in en, en
        said.clear()
        status, zh = answer(client, request, ZH)
        assert status == 400 and HAN.search(zh) and "blocks.0.attn.W_QKV.weight" in zh and catalogued(said[-1][0]), zh

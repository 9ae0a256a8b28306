"""`qkv export`: a qkv GPT and its tokenizer written as a Hugging Face directory, which transformers'
AutoModelForCausalLM and AutoTokenizer load with the same logits (1e-5) and the same ids and text."""

from __future__ import annotations

import itertools
import random
import unicodedata
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rundir_util import TINY, one_error, snapshot

from qkv.apps.cli import main
from qkv.core.hub.adapters.gpt2 import to_hf
from qkv.core.hub.export import export_hf
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text import corpus
from qkv.core.text.tokenizers import UnknownTokenError, train_tokenizer
from qkv.core.text.tokenizers.to_hf import to_hf_tokenizer
from qkv.core.text.tokenizers.words import _WORD_RE, WordTokenizer
from qkv.core.train.checkpoint import load
from qkv.core.train.lm import train

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

# odd whitespace (tabs, ideographic space U+3000, NBSP, \r\n, \x0b, U+2028), a combining accent (not \w
# in Python, \w in Oniguruma), ², ½ and Ⅻ (\w in Python only), ‿ (\w in Oniguruma only), an emoji
ODD = "odd\t\tspaces\u3000and\u00a0nbsp  \r\n\n \x0b e\u0301 ²½ Ⅻ ‿_x 🙂 a-b's\u2028end\n"
TEXT = corpus.generate(n_sentences=80, lang="both") + ODD
ZH, EN = TEXT.splitlines()[:2]
TEXTS = [
    ZH,
    EN,
    ODD,
    ZH + "\n" + EN,
    ODD + ZH,
    ZH.replace(" ", "\t \u3000\r\n \x0b"),  # whitespace runs no training text holds
    ZH.replace(" ", ""),  # Chinese without spaces
    "  " + EN + "  ",
]
KINDS = {
    "char": dict(kind="char"),
    "word": dict(kind="word", segment="none"),
    "word-nows": dict(kind="word", segment="none", whitespace=False),
    "bpe": dict(kind="bpe", vocab_size=400),
}
ENCODABLE = {"char": len(TEXTS), "bpe": len(TEXTS), "word": 5, "word-nows": 6}
EXPORTABLE = ["n_ctx=32"]  # with qkv's default unembedding bias, which the export folds into ln_f and lm_head
# what Hugging Face's tokenizers says for a word it cannot map; its Rust side raises a bare Exception
NO_UNK = r"Missing \[UNK\] token"


def hf_load(d: Path):
    return transformers.AutoModelForCausalLM.from_pretrained(d).eval(), transformers.AutoTokenizer.from_pretrained(d)


def hf_logits(hf_model, ids):
    with torch.no_grad():
        return hf_model(torch.tensor([ids])).logits[0]


def qkv_logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids]))[0]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """checkpoints(kind): a tiny GPT trained on TEXT with that tokenizer, trained once (read-only)."""
    root, done = tmp_path_factory.mktemp("export"), {}

    def get(kind: str) -> Path:
        if kind not in done:
            tokenizer = train_tokenizer(text=TEXT, **KINDS[kind])
            train(TEXT, out=root / kind, tokenizer=tokenizer, overrides=TINY + EXPORTABLE, progress=False)
            done[kind] = root / kind
        return done[kind]

    return get


def noisy(model: GPT, seed: int = 0, std: float = 0.3) -> GPT:
    """The model with every parameter replaced by normal noise: logits far from zero, so 1e-5 means something."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * std)
    return model.eval()


@pytest.mark.parametrize("kind", list(KINDS))
def test_export_loads_with_same_logits_ids_and_text(kind, checkpoints, tmp_path):
    ckpt = checkpoints(kind)
    model, tok = load(ckpt)
    model = noisy(model)
    export_hf(model, tok, tmp_path / "hf")
    assert (tmp_path / "hf" / "model.safetensors").is_file()
    hf_model, hf_tok = hf_load(tmp_path / "hf")
    assert hf_tok.model_max_length == model.cfg.n_ctx

    encoded = 0
    for text in TEXTS:
        try:
            ids = tok.encode(text)
        except UnknownTokenError:
            with pytest.raises(Exception, match=NO_UNK):  # no unknown token: refused, not silently mapped
                hf_tok(text)
            continue
        encoded += 1
        assert hf_tok(text)["input_ids"] == ids, text
        assert hf_tok.encode(text) == ids
        assert hf_tok.decode(ids) == tok.decode(ids), text
        if kind != "word-nows":  # without whitespace tokens, text comes back with its spaces redone
            assert hf_tok.decode(ids) == text
        ids = ids[: model.cfg.n_ctx]
        expected = qkv_logits(model, ids)
        assert expected.abs().max() > 1.0
        torch.testing.assert_close(hf_logits(hf_model, ids), expected, atol=1e-5, rtol=0)
    assert encoded == ENCODABLE[kind]  # the others hold words or whitespace runs the training text lacks

    rng = random.Random(0)  # any ids, e.g. sampled by a model, decode to the same text
    for _ in range(200):
        ids = [rng.randrange(tok.vocab_size) for _ in range(rng.randrange(1, 12))]
        assert hf_tok.decode(ids) == tok.decode(ids), ids
    ids = [rng.randrange(model.cfg.d_vocab) for _ in range(model.cfg.n_ctx)]
    torch.testing.assert_close(hf_logits(hf_model, ids), qkv_logits(model, ids), atol=1e-5, rtol=0)

    # and back: --ckpt reads the exported directory as a model qkv explains, with qkv's own tokenizer
    back, back_tok = load(tmp_path / "hf")
    assert back_tok.to_dict() == tok.to_dict()
    torch.testing.assert_close(qkv_logits(back, ids), qkv_logits(model, ids), atol=1e-5, rtol=0)


def test_unknown_text_is_refused_by_both(tmp_path):
    tok = train_tokenizer("char", "我 吃了 苹果")
    hf = to_hf_tokenizer(tok)
    with pytest.raises(UnknownTokenError):
        tok.encode("我 吃了 香蕉")
    with pytest.raises(Exception, match="UNK|unk"):
        hf.encode("我 吃了 香蕉")
    assert hf.encode("我 吃了 苹果").ids == tok.encode("我 吃了 苹果")


def test_word_classes_are_pythons_for_every_assigned_character():
    r"""Python's \w and \s, not Oniguruma's: every assigned code point (and a sample of the others), once
    between word characters and once between spaces, is cut as qkv cuts it."""
    hf = to_hf_tokenizer(WordTokenizer(["a"]))
    chars = [
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF and (unicodedata.category(chr(c)) not in ("Cn", "Co") or c % 101 == 0)
    ]
    for sep in ("a", " "):
        text = sep.join(chars)
        assert [p for p, _ in hf.pre_tokenizer.pre_tokenize_str(text)] == _WORD_RE.findall(text)


WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
WORDS = ["a", "bc", "我", "苹果", "!", "。", "²", "e", "\u0301", "_x", "🙂"]
BREAKS = ["".join(p) for n in (1, 2, 3) for p in itertools.product("\r\n", repeat=n)]
pieces = st.lists(
    st.one_of(st.sampled_from(WORDS), st.sampled_from(WHITESPACE), st.sampled_from([" ", "\n", "\r\n"])), max_size=20
)


@pytest.mark.parametrize("whitespace", [True, False])
@settings(max_examples=300, deadline=None)
@given(pieces=pieces, ids=st.lists(st.integers(0, len(WORDS) + len(BREAKS) + 2), max_size=12))
def test_word_tokenizer_round_trips_through_hf(whitespace, pieces, ids):
    tokens = WORDS + BREAKS + ([" ", "\t", " \u3000"] if whitespace else ["\x0b\x0b", "\u2028", "\n\n\n\n"])
    tok = WordTokenizer(tokens, whitespace=whitespace)
    hf = _hf_cached(tuple(tokens), whitespace)
    text = "".join(pieces)
    try:
        expected = tok.encode(text)
    except UnknownTokenError:
        with pytest.raises(Exception, match=NO_UNK):
            hf.encode(text)
    else:
        assert hf.encode(text).ids == expected
        assert hf.decode(expected) == tok.decode(expected)
    assert hf.decode(ids) == tok.decode(ids)


_CACHE: dict = {}


def _hf_cached(tokens: tuple, whitespace: bool):
    if (tokens, whitespace) not in _CACHE:
        _CACHE[tokens, whitespace] = to_hf_tokenizer(WordTokenizer(list(tokens), whitespace=whitespace))
    return _CACHE[tokens, whitespace]


def test_bpe_tokenizer_is_a_copy():
    tok = train_tokenizer("bpe", TEXT, vocab_size=300)
    hf = to_hf_tokenizer(tok)
    assert hf is not tok.hf and hf.to_str() == tok.hf.to_str()
    for text in TEXTS + ["€ 🙂 \x00 ÿ"]:
        assert hf.encode(text).ids == tok.encode(text)
        assert hf.decode(tok.encode(text)) == text


def test_what_cannot_be_expressed_is_refused(monkeypatch):
    import qkv.core.text.tokenizers.words as words

    monkeypatch.setattr(words, "_import_jieba", lambda: object())  # jieba itself is not needed to refuse
    with pytest.raises(ValueError, match="jieba") as err:
        to_hf_tokenizer(WordTokenizer(["我", "苹果"], use_jieba=True))
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="'a '"):
        to_hf_tokenizer(WordTokenizer(["a ", "b"], whitespace=False))  # no file qkv trains holds such a token
    to_hf_tokenizer(WordTokenizer(["a ", "b"], whitespace=True))  # with whitespace tokens it is fine


def test_export_refuses_what_gpt2_cannot_compute(tmp_path):
    tok = train_tokenizer("char", TEXT)
    base = dict(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=1, unembed_bias=False)
    for extra, named in [
        (dict(embed_scale=True), "embed_scale"),
        (dict(pos="rope"), "pos=rope"),
        (dict(norm="post"), "norm=pre"),
        (dict(d_vocab=tok.vocab_size - 1), "tokens"),
    ]:
        model = noisy(GPT(ModelConfig(**{**base, **extra})))
        with pytest.raises(ValueError, match=named) as err:
            export_hf(model, tok, tmp_path / "hf")
        assert "\n" not in str(err.value)
        assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary directory


def test_an_export_that_would_compute_otherwise_is_refused(tmp_path, monkeypatch):
    """The exported model is run against qkv's before anything is written: a setting the GPT-2
    mapping carried over wrongly (simulated: a final LayerNorm bias off by 0.01) is caught."""
    import qkv.core.hub.export as export

    def off(model):
        hf_model = to_hf(model)
        with torch.no_grad():
            hf_model.transformer.ln_f.bias += 0.01
        return hf_model

    monkeypatch.setattr(export, "to_hf", off)
    tok = train_tokenizer("char", TEXT)
    model = noisy(
        GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=1, unembed_bias=False))
    )
    with pytest.raises(ValueError, match="does not compute what the qkv model does"):
        export_hf(model, tok, tmp_path / "hf")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_leaves_nothing(tmp_path, monkeypatch):
    import qkv.core.hub.export as export

    def broken(f, *args):
        f(*args)  # the model's files are written...
        raise OSError("No space left on device")  # ...then the disk fills up

    monkeypatch.setattr(export, "_quietly", broken)
    tok = train_tokenizer("char", TEXT)
    model = noisy(
        GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=1, unembed_bias=False))
    )
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "new", tmp_path / "empty"):
        with pytest.raises(OSError, match="No space"):
            export_hf(model, tok, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"] and not any((tmp_path / "empty").iterdir())


def test_cli_export_then_a_second_export_into_it_is_refused(checkpoints, tmp_path, capsys):
    ckpt = checkpoints("char")  # the command is the same for every tokenizer; the test above covers the kinds
    out = tmp_path / "hf"
    assert main(["export", "--ckpt", str(ckpt), "--hf", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert printed.startswith(f"wrote {out}") and "Traceback" not in err
    model, tok = load(ckpt)
    hf_model, hf_tok = hf_load(out)
    ids = tok.encode(ZH + "\n" + EN)[: model.cfg.n_ctx]
    assert hf_tok(ZH + "\n" + EN)["input_ids"][: model.cfg.n_ctx] == ids
    expected = qkv_logits(model, ids)
    assert expected.std() > 0.01  # a trained model: not the same logits everywhere
    torch.testing.assert_close(hf_logits(hf_model, ids), expected, atol=1e-5, rtol=0)

    before = snapshot(out)
    capsys.readouterr()  # transformers' loading progress bars
    line = one_error(capsys, ["export", "--ckpt", str(ckpt), "--hf", str(out)])
    assert "not empty" in line and "writes only a new or empty directory" in line and str(out) in line
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf"]  # no temporary directory left

    (tmp_path / "file").write_text("mine")
    assert "file" in one_error(capsys, ["export", "--ckpt", str(ckpt), "--hf", str(tmp_path / "file")])
    assert (tmp_path / "file").read_text() == "mine"
    line = one_error(capsys, ["export", "--ckpt", str(ckpt), "--hf", str(tmp_path / "file" / "sub")])
    assert f"{tmp_path / 'file'} is a file, not a directory" in line and (tmp_path / "file").read_text() == "mine"


def test_cli_refuses_an_architecture_gpt2_lacks(text_file, tmp_path, capsys):
    ckpt = tmp_path / "rope"
    train(text_path=text_file, out=ckpt, overrides=TINY + ["pos=rope", "unembed_bias=false"], until=10, progress=False)
    line = one_error(capsys, ["export", "--ckpt", str(ckpt), "--hf", str(tmp_path / "hf")])
    assert "pos=rope" in line and "GPT-2" in line
    assert not (tmp_path / "hf").exists()


def test_cli_exports_a_default_run(runs, tmp_path, capsys):
    """A run trained with the defaults has an unembedding bias, which GPT-2 lacks: it is folded into
    the final LayerNorm and an untied lm_head, and the logits stay the same."""
    out = tmp_path / "hf"
    assert main(["export", "--ckpt", str(runs["base"]), "--hf", str(out)]) == 0
    model, tok = load(runs["base"])
    assert model.cfg.unembed_bias and model.unembed.bias.abs().max() > 0
    hf_model, _ = hf_load(out)
    ids = tok.encode(EN)[: model.cfg.n_ctx]
    torch.testing.assert_close(hf_logits(hf_model, ids), qkv_logits(model, ids), atol=1e-5, rtol=0)


@pytest.mark.parametrize("tied", [False, True])
def test_unembedding_bias_is_folded_exactly(tied):
    torch.manual_seed(0)
    model = noisy(GPT(ModelConfig(d_vocab=50, n_ctx=16, d_model=16, n_heads=2, n_layers=1, tie_embeddings=tied)))
    with torch.no_grad():
        model.unembed.bias.normal_(0.0, 3.0)  # a large bias: a wrong fold shows at once
        model.ln_final.weight.uniform_(0.5, 2.0)
        model.ln_final.bias.normal_(0.0, 1.0)
    hf_model = to_hf(model)
    assert hf_model.config.tie_word_embeddings is False  # lm_head is no longer W_E
    ids = torch.randint(0, 50, (3, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(hf_model(ids).logits, model(ids), atol=1e-5, rtol=0)

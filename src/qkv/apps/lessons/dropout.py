"""Lesson: attention dropout breaks the convex combination while training, and only then.

Dropout zeroes each attention weight with probability p and multiplies the survivors by 1/(1 − p),
without renormalising the row. So in training mode a row of A no longer sums to 1, and z = A v is no
longer a convex combination of the values: it may leave their hull. In evaluation mode dropout is off
and both invariants are back. The same weights (the bundled model's) are used in both modes; qkv.check
measures the rows and solves the hull LP for every head and position.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from qkv.core.bundled import default_ckpt

from .base import LessonResult

NAME = "dropout"
TITLE = {"zh": "注意力 dropout：训练时权重和不再是 1，z 会离开凸包",
         "en": "Attention dropout: in training the weights stop summing to 1 and z leaves the hull"}
TEXT = "我 吃了 苹果 ， 很 甜 。"
P = 0.2
ROWS, HULL = "rows sum to 1", "z lies in the convex hull of the values"


def with_dropout(model, p: float):
    """A copy of the model with attention dropout p and the same weights."""
    from qkv.core.config import ModelConfig
    from qkv.core.models.gpt import GPT

    copy = GPT(ModelConfig(**{**model.cfg.to_dict(), "dropout_attn": p}))
    copy.load_state_dict(model.state_dict())
    return copy


def summarise(report) -> dict:
    """Failures and worst deviations of the two invariants dropout breaks, over all layers."""
    out = {}
    for key, name in (("rows", ROWS), ("hull", HULL)):
        items = [i for i in report.items if i.name == name]
        out[f"{key}_checked"] = sum(i.checked for i in items)
        out[f"{key}_failed"] = sum(len(i.failures) for i in items)
        out[f"{key}_worst"] = max(i.worst for i in items)
    out["checks_failed"] = len(report.failed())
    out["checks"] = len(report.items)
    return out


def _figure(train_pattern, eval_pattern, tokens, layer, head, path, lang):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((12, 5.4))
    axes = fig.subplots(1, 2)
    T = len(tokens)
    for ax, A, name in ((axes[0], eval_pattern, tr(lang, "evaluation mode", "评估模式")),
                        (axes[1], train_pattern, tr(lang, f"training mode, dropout p = {P}", f"训练模式，dropout p = {P}"))):
        shown = np.ma.masked_array(A, mask=np.triu(np.ones((T, T), dtype=bool), 1))
        image = ax.imshow(shown, cmap="Blues", vmin=0.0, vmax=max(1.0, float(A.max())))
        ax.set_xticks(range(T), tokens, fontsize="small", rotation=90)
        ax.set_yticks(range(T), [f"{t}  Σ={A[i].sum():.2f}" for i, t in enumerate(tokens)], fontsize="small")
        ax.set_title(name)
        ax.set_xlabel(tr(lang, "key", "键"))
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(tr(lang, f"Layer {layer}, head {head}: each row's sum Σ is printed on the left",
                    f"第 {layer} 层第 {head} 个头：左侧标出每一行的和 Σ"))
    return save(fig, path)


@torch.no_grad()
def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    from qkv.core.checkpoint import load
    from qkv.core.checks import check
    from qkv.presentation.i18n import check_lang

    check_lang(lang)
    model, tok = load(ckpt if ckpt is not None else default_ckpt())
    dropped = with_dropout(model, P)
    ids = torch.tensor([tok.encode(TEXT)])
    tokens = [tok.display(i) for i in ids[0].tolist()]

    torch.manual_seed(seed)
    dropped.train()
    _, train_trace = dropped.run_with_trace(ids)
    train = summarise(check(train_trace))
    dropped.eval()
    _, eval_trace = dropped.run_with_trace(ids)
    ev = summarise(check(eval_trace))
    sums = torch.cat([train_trace["pattern", L].sum(-1).flatten() for L in range(model.cfg.n_layers)])
    train["rows_min_sum"], train["rows_max_sum"] = sums.min().item(), sums.max().item()

    numbers = {"p": P, "text": TEXT, "seed": seed, "tokens": len(tokens),
               **{f"train_{k}": v for k, v in train.items()}, **{f"eval_{k}": v for k, v in ev.items()}}
    headline = (f"训练模式（p = {P}）：和不为 1 的行 {train['rows_failed']}/{train['rows_checked']}"
                f"（最大偏差 {train['rows_worst']:.3f}），凸包外的 z {train['hull_failed']}/{train['hull_checked']}"
                f"（最大 L1 距离 {train['hull_worst']:.3f}）；评估模式：{ev['rows_failed']} 和 {ev['hull_failed']}") if lang == "zh" else (
                f"training mode (p = {P}): rows not summing to 1: {train['rows_failed']}/{train['rows_checked']} "
                f"(worst {train['rows_worst']:.3f}), z outside the hull: {train['hull_failed']}/{train['hull_checked']} "
                f"(worst L1 distance {train['hull_worst']:.3f}); evaluation mode: {ev['rows_failed']} and {ev['hull_failed']}")
    figures: list[Path] = []
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        layer, head = 0, 0
        figures.append(_figure(train_trace["pattern", layer][0, head].numpy(), eval_trace["pattern", layer][0, head].numpy(),
                               tokens, layer, head, out / "dropout_rows.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, numbers), headline, numbers, figures, lang)


def _text(lang: str, n: dict) -> str:
    if lang == "zh":
        return (
            f"训练时常在注意力权重上加 dropout：每个权重以概率 p = {n['p']} 被置为 0，剩下的乘以 1/(1 − p)。"
            "这样做保证了权重的期望不变，却不会把每一行重新归一化。于是某一次前向计算里，一行权重的和可能小于 1 也可能大于 1"
            f"（这次量到的行和在 {n['train_rows_min_sum']:.3f} 到 {n['train_rows_max_sum']:.3f} 之间），z = Σ a_j v_j 不再是凸组合，也就不再被关在 Value 的凸包里。\n\n"
            f"我们让同一套权重（内置模型）在句子「{n['text']}」（{n['tokens']} 个词元）上跑两遍，用 qkv.check 逐行检查、"
            "并对每个头每个位置解一次线性规划：\n"
            f"- 训练模式：{n['train_rows_checked']} 行里有 {n['train_rows_failed']} 行的和不是 1"
            f"（最大偏差 {n['train_rows_worst']:.3f}）；{n['train_hull_checked']} 个 z 里有 {n['train_hull_failed']} 个"
            f"在凸包外（最大 L1 距离 {n['train_hull_worst']:.3f}）。\n"
            f"- 评估模式：和不是 1 的行 {n['eval_rows_failed']} 个，凸包外的 z {n['eval_hull_failed']} 个。\n\n"
            "所以“z 在凸包内”这条性质只在推理（评估模式）时严格成立；训练时只有权重的期望还满足“和为 1”。"
        )
    return (
        f"Training often applies dropout to the attention weights: each weight is set to 0 with probability p = {n['p']} "
        "and the survivors are multiplied by 1/(1 − p). That keeps every weight's expected value, but nothing puts the "
        "row back to a sum of 1. In any one forward pass a row may add up to less or more than 1 "
        f"(in this run the row sums range from {n['train_rows_min_sum']:.3f} to {n['train_rows_max_sum']:.3f}), so z = Σ a_j v_j is no "
        "longer a convex combination and is free to leave the hull of the values.\n\n"
        f"The same weights (the bundled model's) run twice on “{n['text']}” ({n['tokens']} tokens); qkv.check tests "
        "every row and solves a linear program for every head and position:\n"
        f"- training mode: {n['train_rows_failed']} of {n['train_rows_checked']} rows do not sum to 1 (worst deviation "
        f"{n['train_rows_worst']:.3f}); {n['train_hull_failed']} of {n['train_hull_checked']} z are outside the hull "
        f"(worst L1 distance {n['train_hull_worst']:.3f}).\n"
        f"- evaluation mode: {n['eval_rows_failed']} rows off and {n['eval_hull_failed']} z outside.\n\n"
        "So “z lies in the hull” holds exactly at inference (evaluation mode); during training only the expected weights still add up to 1."
    )

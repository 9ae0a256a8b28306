"""Lesson: the last position's hidden vector becomes next-token probabilities, and temperature reshapes them.

    P(next | tokens so far) = softmax(h_T W_out + b)          h_T: the final LayerNorm's output
    P_T(next)               = softmax((h_T W_out + b) / T)     temperature T

Dividing the logits by T keeps their order (the greedy pick, argmax, never changes) but sharpens the
distribution for T < 1 and flattens it for T > 1; its entropy H = −Σ p log₂ p measures how spread it is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from qkv.core.bundled import default_ckpt

from .base import LessonResult

NAME = "next-token"
TITLE = {"zh": "下一个词元的概率：softmax(h·W_out + b) 与温度",
         "en": "Next-token probabilities: softmax(h·W_out + b) and temperature"}
TEXT = "我 投资了 苹果 ， "  # ends after the comma's space: the next token is the first word of the tail
TEMPERATURES = (0.5, 1.0, 2.0)
TOP = 5


def entropy_bits(p: torch.Tensor) -> float:
    """H = −Σ p log₂ p (terms with p = 0 count as 0)."""
    p = p.detach().double()
    nz = p[p > 0]
    return float(-(nz * torch.log2(nz)).sum())


def _label(tok, i: int) -> str:
    return tok.display(i) if i < tok.vocab_size else f"<{i}>"


def _figure(rows, labels, path, lang):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((8, 4.8))
    ax = fig.subplots()
    x = np.arange(len(labels))
    width = 0.8 / len(rows)
    for k, (T, probs, H) in enumerate(rows):
        bars = ax.bar(x + (k - (len(rows) - 1) / 2) * width, probs, width,
                      label=tr(lang, f"T = {T:g} (entropy {H:.2f} bits)", f"T = {T:g}（熵 {H:.2f} 比特）"))
        for b, p in zip(bars, probs):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{p:.2f}", ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(tr(lang, "probability of the next token", "下一个词元的概率"))
    ax.set_title(tr(lang, f"The top {len(labels)} next tokens at three temperatures", f"三种温度下概率最高的 {len(labels)} 个词元"))
    ax.legend(fontsize="small")
    return save(fig, path)


@torch.no_grad()
def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    from qkv.core.checkpoint import load
    from qkv.presentation.i18n import check_lang

    check_lang(lang)
    model, tok = load(ckpt if ckpt is not None else default_ckpt())
    ids = tok.encode(TEXT)
    logits, trace = model.run_with_trace(torch.tensor([ids]))
    probs = trace["probs"][0, -1].double()  # (d_vocab,): softmax(h W_out + b) at the last position
    z = logits[0, -1].double()  # (d_vocab,)
    top = torch.topk(probs, TOP)
    table = [[_label(tok, int(i)), float(p)] for p, i in zip(top.values, top.indices)]
    greedy = int(z.argmax())
    temps = {}
    for T in TEMPERATURES:
        pT = torch.softmax(z / T, dim=-1)
        tT = torch.topk(pT, TOP)
        temps[T] = {"top": [[_label(tok, int(i)), float(p)] for p, i in zip(tT.values, tT.indices)],
                    "entropy_bits": entropy_bits(pT), "greedy": _label(tok, int(pT.argmax()))}
    shown = top.indices.tolist()  # the same tokens in every bar group: the top at T = 1
    numbers = {
        "text": TEXT, "tokens": [tok.display(i) for i in ids], "position": len(ids) - 1,
        "top": table, "top_sum": float(top.values.sum()), "greedy": _label(tok, greedy), "greedy_id": greedy,
        "entropy_bits": entropy_bits(probs), "max_entropy_bits": float(np.log2(model.cfg.d_vocab)),
        "temperatures": list(TEMPERATURES),
        **{f"T{T:g}_top": temps[T]["top"] for T in TEMPERATURES},
        **{f"T{T:g}_entropy_bits": temps[T]["entropy_bits"] for T in TEMPERATURES},
        **{f"T{T:g}_greedy": temps[T]["greedy"] for T in TEMPERATURES},
        **{f"T{T:g}_shown": [float(torch.softmax(z / T, -1)[i]) for i in shown] for T in TEMPERATURES},
    }
    same = all(temps[T]["greedy"] == numbers["greedy"] for T in TEMPERATURES)
    picks = "/".join(temps[T]["greedy"] for T in TEMPERATURES)
    if lang == "zh":
        headline = (f"「{TEXT.strip()}」之后：" + "，".join(f"{t} {p:.3f}" for t, p in table[:3])
                    + "；熵 " + "，".join(f"T={T:g}：{temps[T]['entropy_bits']:.2f} 比特" for T in TEMPERATURES)
                    + (f"；贪心选择在每个温度下都是 {numbers['greedy']}" if same else f"；贪心选择 {picks}"))
    else:
        headline = (f"top after “{TEXT.strip()}”: " + ", ".join(f"{t} {p:.3f}" for t, p in table[:3])
                    + "; entropy " + ", ".join(f"T={T:g}: {temps[T]['entropy_bits']:.2f} bits" for T in TEMPERATURES)
                    + (f"; greedy pick {numbers['greedy']} at every T" if same else f"; greedy picks {picks}"))
    figures: list[Path] = []
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        rows = [(T, numbers[f"T{T:g}_shown"], temps[T]["entropy_bits"]) for T in TEMPERATURES]
        figures.append(_figure(rows, [_label(tok, i) for i in shown], out / "next_token_temperature.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, numbers), headline, numbers, figures, lang)


def _text(lang: str, n: dict) -> str:
    rows = "\n".join(f"  {r + 1}  {t}  {p:.4f}" for r, (t, p) in enumerate(n["top"]))
    temps = "\n".join(
        f"  T = {T:g}: " + ", ".join(f"{t} {p:.3f}" for t, p in n[f"T{T:g}_top"])
        + (f"；熵 {n[f'T{T:g}_entropy_bits']:.3f} 比特" if lang == "zh" else f"; entropy {n[f'T{T:g}_entropy_bits']:.3f} bits")
        for T in n["temperatures"])
    same = all(n[f"T{T:g}_greedy"] == n["greedy"] for T in n["temperatures"])
    rising = all(n[f"T{a:g}_entropy_bits"] < n[f"T{b:g}_entropy_bits"] for a, b in zip(n["temperatures"], n["temperatures"][1:]))
    if lang == "zh":
        return (
            f"经过所有层之后，最后一个位置的隐藏向量 h 乘上 W_out、加上偏置 b，得到词表里每个词元一个分数（logit），"
            f"softmax 再把这些分数变成概率。句子「{n['text'].strip()}」之后（最后一个词元是空格），概率最高的 {len(n['top'])} 个：\n"
            f"  名次  词元  概率\n{rows}\n"
            f"这 {len(n['top'])} 个合计 {n['top_sum']:.4f}；整个分布的熵是 {n['entropy_bits']:.3f} 比特"
            f"（{n['max_entropy_bits']:.2f} 比特意味着在全部词元上平均分配）。\n\n"
            "生成时可以先把 logit 除以温度 T 再做 softmax：\n" + temps + "\n"
            + ("温度越高，熵越大，分布越平；温度越低，概率越集中到第一名。" if rising else "这次熵没有随温度单调增加。")
            + (f"除以一个正数不改变 logit 的大小顺序，所以贪心解码（取概率最大者）在三种温度下都选「{n['greedy']}」；"
               "温度只影响随机采样。" if same else "贪心选择随温度变了，这不应发生。")
        )
    return (
        "After the last layer, the hidden vector h at the final position is multiplied by W_out and the bias b is added: "
        "one score (logit) per token of the vocabulary, which softmax turns into probabilities. After "
        f"“{n['text'].strip()}” (the last token is the space), the {len(n['top'])} most likely next tokens:\n"
        f"  rank  token  probability\n{rows}\n"
        f"Together they hold {n['top_sum']:.4f}; the entropy of the whole distribution is {n['entropy_bits']:.3f} bits "
        f"({n['max_entropy_bits']:.2f} bits would mean an even spread over every token).\n\n"
        "Sampling may first divide the logits by a temperature T:\n" + temps + "\n"
        + ("The higher the temperature, the larger the entropy and the flatter the distribution; a low temperature "
           "piles the probability onto the first choice. " if rising else "This time the entropy did not rise with T. ")
        + (f"Dividing by a positive number keeps the logits in the same order, so greedy decoding (take the most "
           f"likely) picks “{n['greedy']}” at every temperature; T only changes what random sampling does."
           if same else "The greedy pick changed with T, which should not happen.")
    )

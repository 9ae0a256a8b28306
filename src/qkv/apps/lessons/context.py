"""Lesson: one word, two contexts — attention makes 苹果 depend on the words around it.

The token 苹果 enters the model as one row of W_E, the same row whatever sentence it sits in. A
fixed map x -> x W can only give the same output for the same input, so the fruit and the company
can be told apart only after attention has mixed in the other tokens: z_i = sum_j a_ij x_j W_V
depends on every x_j, and the block adds it back, x_i + z_i W_O. This lesson measures that:

1. the input embedding of 苹果 in "我 吃了 苹果" and in "我 投资了 苹果" (identical);
2. the cosine similarity of the two 苹果 vectors after each layer (it starts at 1 and falls);
3. a linear probe (logistic regression) that reads fruit-or-company from the 苹果/小米/黑莓
   vector at each layer, fitted on corpus sentences and scored on the held-out sense probes;
4. the next words the model predicts after "… 苹果 ，" in each context;
5. all of it again on an untrained model of the same shape: the formula still mixes context,
   but only training makes the result useful.
"""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path

import numpy as np
import torch

from qkv.core import corpus
from qkv.presentation.i18n import check_lang
from qkv.core.models.gpt import GPT
from qkv.core.bundled import default_ckpt

from .base import LessonResult
from qkv.analysis.probing import probe_accuracy
from qkv.analysis.representations import (cosine, encode_examples, heldout_examples, probe_by_stage, sense_examples, stages,
                              vectors_at)

NAME = "context"
TITLE = {
    "zh": "同一个词，两种语境：注意力让「苹果」的表示随上下文而变",
    "en": "One word, two contexts: attention makes 苹果 depend on its neighbours",
}

WORD = "苹果"
SUBJECT, FRUIT_CUE, COMPANY_CUE = "我", "吃了", "投资了"
FRUIT = f"{SUBJECT} {FRUIT_CUE} {WORD}"  # 苹果 sits at the same position in both sentences
COMPANY = f"{SUBJECT} {COMPANY_CUE} {WORD}"
TOP = 3


# ---------------------------------------------------------------------------
# Next-token predictions
# ---------------------------------------------------------------------------


@torch.no_grad()
def next_words(model, tokenizer, prompt: str, top: int = TOP) -> list[tuple[str, float]]:
    probs = torch.softmax(model(torch.tensor([tokenizer.encode(prompt)]))[0, -1].double(), -1)
    p, i = probs.topk(top)
    return [(tokenizer.display(int(t)), float(q)) for t, q in zip(i, p)]


# ---------------------------------------------------------------------------
# The measurements, for one model
# ---------------------------------------------------------------------------


@torch.no_grad()
def attention_side(model, tokenizer) -> dict:
    """What attention does at 苹果 in the two sentences, layer by layer.

    attn_cosine: the cosine between the two sentences of what the layer's attention writes into
    the residual stream at 苹果 (blocks.L.hook_attn_out = sum over heads of z_h W_O[h]).
    cue_weight: the largest weight A any head of the layer gives, from 苹果, to the cue word
    (its last token), in each sentence.
    """
    out = {"attn_cosine": {}, "cue_weight_fruit": {}, "cue_weight_company": {}}
    traces = {}
    for sense, text, cue in (("fruit", FRUIT, FRUIT_CUE), ("company", COMPANY, COMPANY_CUE)):
        ids = tokenizer.encode(text)
        cue_pos = len(tokenizer.encode(f"{SUBJECT} {cue}")) - 1
        _, trace = model.run_with_trace(torch.tensor([ids]))
        traces[sense] = trace
        for layer in range(model.cfg.n_layers):
            out[f"cue_weight_{sense}"][f"L{layer}"] = float(trace["pattern", layer][0, :, -1, cue_pos].max())
    for layer in range(model.cfg.n_layers):
        a, b = (traces[s]["attn_out", layer][0, -1].double().numpy() for s in ("fruit", "company"))
        out["attn_cosine"][f"L{layer}"] = cosine(a, b)
    out["n_visible"] = len(tokenizer.encode(FRUIT))
    return out


def measure(model, tokenizer, train, test, heldout_probes) -> dict:
    a, b = tokenizer.encode(FRUIT), tokenizer.encode(COMPANY)
    va = vectors_at(model, [a], [len(a) - 1])
    vb = vectors_at(model, [b], [len(b) - 1])
    cos = {label: cosine(va[name][0], vb[name][0]) for label, name in stages(model.cfg)}
    diff = float(np.abs(va["hook_embed"][0] - vb["hook_embed"][0]).max())
    return {
        "cosine": cos,
        "embed_max_abs_diff": diff,
        **attention_side(model, tokenizer),
        "probe_accuracy": probe_by_stage(model, train, test),
        "next_fruit": next_words(model, tokenizer, FRUIT + " ， "),
        "next_company": next_words(model, tokenizer, COMPANY + " ， "),
        "continuation_accuracy": probe_accuracy(model, tokenizer, heldout_probes),
    }


def untrained_like(model, seed: int = 0) -> GPT:
    """A freshly initialised GPT of the same shape (the global torch RNG is left as it was)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        fresh = GPT(model.cfg)
    return fresh.eval()


# ---------------------------------------------------------------------------
# Text and figures
# ---------------------------------------------------------------------------

_TEXT = {
    "en": (
        "A token enters the model as one row of the embedding table W_E, and that row does not know\n"
        "which sentence it is in. Take “{fruit}” (ate) and “{company}” (invested in): 苹果 is at\n"
        "position {pos} (counting from 0) in both, and its input vector is the same in both: cosine\n"
        "{c0:.6f}, largest difference between coordinates {diff:g}. Any fixed map x -> xW sends equal\n"
        "inputs to equal outputs, so nothing computed from this vector alone can tell the fruit from\n"
        "the company.\n"
        "\n"
        "Attention is what lets the other tokens in: z_i = Σ_j a_ij x_j W_V blends the vectors of the\n"
        "tokens up to i, and each block adds the result back, x_i + z_i W_O. Cosine of the two 苹果\n"
        "vectors at each stage of the residual stream (“L0 in” is embedding plus position):\n"
        "{cos_table}\n"
        "In the trained model they start identical and part from the first block on; the lowest cosine\n"
        "is {cmin:.4f}, at {cmin_at}. They stay close because most of each vector is still what 苹果 itself\n"
        "brought in. What attention writes at 苹果 (hook_attn_out, Σ_h z_h W_O[h]) differs much more:\n"
        "{attn_table}\n"
        "and the trained heads know where to look: the largest weight a head puts from 苹果 on the cue\n"
        "word is {cue_f:.2f} on 吃了 and {cue_c:.2f} on 投资了 (layer {cue_layer}); in the untrained model no head\n"
        "gives the cue more than {ucue:.2f}, about 1/{n_visible} of its attention, as if spread evenly.\n"
        "\n"
        "Does the difference carry the sense? A linear probe (logistic regression) was fitted on the\n"
        "vector of the ambiguous word (苹果, 小米 or 黑莓, read at the word itself, before the comma)\n"
        "in {n_train} corpus sentences, labelled fruit or company by how each sentence goes on, and\n"
        "scored on {n_test} held-out probe sentences whose frames the corpus never uses (chance: 0.5):\n"
        "{probe_table}\n"
        "At the bare embedding the probe can only guess ({p_embed:.3f}): the same word always gives the\n"
        "same vector. The trained model's best stage is {best} ({best_acc:.3f}).\n"
        "\n"
        "What the model predicts after the comma (top {top}):\n"
        "  trained,   “{fruit} ，”   {nf}\n"
        "  trained,   “{company} ，” {nc}\n"
        "  untrained, “{fruit} ，”   {unf}\n"
        "  untrained, “{company} ，” {unc}\n"
        "(spread evenly, each of the {vocab} words would get {uniform:.4f}). On all {n_cont} held-out\n"
        "sense probes the trained model gives the right continuation a higher probability than the\n"
        "other sense's in {cont:.1%} of the cases, the untrained one in {ucont:.1%}.\n"
        "\n"
        "The formula alone does not make z useful. The untrained model mixes context too (its last\n"
        "cosine is {ucos_last:.4f}): even random, near-even attention averages the earlier tokens in, so a\n"
        "probe that is itself trained on labelled examples can read the sense from it up to\n"
        "{ubest_acc:.3f}. But the model cannot use it: its next-word guesses are almost flat{u_same}.\n"
        "z is just a vector of numbers, and no coordinate of it means 'fruit'; it is\n"
        "training that shapes W_Q, W_K, W_V, W_O and the layers after them until what attention\n"
        "gathers lowers the prediction error."
    ),
    "zh": (
        "词元进入模型时，只是嵌入表 W_E 里的一行，这一行并不知道自己在哪个句子里。拿“{fruit}”\n"
        "和“{company}”来说：苹果在两句中都位于位置 {pos}（从 0 数起），输入向量完全一样，余弦相似度\n"
        "{c0:.6f}，坐标之差的最大值为 {diff:g}。任何固定的映射 x -> xW 都把相同的输入变成相同的\n"
        "输出，所以单凭这个向量，分不出它是水果还是公司。\n"
        "\n"
        "让其他词元参与进来的是注意力：z_i = Σ_j a_ij x_j W_V 把位置 i 及之前各词元的向量按权重\n"
        "混合，每个块再把结果加回去：x_i + z_i W_O。两个“苹果”向量在残差流各阶段的余弦相似度\n"
        "（“第 0 层入”是嵌入加位置）：\n"
        "{cos_table}\n"
        "训练后的模型里，两者从完全相同出发，从第一个块起开始分开；最低的余弦是 {cmin:.4f}，\n"
        "在“{cmin_at}”。它们仍然相近，因为每个向量的大部分仍是“苹果”自己带来的信息。注意力在\n"
        "“苹果”处写入的内容（hook_attn_out，即 Σ_h z_h W_O[h]）差别要大得多：\n"
        "{attn_table}\n"
        "训练后的注意力头也知道该看哪里：从“苹果”出发，某个头放在提示词上的最大权重，在“吃了”上\n"
        "是 {cue_f:.2f}，在“投资了”上是 {cue_c:.2f}（第 {cue_layer} 层）；未训练的模型里，没有哪个头给提示词\n"
        "超过 {ucue:.2f}，约为 1/{n_visible}，相当于平均分配。\n"
        "\n"
        "这种差别里有没有词义？我们用线性探针（逻辑回归）检验：取歧义词（苹果、小米或黑莓）自身\n"
        "位置上的向量（此时还没看到后面的逗号），在 {n_train} 个语料句子上拟合，标签按句子的后文\n"
        "定为水果或公司；再在 {n_test} 个留出的探针句子上评分，这些句子的框架从未在语料中出现过\n"
        "（瞎猜为 0.5）：\n"
        "{probe_table}\n"
        "在纯嵌入处，探针只能瞎猜（{p_embed:.3f}）：同一个词永远给出同一个向量。训练后的模型在\n"
        "“{best}”处最好（{best_acc:.3f}）。\n"
        "\n"
        "模型在逗号之后预测的下一个词（前 {top} 个）：\n"
        "  训练后，“{fruit} ，”   {nf}\n"
        "  训练后，“{company} ，” {nc}\n"
        "  未训练，“{fruit} ，”   {unf}\n"
        "  未训练，“{company} ，” {unc}\n"
        "（完全均匀时，{vocab} 个词每个得到 {uniform:.4f}）。在全部 {n_cont} 个留出的词义探针上，训练后\n"
        "的模型有 {cont:.1%} 给正确后文的概率高于另一词义的后文，未训练的模型是 {ucont:.1%}。\n"
        "\n"
        "光有公式，并不能让 z 变得有用。未训练的模型同样会混入上下文（最后的余弦是\n"
        "{ucos_last:.4f}）：随机、近乎平均的注意力照样会把前面的词元平均进来，所以一个本身用带标签的\n"
        "例子训练过的探针，最多能从中读出 {ubest_acc:.3f}。但模型自己用不上它：它对下一个词的猜测\n"
        "几乎是平的{u_same}。z 只是一串数字，没有哪个坐标代表“水果”；是训练不断调整\n"
        "W_Q、W_K、W_V、W_O 以及其后的各层，直到注意力收集来的信息能够降低预测误差。"
    ),
}

_HEAD = {
    "en": "cosine of 苹果 between the two sentences: {c0:.3f} at the embedding, {clast:.3f} after the last block "
          "(untrained {ucos_last:.3f}); probe accuracy {best_acc:.3f} at {best} (untrained best {ubest_acc:.3f}); "
          "next word {f1} vs {c1}",
    "zh": "两句中苹果的余弦相似度：嵌入处 {c0:.3f}，最后一个块之后 {clast:.3f}（未训练 {ucos_last:.3f}）；"
          "探针准确率 {best_acc:.3f}，在“{best}”（未训练最高 {ubest_acc:.3f}）；下一个词 {f1} 对 {c1}",
}

_SAME = {"en": ", with the same first word in both contexts", "zh": "，两种语境里排第一的词也相同"}

_TABLE_HEAD = {"en": ("stage", "trained", "untrained"), "zh": ("阶段", "训练后", "未训练")}


def stage_name(label: str, lang: str) -> str:
    """'embed' / 'L2 in' / 'L3 out' / 'L1' (a layer) in the chosen language."""
    if lang == "en":
        return label
    if label == "embed":
        return "嵌入"
    layer, *side = label[1:].split()
    return f"第 {layer} 层" + "".join({"in": "入", "out": "出"}[x] for x in side)


_FIG = {
    "cos_title": {"en": "苹果 in “{a}” vs “{b}”", "zh": "“{a}”与“{b}”中的苹果"},
    "cos_y": {"en": "cosine similarity", "zh": "余弦相似度"},
    "probe_title": {"en": "Linear probe: fruit or company? (held-out)", "zh": "线性探针：水果还是公司？（留出集）"},
    "probe_y": {"en": "accuracy", "zh": "准确率"},
    "x": {"en": "stage (residual stream)", "zh": "阶段（残差流）"},
    "trained": {"en": "trained", "zh": "训练后"},
    "untrained": {"en": "untrained", "zh": "未训练"},
    "chance": {"en": "chance", "zh": "瞎猜"},
}


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int, right: bool = False) -> str:
    fill = " " * max(0, width - _width(text))
    return fill + text if right else text + fill


def _table(rows: dict, other: dict, lang: str, digits: int) -> str:
    h = _TABLE_HEAD[lang]
    lines = ["  " + _pad(h[0], 12) + _pad(h[1], 10, True) + _pad(h[2], 10, True)]
    lines += ["  " + _pad(stage_name(k, lang), 12) + f"{rows[k]:>10.{digits}f}{other[k]:>10.{digits}f}" for k in rows]
    return "\n".join(lines)


def _preds(pairs) -> str:
    return ", ".join(f"{w} {p:.3f}" for w, p in pairs)


def _figures(out: Path, lang: str, trained: dict, untrained: dict) -> list[Path]:
    from qkv.presentation.fonts import setup_matplotlib

    setup_matplotlib()
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    t = lambda key: _FIG[key][lang]
    paths = []
    for key, ylabel, title, fname, chance in (
        ("cosine", "cos_y", t("cos_title").format(a=FRUIT, b=COMPANY), "context_cosine.png", None),
        ("probe_accuracy", "probe_y", t("probe_title"), "context_probe.png", 0.5),
    ):
        labels = list(trained[key])
        ticks = [stage_name(k, lang) for k in labels]
        fig, ax = plt.subplots(figsize=(6.4, 4))
        ax.plot(ticks, [trained[key][k] for k in labels], "o-", label=t("trained"))
        ax.plot(ticks, [untrained[key][k] for k in labels], "s--", label=t("untrained"))
        if chance is not None:
            ax.axhline(chance, color="gray", lw=0.8, ls=":", label=t("chance"))
            ax.set_ylim(0.3, 1.03)
        ax.set_xlabel(t("x"))
        ax.set_ylabel(t(ylabel))
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = out / fname
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------
# The lesson
# ---------------------------------------------------------------------------


def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    check_lang(lang)
    # The model is tiny and the batches small: one intra-op thread is fastest, and on a busy
    # 2-core machine two threads waiting on each other made the lesson ten times slower.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(lang, out, ckpt, seed)
    finally:
        torch.set_num_threads(before)


def _run(lang: str, out, ckpt, seed: int) -> LessonResult:
    from qkv.core.checkpoint import load

    start = time.perf_counter()
    model, tokenizer = load(ckpt if ckpt is not None else default_ckpt())
    model.eval()
    fresh = untrained_like(model, seed)

    train = encode_examples(tokenizer, sense_examples(seed=seed + 1))
    test = encode_examples(tokenizer, heldout_examples(seed=seed))
    heldout_probes = corpus.probes("sense", lang="zh", seed=seed)
    m = measure(model, tokenizer, train, test, heldout_probes)
    u = measure(fresh, tokenizer, train, test, heldout_probes)

    labels = list(m["cosine"])
    best = max(labels, key=lambda k: (m["probe_accuracy"][k], -labels.index(k)))
    ubest = max(labels, key=lambda k: (u["probe_accuracy"][k], -labels.index(k)))
    cmin_at = min(labels, key=lambda k: m["cosine"][k])
    layers = list(m["cue_weight_fruit"])
    cue_layer = max(layers, key=lambda k: m["cue_weight_fruit"][k] + m["cue_weight_company"][k])
    ucue = max(max(u["cue_weight_fruit"].values()), max(u["cue_weight_company"].values()))
    numbers = {
        "sentences": {"fruit": FRUIT, "company": COMPANY},
        "position": len(tokenizer.encode(FRUIT)) - 1,
        "embed_cosine": m["cosine"]["embed"],
        "embed_max_abs_diff": m["embed_max_abs_diff"],
        "cosine": m["cosine"],
        "untrained_cosine": u["cosine"],
        "attn_out_cosine": m["attn_cosine"],
        "untrained_attn_out_cosine": u["attn_cosine"],
        "cue_weight_fruit": m["cue_weight_fruit"],
        "cue_weight_company": m["cue_weight_company"],
        "untrained_cue_weight_fruit": u["cue_weight_fruit"],
        "untrained_cue_weight_company": u["cue_weight_company"],
        "probe_accuracy": m["probe_accuracy"],
        "untrained_probe_accuracy": u["probe_accuracy"],
        "best_probe_stage": best,
        "best_probe_accuracy": m["probe_accuracy"][best],
        "untrained_best_probe_stage": ubest,
        "untrained_best_probe_accuracy": u["probe_accuracy"][ubest],
        "n_probe_train": len(train[2]),
        "n_probe_test": len(test[2]),
        "next_fruit": m["next_fruit"],
        "next_company": m["next_company"],
        "untrained_next_fruit": u["next_fruit"],
        "untrained_next_company": u["next_company"],
        "uniform_probability": 1 / model.cfg.d_vocab,
        "continuation_accuracy": m["continuation_accuracy"],
        "untrained_continuation_accuracy": u["continuation_accuracy"],
    }
    fill = {
        "fruit": FRUIT, "company": COMPANY, "pos": numbers["position"], "c0": m["cosine"]["embed"], "diff": m["embed_max_abs_diff"],
        "cos_table": _table(m["cosine"], u["cosine"], lang, 4),
        "attn_table": _table(m["attn_cosine"], u["attn_cosine"], lang, 4),
        "cmin": m["cosine"][cmin_at], "cmin_at": stage_name(cmin_at, lang),
        "cue_f": m["cue_weight_fruit"][cue_layer], "cue_c": m["cue_weight_company"][cue_layer], "cue_layer": cue_layer[1:],
        "ucue": ucue, "n_visible": m["n_visible"],
        "probe_table": _table(m["probe_accuracy"], u["probe_accuracy"], lang, 3),
        "n_train": numbers["n_probe_train"], "n_test": numbers["n_probe_test"], "p_embed": m["probe_accuracy"]["embed"],
        "best": stage_name(best, lang), "best_acc": m["probe_accuracy"][best], "top": TOP,
        "nf": _preds(m["next_fruit"]), "nc": _preds(m["next_company"]),
        "unf": _preds(u["next_fruit"]), "unc": _preds(u["next_company"]),
        "vocab": model.cfg.d_vocab, "uniform": 1 / model.cfg.d_vocab, "n_cont": len(heldout_probes),
        "cont": m["continuation_accuracy"], "ucont": u["continuation_accuracy"],
        "ucos_last": u["cosine"][labels[-1]], "ubest_acc": u["probe_accuracy"][ubest],
        "u_same": _SAME[lang] if u["next_fruit"][0][0] == u["next_company"][0][0] else "",
        "clast": m["cosine"][labels[-1]], "f1": m["next_fruit"][0][0], "c1": m["next_company"][0][0],
    }
    figures = _figures(Path(out), lang, m, u) if out is not None else []
    numbers["seconds"] = time.perf_counter() - start
    return LessonResult(name=NAME, title=TITLE[lang], text=_TEXT[lang].format(**fill),
                        headline=_HEAD[lang].format(**fill), numbers=numbers, figures=figures, lang=lang)

"""Lesson: without positional information, 我打你 and 你打我 look the same.

Three measurements:

(a) Permutation equivariance. With no positions and no causal mask, attention treats its input as
    a set: permuting the input ids permutes the output logits and changes nothing else. Measured
    on trained weights as the largest |logits(perm(ids)) - perm(logits(ids))|.
(b) Order probes (qkv.corpus.probes("order")): contrast pairs with the same bag of words
    (上周末 … 他 打了 小红 ， → 小红 哭了 versus 小红 打了 他 ， → 他 哭了). Small models are trained on
    the order sentences of the built-in corpus with each kind of position. A one-layer causal
    model without positions is blind to order by construction (see `_text`); a two-layer one
    can read order from the causal mask, and the lesson measures how much it does.
(c) RoPE: rotating q and k by their positions makes q·k depend only on the offset t - s.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch

from qkv.core import corpus
from qkv.core.config import ModelConfig, TrainConfig
from qkv.core.corpus import lexicon
from qkv.presentation.i18n import check_lang
from qkv.core.models.gpt import GPT
from qkv.core.nn.position import RoPE, sinusoidal_table
from .base import LessonResult
from qkv.analysis.probing import continuation_logprob
from .training import fit, threads, tokenize

NAME = "order"
TITLE = {"zh": "语序：没有位置信息，「我打你」和「你打我」是一回事",
         "en": "Word order: without positional information, 'I hit you' and 'you hit me' look the same"}

N_SENTENCES = 6000  # drawn from the built-in corpus; only the order sentences (about a fifth) are kept
MODEL = {"n_ctx": 16, "d_model": 64, "n_heads": 4, "n_layers": 1}
TRAIN = {"steps": 800, "batch_size": 16, "lr": 5e-3, "min_lr": 5e-4, "warmup_steps": 30, "eval_steps": 10}
EMBED_STD = 1.5  # token embeddings ~ N(0, 1.5^2), see _text
# (name, pos, n_layers): four one-layer models, one per kind of position, and a two-layer one without
RUNS = (("none", "none", 1), ("learned", "learned", 1), ("sinusoidal", "sinusoidal", 1), ("rope", "rope", 1),
        ("none2", "none", 2))
ROPE_CTX, ROPE_D, SHIFTS = 128, 32, (1, 3, 10, 50)


def order_text(seed: int) -> str:
    """The order sentences ('A verb B , B reaction .') of corpus.generate(seed, N_SENTENCES, 'zh')."""
    verbs = {v[0] for v in lexicon.ORDER_VERBS}
    lines = [line for line in corpus.generate(seed, N_SENTENCES, "zh").splitlines() if verbs & set(line.split())]
    return "\n".join(lines) + "\n"


@torch.no_grad()
def permutation_deviation(model: GPT, ids: torch.Tensor, perm: torch.Tensor, causal: bool) -> float:
    """max |f(ids[perm]) - f(ids)[perm]| for the model's weights (in float64), with or without the causal mask."""
    cfg = ModelConfig(**{**model.cfg.to_dict(), "causal": causal})
    copy = GPT(cfg).double()  # float64, so that rounding stays far below what is measured
    copy.load_state_dict(model.state_dict())
    copy.eval()
    a = copy(ids[perm][None])[0]  # (T, d_vocab)
    b = copy(ids[None])[0][perm]
    return (a - b).abs().max().item()


@torch.no_grad()
def pair_scores(model: GPT, tok, probes) -> list[tuple[float, float]]:
    """Per probe, (log P(expected | prompt), log P(alternative | prompt))."""
    model.eval()
    return [(continuation_logprob(model, tok, p.prompt, p.expected), continuation_logprob(model, tok, p.prompt, p.alternatives[0]))
            for p in probes]


def pair_stats(scores, probes) -> dict:
    """Accuracy, the share of contrast pairs whose two members get different answers, and the largest
    difference between the scores the two members of a pair give the same continuation."""
    right = [s[0] > s[1] for s in scores]
    apart, diff = 0, 0.0
    pairs = [(i, i + 1) for i in range(0, len(probes) - 1, 2) if probes[i].group == probes[i + 1].group]
    for i, j in pairs:
        # member i scores (e_i, e_j); member j scores (e_j, e_i): compare each continuation across the pair
        diff = max(diff, abs(scores[i][0] - scores[j][1]), abs(scores[i][1] - scores[j][0]))
        pick_i = probes[i].expected if scores[i][0] > scores[i][1] else probes[i].alternatives[0]
        pick_j = probes[j].expected if scores[j][0] > scores[j][1] else probes[j].alternatives[0]
        apart += pick_i != pick_j
    return {"acc": sum(right) / len(right), "apart": apart / len(pairs), "pair_diff": diff, "pairs": len(pairs)}


def rope_shift(seed: int) -> dict:
    """max |(R_s q)·(R_t k) - (R_{s+d} q)·(R_{t+d} k)| over positions s, t and shifts d; the same for
    positions added to q and k (sinusoidal), which are not shift-invariant."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(ROPE_D, generator=g), torch.randn(ROPE_D, generator=g)
    q, k = q / q.norm(), k / k.norm()  # unit vectors: |q·k| <= 1 without positions
    rope, table = RoPE(ROPE_CTX, ROPE_D), sinusoidal_table(ROPE_CTX, ROPE_D)
    n = ROPE_CTX - max(SHIFTS)
    rq = rope(q.expand(1, 1, ROPE_CTX, ROPE_D))[0, 0]  # (ROPE_CTX, d): q rotated at every position
    rk = rope(k.expand(1, 1, ROPE_CTX, ROPE_D))[0, 0]
    dots = rq @ rk.T  # dots[s, t] = (R_s q) . (R_t k)
    aq, ak = q + table, k + table  # additive positions
    adds = aq @ ak.T
    rope_dev = max((dots[d:d + n, d:d + n] - dots[:n, :n]).abs().max().item() for d in SHIFTS)
    add_dev = max((adds[d:d + n, d:d + n] - adds[:n, :n]).abs().max().item() for d in SHIFTS)
    return {"rope_shift_dev": rope_dev, "additive_shift_dev": add_dev, "rope_dot_scale": dots.abs().max().item()}


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> dict:
    """Train the five models and take every measurement (cached: numbers do not depend on the language)."""
    with threads(1):
        tok, ids = tokenize(order_text(seed))
        probes = corpus.probes("order", "zh")
        tc = TrainConfig(**TRAIN, seed=seed)
        n = {"seed": seed, "tokens": len(ids), "vocab": tok.vocab_size, "steps": tc.steps, "batch_size": tc.batch_size,
             "probes": len(probes), "embed_std": EMBED_STD, **MODEL}
        models = {}
        for name, pos, layers in RUNS:
            cfg = ModelConfig(**{**MODEL, "d_vocab": tok.vocab_size, "pos": pos, "n_layers": layers})
            f = fit(ids, cfg, tc, seed=seed, embed_std=EMBED_STD)
            models[name] = f.model
            stats = pair_stats(pair_scores(f.model, tok, probes), probes)
            n.update({f"acc_{name}": stats["acc"], f"apart_{name}": stats["apart"], f"pair_diff_{name}": stats["pair_diff"],
                      f"val_loss_{name}": f.val_loss, f"seconds_{name}": f.seconds})
            n["pairs"] = stats["pairs"]
        g = torch.Generator().manual_seed(seed)
        sample = ids[: MODEL["n_ctx"]]
        perm = torch.randperm(len(sample), generator=g)
        n["perm_none"] = permutation_deviation(models["none2"], sample, perm, causal=False)
        n["perm_none_causal"] = permutation_deviation(models["none2"], sample, perm, causal=True)
        n["perm_learned"] = permutation_deviation(models["learned"], sample, perm, causal=False)
        n["perm_tokens"] = len(sample)
        n.update(rope_shift(seed))
    return {"numbers": n}


def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """ckpt is ignored: this lesson trains its own models."""
    check_lang(lang)
    n = dict(measure(seed)["numbers"])
    figures: list[Path] = []
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        figures.append(_figure(n, out / "order.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, n), _headline(lang, n), n, figures, lang)


def _label(name: str, lang: str) -> str:
    zh = {"none": "无位置（1 层）", "none2": "无位置（2 层）", "learned": "可学习", "sinusoidal": "正弦", "rope": "RoPE"}
    en = {"none": "none (1 layer)", "none2": "none (2 layers)", "learned": "learned", "sinusoidal": "sinusoidal", "rope": "RoPE"}
    return (zh if lang == "zh" else en)[name]


def _figure(n: dict, path, lang: str):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((12, 4.8))
    left, right = fig.subplots(1, 2)
    names = [r[0] for r in RUNS]
    accs = [100 * n[f"acc_{x}"] for x in names]
    bars = left.bar([_label(x, lang) for x in names], accs, color=["C7", "C0", "C1", "C2", "C3"])
    left.bar_label(bars, [f"{a:.0f}%" for a in accs])
    left.axhline(50, color="k", ls="--", lw=1, label=tr(lang, "chance (50%)", "随机猜（50%）"))
    left.legend(loc="upper left", fontsize="small")
    left.set_ylim(0, 122)
    left.set_ylabel(tr(lang, "order probes solved (%)", "语序探针答对率（%）"))
    left.set_title(tr(lang, f"{n['pairs']} pairs with the same words in swapped roles",
                      f"{n['pairs']} 对词相同、角色互换的句子"))
    left.tick_params(axis="x", labelsize="small")
    items = [(tr(lang, "no positions,\nno mask: permuted", "无位置、无掩码：\n打乱输入"), n["perm_none"]),
             (tr(lang, "no positions,\ncausal mask: permuted", "无位置、因果掩码：\n打乱输入"), n["perm_none_causal"]),
             (tr(lang, "learned positions,\nno mask: permuted", "可学习位置、无掩码：\n打乱输入"), n["perm_learned"]),
             (tr(lang, "RoPE q·k,\nshifted by d", "RoPE q·k：\n整体平移 d"), n["rope_shift_dev"]),
             (tr(lang, "added sinusoids q·k,\nshifted by d", "相加的正弦位置 q·k：\n整体平移 d"), n["additive_shift_dev"])]
    values = [max(v, 1e-12) for _, v in items]
    bars = right.barh([t for t, _ in items], values, color=["C0", "C3", "C3", "C0", "C3"])
    right.bar_label(bars, [f"{v:.1e}" for _, v in items], padding=3, fontsize="small")
    right.set_xscale("log")
    right.set_xlim(1e-16, 1e3)
    right.invert_yaxis()
    right.tick_params(axis="y", labelsize="small")
    right.set_xlabel(tr(lang, "largest change (blue: symmetry holds, red: broken)", "最大变化（蓝：对称成立；红：被打破）"))
    right.set_title(tr(lang, "What changes when the input is permuted or shifted", "打乱或平移输入后，输出变了多少"))
    return save(fig, path)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _headline(lang: str, n: dict) -> str:
    if lang == "zh":
        return (f"语序探针：无位置 1 层 {_pct(n['acc_none'])}、2 层 {_pct(n['acc_none2'])}，可学习 {_pct(n['acc_learned'])}，"
                f"正弦 {_pct(n['acc_sinusoidal'])}，RoPE {_pct(n['acc_rope'])}；打乱输入的最大偏差：无位置无掩码 {n['perm_none']:.1e}，"
                f"可学习位置 {n['perm_learned']:.1e}；RoPE 平移偏差 {n['rope_shift_dev']:.1e}")
    return (f"order probes: no positions 1 layer {_pct(n['acc_none'])}, 2 layers {_pct(n['acc_none2'])}, learned "
            f"{_pct(n['acc_learned'])}, sinusoidal {_pct(n['acc_sinusoidal'])}, RoPE {_pct(n['acc_rope'])}; permutation "
            f"deviation: no positions, no mask {n['perm_none']:.1e}, learned {n['perm_learned']:.1e}; RoPE shift deviation "
            f"{n['rope_shift_dev']:.1e}")


def _leak(lang: str, n: dict) -> str:
    """What the two-layer model without positions did, in words chosen by the measurement."""
    acc = n["acc_none2"]
    if lang == "zh":
        if acc >= 0.6:
            return (f"它答对了 {_pct(acc)}，远高于随机。这不是位置编码，而是因果掩码在泄露语序。一种可能的做法：第一层里每个词元只能看见它前面的词，"
                    "所以被打的人（排在动词后面）的向量里可以混进动词，而打人的人（排在动词前面）的向量里不可能有。"
                    "第二层只要去找“见过动词的那个人”，就能分清谁打了谁。掩码本身就是一种位置信息：一个词元甚至可以靠"
                    "注意力均匀分配时每份权重的大小（1/前面的词元数）数出自己排第几。")
        return (f"它只答对了 {_pct(acc)}，在这个预算内没有学会利用因果掩码。不过原则上掩码会泄露语序：第一层里每个词元只能看见它前面的词，"
                "排在动词后面的人与排在前面的人得到的向量不同，第二层可以据此区分。")
    if acc >= 0.6:
        return (f"It solves {_pct(acc)}, far above chance. That is not a positional encoding but the causal mask leaking "
                "order. One way to do it: in the first layer every token sees only the words before it, so the person "
                "who was hit (after the verb) can have the verb mixed into its vector, while the one who hit (before the "
                "verb) cannot. The second layer then only has to look for 'the person who has seen the verb'. The mask is positional "
                "information in disguise: a token can even count how many tokens precede it from the size of its "
                "attention weights when they are spread evenly (1 / the number of tokens it sees).")
    return (f"It solves only {_pct(acc)}: within this budget it did not learn to exploit the causal mask. In principle "
            "the mask leaks order: in the first layer each token sees only the words before it, so the person after the "
            "verb gets a different vector from the person before it, and a second layer could tell them apart.")


def _text(lang: str, n: dict) -> str:
    if lang == "zh":
        return (
            "注意力本身不看顺序：分数 q_i·k_j 只取决于两个词元的向量，softmax 和加权求和都不在乎它们排在哪里。\n\n"
            f"(a) 置换等变。取一个已训练、没有位置编码的模型，去掉因果掩码，把一段 {n['perm_tokens']} 个词元的输入随机打乱："
            f"输出的 logits 也只是按同样的方式被打乱，最大偏差 {n['perm_none']:.1e}（用 float64 计算，剩下的只是舍入误差）。"
            f"同样的权重加上因果掩码，偏差变成 {n['perm_none_causal']:.2f}；换成训练过的可学习位置编码（去掉掩码），"
            f"偏差是 {n['perm_learned']:.2f}。没有位置也没有掩码时，「我 打了 你」和「你 打了 我」在模型眼里只是同一袋词。\n\n"
            f"(b) 语序探针。只用内置语料里的语序句（{n['tokens']:,} 个词元）训练小模型，每种位置编码一个"
            f"（{n['n_layers']} 层，d_model = {n['d_model']}，{n['n_heads']} 个头，{n['steps']} 步）。"
            f"探针是 {n['pairs']} 对没见过的句子，每对用的词完全相同，只是谁打谁互换；答对要选对谁哭了。"
            f"无位置的 1 层模型答对 {_pct(n['acc_none'])}，可学习位置 {_pct(n['acc_learned'])}，"
            f"正弦位置 {_pct(n['acc_sinusoidal'])}，RoPE {_pct(n['acc_rope'])}。\n"
            "为什么 1 层、无位置的因果模型是公平的“看不见语序”的模型：它在第 t 个位置的输出只取决于第 t 个词元本身"
            "和前 t 个词元组成的那袋词（不管顺序）。一对探针用的是同一袋词，续写的每个位置上前缀的词袋也相同，"
            f"所以两句给同一个续写的分数完全一样（实测最大差 {n['pair_diff_none']:.1e}），每一对里必然恰好对一句错一句："
            f"能区分开的对数比例是 {_pct(n['apart_none'])}。\n"
            f"再加一层（2 层、无位置、仍有因果掩码）：{_leak(lang, n)}\n"
            f"（所有模型的词嵌入都从同一个 N(0, {n['embed_std']}²) 初始化，而不是 GPT-2 的 N(0, 0.02²)："
            "正弦位置表的每一项在 ±1 之间，否则词本身的信息会被位置淹没。）\n\n"
            f"(c) RoPE 只看相对距离。RoPE 按位置把 q、k 的每一对分量旋转一个角度，两个旋转相乘只剩角度差。取两个随机的 {ROPE_D} 维单位向量 q、k，"
            f"把它们的位置 (s, t) 一起平移 d（d ∈ {list(SHIFTS)}），点积不变：最大偏差 {n['rope_shift_dev']:.1e}"
            f"（点积本身最大约 {n['rope_dot_scale']:.1f}）。若把正弦位置直接加到 q、k 上再做点积，平移后最大变化 {n['additive_shift_dev']:.2f}。"
        )
    return (
        "Attention by itself does not see order: the score q_i·k_j depends only on the two tokens' vectors, and "
        "neither softmax nor the weighted sum cares where they stand.\n\n"
        f"(a) Permutation equivariance. Take a trained model without positions, drop the causal mask and shuffle an "
        f"input of {n['perm_tokens']} tokens: the output logits are merely shuffled the same way, largest deviation "
        f"{n['perm_none']:.1e} (computed in float64: only rounding is left). The same weights with the causal mask deviate by "
        f"{n['perm_none_causal']:.2f}; trained learned positions (mask dropped) by {n['perm_learned']:.2f}. With no "
        "positions and no mask, 'I hit you' and 'you hit me' are the same bag of words to the model.\n\n"
        f"(b) Order probes. Small models are trained on the order sentences of the built-in corpus ({n['tokens']:,} "
        f"tokens), one per kind of position ({n['n_layers']} layer, d_model = {n['d_model']}, {n['n_heads']} heads, "
        f"{n['steps']} steps). The probes are {n['pairs']} pairs of unseen Chinese sentences; within a pair the words are "
        "identical and only who hit whom is swapped, and a probe is solved when the model picks the right person to "
        f"cry. Without positions (1 layer): {_pct(n['acc_none'])}; learned positions: {_pct(n['acc_learned'])}; "
        f"sinusoidal: {_pct(n['acc_sinusoidal'])}; RoPE: {_pct(n['acc_rope'])}.\n"
        "Why a one-layer causal model without positions is a fair 'order-blind' model: its output at position t "
        "depends only on token t itself and on the bag of the first t tokens, in any order. Both members of a pair use "
        "the same bag, and so does the prefix at every position of the continuation, so they give each continuation "
        f"exactly the same score (largest measured difference {n['pair_diff_none']:.1e}); in every pair one member must "
        f"be right and the other wrong. Share of pairs it tells apart: {_pct(n['apart_none'])}.\n"
        f"One more layer (2 layers, no positions, still the causal mask): {_leak(lang, n)}\n"
        f"(Every model starts from the same token embeddings, drawn from N(0, {n['embed_std']}²) rather than GPT-2's "
        "N(0, 0.02²): the sinusoidal table's entries lie in ±1 and would otherwise drown the words under their positions.)\n\n"
        "(c) RoPE sees only the offset. RoPE rotates each pair of components of q and k by an angle proportional to "
        f"the position; two rotations combine into one by the difference of their angles. For two random unit vectors "
        f"q and k of {ROPE_D} dimensions, shifting both positions (s, t) by d (d in {list(SHIFTS)}) leaves q·k unchanged: largest deviation {n['rope_shift_dev']:.1e} (the dot "
        f"products themselves reach {n['rope_dot_scale']:.1f}). Adding sinusoidal positions to q and k instead, the "
        f"same shift changes q·k by up to {n['additive_shift_dev']:.2f}."
    )

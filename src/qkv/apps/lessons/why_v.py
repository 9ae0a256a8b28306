"""Lesson: why attention multiplies by V — train z = A·V against z = A·K and compare.

Pairs of GPTs of the same shape are trained on the same text with the same seed, batches and number
of steps. Within a pair the only difference is what attention mixes: the standard values v = x W_V,
or the keys themselves (values="k": z = A k, no W_V), so that the vector a token is found by is also
all it can hand over. One pair has heads of the usual width, one has very narrow heads (d_head 2),
where keys have no room to serve both jobs. All are scored by their loss and by held-out probes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from qkv.core import corpus
from qkv.core.config import ModelConfig, TrainConfig
from qkv.presentation.i18n import check_lang
from .base import LessonResult
from qkv.analysis.probing import probe_accuracy
from .training import draw_curves, fit, threads, tokenize

NAME = "why-v"
TITLE = {"zh": "为什么要乘 V：K 负责匹配，V 负责传递（z = A·V 与 z = A·K 的对比实验）",
         "en": "Why multiply by V: K is for matching, V for what is passed on (z = A·V versus z = A·K)"}

N_SENTENCES = 3000  # of the built-in Chinese corpus
MODEL = {"n_ctx": 32, "d_model": 64, "n_heads": 4, "n_layers": 2}
WIDTHS = (16, 2)  # d_head of the two pairs: the usual d_model / n_heads, and very narrow heads
TRAIN = {"steps": 500, "batch_size": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 30, "eval_steps": 10}
PHENOMENA = ("sense", "association", "order")
KINDS = ("v", "k")
EARLY = (250, 300)  # a window of steps where the batch losses are compared mid-training


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> dict:
    """Train the four models and score them (cached: the numbers do not depend on the language)."""
    with threads(1):
        text = corpus.generate(seed, N_SENTENCES, "zh")
        tok, ids = tokenize(text)
        tc = TrainConfig(**TRAIN, seed=seed)
        probes = {ph: corpus.probes(ph, "zh") for ph in PHENOMENA}
        n = {"seed": seed, "sentences": N_SENTENCES, "tokens": len(ids), "vocab": tok.vocab_size,
             "steps": tc.steps, "batch_size": tc.batch_size, **MODEL, **{f"{ph}_probes": len(p) for ph, p in probes.items()},
             **{f"{ph}_chance": sum(1 / (1 + len(q.alternatives)) for q in p) / len(p) for ph, p in probes.items()}}
        fits = {}
        for width in WIDTHS:
            for kind in KINDS:
                key = f"{kind}{width}"
                f = fit(ids, ModelConfig(d_vocab=tok.vocab_size, values=kind, d_head=width, **MODEL), tc, seed=seed)
                fits[key] = f
                n[f"params_{key}"] = f.model.num_params()
                n[f"train_loss_{key}"] = f.train_loss
                n[f"val_loss_{key}"] = f.val_loss
                n[f"early_loss_{key}"] = sum(f.losses[EARLY[0]:EARLY[1]]) / (EARLY[1] - EARLY[0])
                n[f"seconds_{key}"] = f.seconds
                for ph, p in probes.items():
                    n[f"{ph}_acc_{key}"] = probe_accuracy(f.model, tok, p)
            n[f"val_gap{width}"] = n[f"val_loss_k{width}"] - n[f"val_loss_v{width}"]
            n[f"early_gap{width}"] = n[f"early_loss_k{width}"] - n[f"early_loss_v{width}"]
    return {"numbers": n, "fits": fits}


def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """ckpt is ignored: this lesson trains its own models."""
    check_lang(lang)
    m = measure(seed)
    n = dict(m["numbers"])
    figures: list[Path] = []
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        figures.append(_figure(m["fits"], out / "why_v_loss.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, n), _headline(lang, n), n, figures, lang)


def _figure(fits, path, lang):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((12, 5))
    axes = fig.subplots(1, 2)
    no_wv = tr(lang, " (no W_V)", "（无 W_V）")
    for ax, width in zip(axes, WIDTHS):
        draw_curves(ax, {"z = A·V": fits[f"v{width}"], "z = A·K" + no_wv: fits[f"k{width}"]}, lang, zoom_from=100)
        ax.set_title(tr(lang, f"heads of width d_head = {width}", f"每个头宽 d_head = {width}"))
    fig.suptitle(tr(lang, "Same shape, same batches: mixing values v = x W_V or the keys k = x W_K",
                    "同样的形状、同样的批次：混合值向量 v = x W_V，还是直接混合键 k = x W_K"))
    return save(fig, path)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _headline(lang: str, n: dict) -> str:
    parts = []
    for w in WIDTHS:
        v, k = f"v{w}", f"k{w}"
        if lang == "zh":
            parts.append(f"d_head {w}：验证损失 A·V {n[f'val_loss_{v}']:.3f} / A·K {n[f'val_loss_{k}']:.3f}，"
                         f"远距离关联 {_pct(n[f'association_acc_{v}'])} / {_pct(n[f'association_acc_{k}'])}，"
                         f"语序 {_pct(n[f'order_acc_{v}'])} / {_pct(n[f'order_acc_{k}'])}")
        else:
            parts.append(f"d_head {w}: val loss A·V {n[f'val_loss_{v}']:.3f} / A·K {n[f'val_loss_{k}']:.3f}, "
                         f"association {_pct(n[f'association_acc_{v}'])} / {_pct(n[f'association_acc_{k}'])}, "
                         f"order {_pct(n[f'order_acc_{v}'])} / {_pct(n[f'order_acc_{k}'])}")
    return ("；" if lang == "zh" else "; ").join(parts)


def _mean_acc(n: dict, key: str) -> float:
    return sum(n[f"{ph}_acc_{key}"] for ph in PHENOMENA) / len(PHENOMENA)


def _verdict(lang: str, n: dict, width: int) -> str:
    """One sentence per pair, its wording chosen by the measured numbers."""
    gap, early = n[f"val_gap{width}"], n[f"early_gap{width}"]
    acc_v, acc_k = _mean_acc(n, f"v{width}"), _mean_acc(n, f"k{width}")
    better = gap > 0.01 and acc_v >= acc_k
    worse = gap < -0.01 and acc_v <= acc_k
    if lang == "zh":
        head = (f"d_head = {width}：A·K 的验证损失比 A·V {'高' if gap >= 0 else '低'} {abs(gap):.3f} nat"
                f"（第 {EARLY[0]}–{EARLY[1]} 步的批次损失差 {early:+.3f}），三组探针平均准确率 {_pct(acc_v)}（A·V）对 {_pct(acc_k)}（A·K）。")
        if better:
            return head + "分开 W_V 的模型在这个预算下更好。"
        if worse:
            return head + "这一组里只用 K 的模型反而更好。"
        return head + "两者在这个预算下差别不大。"
    head = (f"d_head = {width}: A·K ends with a validation loss {abs(gap):.3f} nats {'higher' if gap >= 0 else 'lower'} "
            f"than A·V (batch-loss gap over steps {EARLY[0]}–{EARLY[1]}: {early:+.3f}); mean probe accuracy {_pct(acc_v)} (A·V) "
            f"versus {_pct(acc_k)} (A·K).")
    if better:
        return head + " At this budget the model with its own W_V is better."
    if worse:
        return head + " In this pair the keys-only model comes out ahead."
    return head + " At this budget the two are close."


def _rows(lang: str, n: dict) -> str:
    out = []
    for w in WIDTHS:
        for kind in KINDS:
            key = f"{kind}{w}"
            name = "A·V" if kind == "v" else "A·K"
            if lang == "zh":
                out.append(f"- d_head {w}，{name}：训练损失 {n[f'train_loss_{key}']:.3f}，验证损失 {n[f'val_loss_{key}']:.3f}；"
                           f"词义 {_pct(n[f'sense_acc_{key}'])}，远距离关联 {_pct(n[f'association_acc_{key}'])}，"
                           f"语序 {_pct(n[f'order_acc_{key}'])}；参数 {n[f'params_{key}']:,} 个")
            else:
                out.append(f"- d_head {w}, {name}: train loss {n[f'train_loss_{key}']:.3f}, validation loss "
                           f"{n[f'val_loss_{key}']:.3f}; sense {_pct(n[f'sense_acc_{key}'])}, association "
                           f"{_pct(n[f'association_acc_{key}'])}, order {_pct(n[f'order_acc_{key}'])}; "
                           f"{n[f'params_{key}']:,} parameters")
    return "\n".join(out)


def _text(lang: str, n: dict) -> str:
    wide, narrow = WIDTHS
    verdicts = "\n".join(_verdict(lang, n, w) for w in WIDTHS)
    if lang == "zh":
        return (
            "注意力里其实有两道工序。第一道决定“听谁的”：当前词元的查询 q_i 与每个键 k_j 做点积，"
            "softmax 把分数变成权重 a_ij。第二道决定“拿到什么”：z_i = Σ_j a_ij v_j。"
            "标准做法给同一个词元准备两种投影：k_j = x_j W_K 用来被找到，v_j = x_j W_V 用来交出内容。"
            "如果去掉 W_V、直接混合键（values=\"k\"，z_i = Σ_j a_ij k_j），那么一个词元凭什么被匹配上，"
            "它就只能交出什么。\n\n"
            f"实验训练两对模型。每一对形状相同（{n['n_layers']} 层、{n['n_heads']} 个头、d_model = {n['d_model']}），"
            f"用同一个随机种子初始化，在同一份内置中文语料（{n['sentences']} 句，{n['tokens']:,} 个词元）上"
            f"看到完全相同的 {n['steps']} 个批次（每批 {n['batch_size']} 段），唯一的区别是混合 V 还是混合 K。"
            f"第一对的头宽是常见的 d_head = {wide}；第二对把每个头压窄到 d_head = {narrow}，"
            "这时一个键几乎没有多余的维度，既要负责被找到、又要携带内容，矛盾就显出来了。"
            f"探针是训练时没出现过的句子（词义 {n['sense_probes']} 条、远距离关联 {n['association_probes']} 条、"
            f"语序 {n['order_probes']} 条），模型给正确续写的概率最高才算答对"
            f"（随机猜的准确率分别是 {_pct(n['sense_chance'])}、{_pct(n['association_chance'])}、{_pct(n['order_chance'])}）：\n"
            f"{_rows(lang, n)}\n\n"
            f"{verdicts}\n\n"
            "怎么理解：只用 K 时，每个头的“被匹配的特征”和“被传递的内容”必须落在同一组方向里。"
            "头宽时，键里还有空间把两类特征放在不同方向上，后面的 W_O 和 MLP 可以从中挑出要用的部分；头很窄时就只能顾此失彼。"
            "给 V 单独一个矩阵，等于让“我为什么相关”和“我能提供什么”各自学习，互不牵制。"
            "图中是四个模型的损失曲线，可以看到差距在训练中是缩小还是保持。"
        )
    return (
        "Attention does two jobs in a row. The first decides whom to listen to: the current token's query q_i is "
        "compared with every key k_j, and softmax turns the scores into weights a_ij. The second decides what is "
        "received: z_i = Σ_j a_ij v_j. A standard head gives each token two separate projections, k_j = x_j W_K for "
        "being found and v_j = x_j W_V for what it hands over. Remove W_V and mix the keys instead (values=\"k\", "
        "z_i = Σ_j a_ij k_j), and whatever a token is matched by is also all it can pass on.\n\n"
        f"The lesson trains two pairs of models. Within a pair the shape is the same ({n['n_layers']} layers, "
        f"{n['n_heads']} heads, d_model = {n['d_model']}), the seed is the same and so are the {n['steps']} batches "
        f"({n['batch_size']} windows each) of the built-in Chinese corpus ({n['sentences']} sentences, {n['tokens']:,} "
        f"tokens); only V versus K differs. The first pair has the usual head width d_head = {wide}; the second squeezes "
        f"every head to d_head = {narrow}, so a key has hardly any spare directions and must both get found and carry "
        f"the content. The probes are sentences never seen in training ({n['sense_probes']} word-sense, "
        f"{n['association_probes']} long-range association, {n['order_probes']} word-order), each solved when the "
        "right continuation gets the highest probability (guessing would score "
        f"{_pct(n['sense_chance'])}, {_pct(n['association_chance'])} and {_pct(n['order_chance'])}):\n"
        f"{_rows(lang, n)}\n\n"
        f"{verdicts}\n\n"
        "How to read it: with keys only, the features a head matches on and the content it delivers must live in the "
        "same few directions. A wide key still has room to hold both kinds of feature in different directions, and W_O "
        "and the MLP after attention can pick out the part they need; a narrow key has no such room, and something has "
        "to give. A separate W_V lets 'why I am relevant' "
        "and 'what I contribute' be learned independently. The figure shows all four loss curves, so you can see "
        "whether a gap is closing or holding."
    )

"""Lesson: residual connections and LayerNorm are what make a deep stack trainable.

Four 6-layer GPTs of tiny width are trained on the same text for the same budget (same seed, same
batches): with residual connections and pre-norm LayerNorm (the standard block), with residuals
but no LayerNorm (norm="none"), with LayerNorm but no residuals (residual=False), and with neither.
Besides the losses the lesson measures, at initialisation, how large the signal leaving the last
block is and how much gradient reaches the first block compared with the last.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from pathlib import Path

import torch

from qkv.core import corpus
from qkv.core.config import ModelConfig, TrainConfig
from qkv.core.data import get_batch, split_ids
from qkv.presentation.i18n import check_lang
from qkv.core.models.gpt import GPT, lm_loss
from .base import LessonResult
from .training import draw_curves, fit, threads, tokenize

NAME = "residual"
TITLE = {"zh": "残差连接与 LayerNorm：深层网络为什么训练得动",
         "en": "Residual connections and LayerNorm: why a deep stack trains at all"}

N_SENTENCES = 3000
MODEL = {"n_ctx": 24, "d_model": 32, "n_heads": 2, "n_layers": 6}
TRAIN = {"steps": 300, "batch_size": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 30, "eval_steps": 10}
EARLY = 100  # "after the first N steps": the mean batch loss over steps EARLY-20 .. EARLY
# (name, residual, norm)
VARIANTS = (("both", True, "pre"), ("residual", True, "none"), ("norm", False, "pre"), ("neither", False, "none"))


def unigram_loss(train_ids: torch.Tensor, val_ids: torch.Tensor) -> float:
    """Cross-entropy on the validation ids of a model that ignores context and predicts the training
    text's token frequencies: what a network that learned nothing but word counts reaches."""
    counts = Counter(train_ids.tolist())
    total = sum(counts.values())
    vocab = int(max(train_ids.max(), val_ids.max())) + 1
    logp = [math.log((counts.get(i, 0) + 0.5) / (total + 0.5 * vocab)) for i in range(vocab)]  # add-half smoothing
    return -sum(logp[i] for i in val_ids.tolist()) / len(val_ids)


def init_stats(cfg: ModelConfig, train_ids: torch.Tensor, tc: TrainConfig, seed: int) -> dict:
    """At initialisation (the same weights and first batch as `fit`, computed in float64 so that tiny
    values are not rounded to 0): the RMS of the residual stream after the last block, how alike the
    vectors of different positions are there (mean cosine similarity), and the gradient norm of the
    first and the last block."""
    torch.manual_seed(seed)
    model = GPT(cfg).double()
    x_ids, y = get_batch(train_ids, tc.batch_size, cfg.n_ctx, torch.Generator().manual_seed(seed * 1_000_003))
    x = model.embed(x_ids)  # (B, T, d_model)
    if model.pos_embed is not None:
        x = x + model.pos_embed(0, x.shape[1])
    for block in model.blocks:
        x = block(x)
    h = x.detach()
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-300)  # (B, T, d_model)
    cos = unit @ unit.transpose(1, 2)  # (B, T, T)
    T = cos.shape[-1]
    off = ~torch.eye(T, dtype=torch.bool)
    different = off & (x_ids[:, :, None] != x_ids[:, None, :])  # (B, T, T): pairs of positions holding different tokens
    loss = lm_loss(model.unembed(model.ln_final(x)), y)
    loss.backward()
    norm = lambda block: math.sqrt(sum(p.grad.pow(2).sum().item() for p in block.parameters() if p.grad is not None))
    return {"rms_last": h.pow(2).mean().sqrt().item(), "cos_last": cos[different].mean().item(),
            "grad_first": norm(model.blocks[0]), "grad_last": norm(model.blocks[-1]), "loss_init": loss.item()}


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> dict:
    """Train the four models (cached: the numbers do not depend on the language)."""
    with threads(1):
        tok, ids = tokenize(corpus.generate(seed, N_SENTENCES, "zh"))
        tc = TrainConfig(**TRAIN, seed=seed)
        train_ids, val_ids = split_ids(ids, tc.val_fraction, MODEL["n_ctx"])
        n = {"seed": seed, "tokens": len(ids), "vocab": tok.vocab_size, "steps": tc.steps, "batch_size": tc.batch_size,
             "early_step": EARLY, "unigram_loss": unigram_loss(train_ids, val_ids), "uniform_loss": math.log(tok.vocab_size),
             **MODEL}
        fits = {}
        for name, residual, norm in VARIANTS:
            cfg = ModelConfig(**MODEL, d_vocab=tok.vocab_size, residual=residual, norm=norm)
            stats = init_stats(cfg, train_ids, tc, seed)
            f = fit(ids, cfg, tc, seed=seed)
            fits[name] = f
            n.update({f"{k}_{name}": v for k, v in stats.items()})
            n.update({f"train_loss_{name}": f.train_loss, f"val_loss_{name}": f.val_loss,
                      f"early_loss_{name}": f.loss_after(EARLY), f"seconds_{name}": f.seconds})
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
        figures.append(_figure(m["fits"], n, out / "residual_loss.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, n), _headline(lang, n), n, figures, lang)


def _label(name: str, lang: str) -> str:
    zh = {"both": "残差 + LayerNorm", "residual": "只有残差", "norm": "只有 LayerNorm", "neither": "两者都没有"}
    en = {"both": "residual + LayerNorm", "residual": "residual only", "norm": "LayerNorm only", "neither": "neither"}
    return (zh if lang == "zh" else en)[name]


def _figure(fits, n, path, lang):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((8, 5))
    ax = fig.subplots()
    draw_curves(ax, {_label(name, lang): fits[name] for name, _, _ in VARIANTS}, lang, window=15)
    ax.axhline(n["unigram_loss"], color="k", ls=":", lw=1,
               label=tr(lang, "word frequencies only (unigram)", "只按词频猜（一元模型）"))
    ax.legend(fontsize="small")
    ax.set_title(tr(lang, f"{n['n_layers']} layers, d_model = {n['d_model']}: same data, seed and steps",
                    f"{n['n_layers']} 层，d_model = {n['d_model']}：同样的数据、种子和步数"))
    return save(fig, path)


def _headline(lang: str, n: dict) -> str:
    sep = "；" if lang == "zh" else "; "
    if lang == "zh":
        parts = [f"{_label(x, lang)} 验证损失 {n[f'val_loss_{x}']:.2f}" for x, _, _ in VARIANTS]
        return f"{n['n_layers']} 层、{n['steps']} 步后：" + sep.join(parts) + f"（只按词频猜：{n['unigram_loss']:.2f}）"
    parts = [f"{_label(x, lang)} val loss {n[f'val_loss_{x}']:.2f}" for x, _, _ in VARIANTS]
    return f"{n['n_layers']} layers, {n['steps']} steps: " + sep.join(parts) + f" (word frequencies only: {n['unigram_loss']:.2f})"


def _stuck(n: dict, name: str) -> bool:
    """Still no better than word frequencies (within 0.1 nats) at the end."""
    return n[f"val_loss_{name}"] > n["unigram_loss"] - 0.1


def _g(x: float) -> str:
    return f"{x:.2g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else f"{x:.1e}"


def _rows(lang: str, n: dict) -> str:
    rows = []
    for x, _, _ in VARIANTS:
        if lang == "zh":
            rows.append(f"- {_label(x, lang)}：第 {n['early_step']} 步 {n[f'early_loss_{x}']:.2f}，最终训练损失 "
                        f"{n[f'train_loss_{x}']:.2f}、验证损失 {n[f'val_loss_{x}']:.2f}。初始化时：最后一块输出的均方根 "
                        f"{_g(n[f'rms_last_{x}'])}，不同词元的输出向量平均余弦相似度 {n[f'cos_last_{x}']:.3f}，"
                        f"第一块 / 最后一块的梯度范数 {_g(n[f'grad_first_{x}'])} / {_g(n[f'grad_last_{x}'])}")
        else:
            rows.append(f"- {_label(x, lang)}: {n[f'early_loss_{x}']:.2f} at step {n['early_step']}, final train loss "
                        f"{n[f'train_loss_{x}']:.2f}, validation loss {n[f'val_loss_{x}']:.2f}. At initialisation: RMS "
                        f"leaving the last block {_g(n[f'rms_last_{x}'])}, mean cosine similarity there between positions "
                        f"holding different tokens {n[f'cos_last_{x}']:.3f}, gradient norm of the first / last block "
                        f"{_g(n[f'grad_first_{x}'])} / {_g(n[f'grad_last_{x}'])}")
    return "\n".join(rows)


def _why_stuck(lang: str, n: dict, x: str, again: bool = False) -> str:
    """The measured reason a variant did not learn: its tokens collapsed, its gradient vanished, or both.
    `again`: the collapse was already explained for an earlier variant."""
    collapsed, vanished = n[f"cos_last_{x}"] > 0.9, n[f"grad_first_{x}"] < 1e-6
    label = _label(x, lang)
    if lang == "zh":
        why = []
        if collapsed and again:
            why.append(f"同样，各位置的向量塌缩到同一个方向（余弦 {n[f'cos_last_{x}']:.3f}）")
        elif collapsed:
            why.append(f"所有位置走出最后一块时几乎指向同一个方向（余弦 {n[f'cos_last_{x}']:.3f}）：没有直通路径，注意力一遍遍把各个词元"
                       "平均到一起，区分词元的信息被抹掉了，输出不再依赖输入")
        if vanished:
            why.append(f"传到第一块的梯度只有 {_g(n[f'grad_first_{x}'])}，底层根本学不动")
        if not why:
            why.append("初始化时的数字看不出明显的原因")
        return f"「{label}」到最后也没有比只按词频猜（{n['unigram_loss']:.2f}）好多少：" + "；".join(why) + "。"
    why = []
    if collapsed and again:
        why.append(f"the positions collapse onto one direction in the same way (cosine {n[f'cos_last_{x}']:.3f})")
    elif collapsed:
        why.append(f"every position leaves the last block pointing almost the same way (cosine {n[f'cos_last_{x}']:.3f}): "
                   "with no shortcut, attention averages the tokens together layer after layer until what told them apart "
                   "is gone, and the output no longer depends on the input")
        if n[f"grad_first_{x}"] >= 1e-3:
            why[-1] += f" (the gradient itself is not small: {_g(n[f'grad_first_{x}'])} at the first block)"
    if vanished:
        why.append(f"the gradient reaching the first block is {_g(n[f'grad_first_{x}'])}, so the lower layers cannot learn")
    if not why:
        why.append("the numbers at initialisation show no obvious cause")
    return f"'{label}' ends hardly better than guessing from word frequencies ({n['unigram_loss']:.2f}): " + "; ".join(why) + "."


def _verdicts(lang: str, n: dict) -> str:
    best = min((x for x, _, _ in VARIANTS), key=lambda x: n[f"val_loss_{x}"])
    out = [f"验证损失最低的是「{_label(best, lang)}」（{n[f'val_loss_{best}']:.2f}）。" if lang == "zh" else
           f"The lowest validation loss is reached by '{_label(best, lang)}' ({n[f'val_loss_{best}']:.2f})."]
    explained = False
    for x, _, _ in VARIANTS:
        if _stuck(n, x):
            out.append(_why_stuck(lang, n, x, again=explained))
            explained = explained or n[f"cos_last_{x}"] > 0.9
    if not _stuck(n, "residual"):
        gap = n["val_loss_residual"] - n["val_loss_both"]
        ratio = n["grad_first_both"] / max(n["grad_first_residual"], 1e-300)
        if lang == "zh":
            out.append(f"只有残差的模型能学，但{'比加上 LayerNorm 的模型高' if gap > 0 else '比加上 LayerNorm 的模型低'} {abs(gap):.2f} nat，"
                       f"第 {n['early_step']} 步时是 {n['early_loss_residual']:.2f} 对 {n['early_loss_both']:.2f}。"
                       f"初始化时它的梯度是完整模型的 1/{ratio:.0f}：没有 LayerNorm 把向量拉回单位尺度，输出层看到的向量很小，"
                       "起步就慢。")
        else:
            out.append(f"With residuals but no LayerNorm the model learns, but ends {abs(gap):.2f} nats "
                       f"{'above' if gap > 0 else 'below'} the full block ({n['early_loss_residual']:.2f} against "
                       f"{n['early_loss_both']:.2f} at step {n['early_step']}). At initialisation its gradient is 1/{ratio:.0f} "
                       "of the full model's: with no LayerNorm to bring vectors back to unit scale, the output layer sees "
                       "tiny vectors and learning starts slowly.")
    return ("" if lang == "zh" else " ").join(out)


def _text(lang: str, n: dict) -> str:
    if lang == "zh":
        return (
            "一个 Transformer 块不是把 x 换成 f(x)，而是在 x 上加一个修正：x ← x + f(LN(x))。这条“直通”的加法有两个作用："
            "前向时，输入原样传到后面，每一层只需学会“还差什么”；反向时，梯度也能沿着这条路直达底层，不必穿过每一层的矩阵。"
            "LayerNorm 则把每个词元的向量拉回均值 0、方差 1（再乘上可学习的缩放），让每一层看到的输入尺度稳定。\n\n"
            f"实验：四个 {n['n_layers']} 层、d_model = {n['d_model']} 的模型，同一个种子、同一份内置中文语料"
            f"（{n['tokens']:,} 个词元）、同样的 {n['steps']} 个批次，只在有没有残差、有没有 LayerNorm 上不同。"
            f"参照线：完全不看上下文、只按词频猜的一元模型，验证损失 {n['unigram_loss']:.2f}"
            f"（在 {n['vocab']} 个词里均匀乱猜是 {n['uniform_loss']:.2f}）。初始化时的数字用 float64 在第一个批次上计算。\n"
            f"{_rows(lang, n)}\n\n"
            f"{_verdicts(lang, n)}"
        )
    return (
        "A Transformer block does not replace x by f(x); it adds a correction to it: x ← x + f(LN(x)). That plain "
        "addition does two things. Going forward, the input reaches later layers unchanged, so each layer only has to "
        "learn what is still missing. Going backward, the gradient travels the same shortcut straight to the lower "
        "layers instead of through every layer's matrices. LayerNorm rescales each token's vector to mean 0 and "
        "variance 1 (then a learned scale), so every layer sees inputs of a steady size.\n\n"
        f"The experiment: four models of {n['n_layers']} layers and d_model = {n['d_model']}, the same seed, the same "
        f"built-in Chinese corpus ({n['tokens']:,} tokens) and the same {n['steps']} batches; they differ only in having "
        "residual connections and LayerNorm or not. For reference, a unigram model that ignores context and guesses "
        f"from word frequencies reaches a validation loss of {n['unigram_loss']:.2f} (a uniform guess over the "
        f"{n['vocab']} words: {n['uniform_loss']:.2f}). The numbers at initialisation are computed in float64 on the "
        "first batch.\n"
        f"{_rows(lang, n)}\n\n"
        f"{_verdicts(lang, n)}"
    )

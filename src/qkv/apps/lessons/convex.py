"""Lesson: one head's output z is a convex combination of its values, and what breaks that.

    z = Σ_j a_j v_j,  a_j ≥ 0,  Σ_j a_j = 1      →  z lies in conv{v_j}        (checked by an LP)
    z W_O[h] = Σ_j a_j (v_j W_O[h])              →  inside conv{v_j W_O[h]}     (a linear map keeps it)
    x + z W_O[h]                                 →  in general outside it       (the residual adds x)

First the source document's worked example (s = (ln 2, 0, 0), a = (1/2, 1/4, 1/4), z = (1, 1)),
then a real head of the bundled model on a real sentence.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from qkv.core.bundled import default_ckpt

from .base import LessonResult

NAME = "convex"
TITLE = {"zh": "单头输出 z 在 Value 的凸包内，残差把它带出去",
         "en": "One head's z lies in the convex hull of its values; the residual takes it out"}
TEXT = "我 投资了 苹果 ，"
TOL = 1e-5  # the relative tolerance qkv.check uses for float32 activations


def dist(x: float) -> str:
    """How a hull distance appears in the text and the headline."""
    return "0" if x == 0 else f"{x:.3g}"


def vec(x) -> str:
    """A vector in closed form where it has one: (1/2, 1/4, 1/4), (ln 2, 0, 0)."""
    from qkv.analysis.numbers import fmt

    return "(" + ", ".join(fmt(float(c)) for c in np.ravel(x)) + ")"


def _example():
    from qkv.core.checkpoint import load

    from qkv.presentation.derivation import attend

    return attend([math.sqrt(2), 0.0], [[math.log(2), 0.0], [0.0, 1.0], [0.0, -1.0]],
                      [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])


def pick_head(trace, pos: int, target: int) -> tuple[int, int]:
    """The (layer, head) whose query at `pos` puts the most weight on the key at `target`."""
    best, where = -1.0, (0, 0)
    for layer in range(trace.cfg.n_layers):
        row = trace["pattern", layer][0, :, pos, target]  # (n_heads,)
        h = int(row.argmax())
        if row[h].item() > best:
            best, where = row[h].item(), (layer, h)
    return where


def nearest_l2(point: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """The point of conv(vertices) nearest to `point` in Euclidean distance (a small QP on the simplex)."""
    from scipy.optimize import minimize

    n = len(vertices)
    G = vertices @ vertices.T
    c = vertices @ point
    res = minimize(lambda w: w @ G @ w - 2 * c @ w, np.full(n, 1.0 / n), jac=lambda w: 2 * G @ w - 2 * c,
                   bounds=[(0.0, 1.0)] * n, constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    w = np.clip(res.x, 0.0, None)
    return (w / w.sum()) @ vertices


def _outside_figure(VW, zW, x_new, x, tokens, path, lang):
    """The values v_j W_O[h], z W_O[h] (inside) and x + z W_O[h] (outside), drawn in a plane that keeps
    them apart: axis 1 runs from the nearest hull point to x + z W_O (a separating direction), axis 2
    is the values' main direction orthogonal to it."""
    from qkv.presentation.figures import new_figure, save, tr
    from qkv.core.geometry import hull_polygon

    near = nearest_l2(x_new, VW)
    e1 = x_new - near
    e1 = e1 / max(np.linalg.norm(e1), 1e-12)
    centred = VW - VW.mean(0)
    centred = centred - np.outer(centred @ e1, e1)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    e2 = vt[0]
    to2 = lambda P: np.stack([np.atleast_2d(P) @ e1, np.atleast_2d(P) @ e2], -1)
    P, zp, xp, np_, xo = to2(VW), to2(zW)[0], to2(x_new)[0], to2(near)[0], to2(x)[0]
    fig = new_figure((7.5, 6))
    ax = fig.subplots()
    poly = hull_polygon(P)
    if len(poly) >= 3:
        ax.fill(poly[:, 0], poly[:, 1], color="tab:blue", alpha=0.15, label=tr(lang, "hull of v_j·W_O[h]", "v_j·W_O[h] 的凸包"))
    ax.scatter(P[:, 0], P[:, 1], s=30, color="tab:blue", zorder=3)
    for (px, py), t in zip(P, tokens):
        ax.annotate(t, (px, py), xytext=(3, 3), textcoords="offset points", fontsize="small")
    ax.scatter([zp[0]], [zp[1]], marker="*", s=160, color="tab:green", zorder=4, label=tr(lang, "z·W_O[h] (inside)", "z·W_O[h]（在内）"))
    ax.scatter([xp[0]], [xp[1]], marker="*", s=160, color="tab:red", zorder=4, label=tr(lang, "x + z·W_O[h] (outside)", "x + z·W_O[h]（在外）"))
    ax.scatter([xo[0]], [xo[1]], marker="o", s=40, color="0.4", zorder=4, label=tr(lang, "x (the residual stream)", "x（残差流）"))
    ax.annotate("", xy=xp, xytext=xo, arrowprops=dict(arrowstyle="->", color="0.4"))
    ax.axvline(np_[0], color="tab:red", ls="--", lw=0.8, label=tr(lang, "a plane that separates them", "把二者分开的平面"))
    ax.set_xlabel(tr(lang, "direction from the nearest hull point to x + z·W_O", "从凸包最近点指向 x + z·W_O 的方向"))
    ax.set_ylabel(tr(lang, "main direction of the values (orthogonal)", "Value 的主方向（与横轴正交）"))
    ax.set_title(tr(lang, "After the residual the point leaves the hull", "加上残差之后，点离开了凸包"))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return save(fig, path)


@torch.no_grad()
def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    from qkv.core.checkpoint import load
    from qkv.core.geometry import convex_weights
    from qkv.presentation.i18n import check_lang

    check_lang(lang)
    torch.manual_seed(seed)
    ex = _example()
    model, tok = load(ckpt if ckpt is not None else default_ckpt())
    ids = tok.encode(TEXT)
    tokens = [tok.display(i) for i in ids]
    _, trace = model.run_with_trace(torch.tensor([ids]))
    T, pos = len(ids), len(ids) - 1
    cue_pos = len(tok.encode(" ".join(TEXT.split()[:2]))) - 1  # the last token of the verb 投资了
    cue = tokens[cue_pos]
    layer, head = pick_head(trace, pos, cue_pos)

    a = trace["pattern", layer][0, head, pos, :T].double().numpy()  # (T,)
    V = trace["v", layer][0, :T, head].double().numpy()  # (T, d_head)
    z = trace["z", layer][0, pos, head].double().numpy()  # (d_head,)
    W_O = model.blocks[layer].attn.head_weights()["W_O"][head].double().numpy()  # (d_head, d_model)
    VW, zW = V @ W_O, z @ W_O  # (T, d_model), (d_model,)
    x = trace["resid_pre", layer][0, pos].double().numpy()  # (d_model,)
    x_new = x + zW  # the seed's single-head update x + z W_O
    mid = trace["resid_mid", layer][0, pos].double().numpy()  # x + all heads + b_O

    hz = convex_weights(z, V, tol=TOL)
    hzW = convex_weights(zW, VW, tol=TOL)
    hx = convex_weights(x_new, VW, tol=TOL)
    hmid = convex_weights(mid, VW, tol=TOL)
    l2 = float(np.linalg.norm(x_new - nearest_l2(x_new, VW)))
    result_gap = float(np.abs(trace["result", layer][0, pos, head].double().numpy() - zW).max())

    numbers = {
        "example_scores": [float(s) for s in ex.scores], "example_weights": [float(w) for w in ex.weights],
        "example_z": [float(c) for c in ex.z], "example_inside": bool(ex.hull.inside),
        "example_distance": float(ex.hull.distance),
        "text": TEXT, "tokens": tokens, "position": pos, "layer": layer, "head": head,
        "weights": a.tolist(), "cue": cue, "cue_weight": float(a[cue_pos]),
        "z_inside": bool(hz.inside), "z_distance": float(hz.distance),
        "zW_inside": bool(hzW.inside), "zW_distance": float(hzW.distance),
        "residual_inside": bool(hx.inside), "residual_distance": float(hx.distance), "residual_l2_distance": l2,
        "resid_mid_inside": bool(hmid.inside), "resid_mid_distance": float(hmid.distance),
        "norm_x": float(np.linalg.norm(x)), "norm_zW": float(np.linalg.norm(zW)),
        "d_head": int(V.shape[1]), "d_model": int(VW.shape[1]), "result_gap": result_gap,
    }
    if lang == "zh":
        where = lambda inside, d: ("在凸包内" if inside else "在凸包外") + f"（距离 {dist(d)}）"
        headline = (f"例子：a = {vec(ex.weights)}，z = {vec(ex.z)}，{where(ex.hull.inside, ex.hull.distance)}；"
                    f"第 {layer} 层第 {head} 个头「{tokens[pos]}」的 z：{where(hz.inside, hz.distance)}；"
                    f"z·W_O：{where(hzW.inside, hzW.distance)}；x + z·W_O：{where(hx.inside, hx.distance)}；"
                    f"x + attn_out：{where(hmid.inside, hmid.distance)}")
    else:
        where = lambda inside, d: ("inside" if inside else "outside") + f" (distance {dist(d)})"
        headline = (f"example: a = {vec(ex.weights)}, z = {vec(ex.z)}, {where(ex.hull.inside, ex.hull.distance)}; "
                    f"layer {layer} head {head}, z of “{tokens[pos]}”: {where(hz.inside, hz.distance)}; "
                    f"z·W_O: {where(hzW.inside, hzW.distance)}; x + z·W_O: {where(hx.inside, hx.distance)}; "
                    f"x + attn_out: {where(hmid.inside, hmid.distance)}")
    text = _text(lang, numbers, ex)

    figures: list[Path] = []
    if out is not None:
        from qkv.presentation.plot_hull import hull_figure

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        ex.figure(out / "convex_example.png", lang=lang)
        figures.append(out / "convex_example.png")
        title = (f"第 {layer} 层第 {head} 个头：「{tokens[pos]}」的 z 在 Value 的凸包内" if lang == "zh"
                 else f"Layer {layer}, head {head}: z of “{tokens[pos]}” in the hull of the values")
        hull_figure(V, z, a, out / "convex_head.png", labels=tokens, title=title, lang=lang)
        figures.append(out / "convex_head.png")
        figures.append(_outside_figure(VW, zW, x_new, x, tokens, out / "convex_residual.png", lang))
    return LessonResult(NAME, TITLE[lang], text, headline, numbers, figures, lang)


def _text(lang: str, n: dict, ex) -> str:
    L, H, tok = n["layer"], n["head"], n["tokens"][n["position"]]
    w = ", ".join(f"{t} {p:.3f}" for t, p in zip(n["tokens"], n["weights"]))
    yes = lambda inside: ("在凸包内" if inside else "在凸包外") if lang == "zh" else ("inside" if inside else "outside")
    if lang == "zh":
        return (
            "一个注意力头把各位置的 Value 按权重相加：z = Σ a_j v_j。softmax 给出的权重都不小于 0，加起来正好是 1，"
            "所以 z 只能落在这些 Value 张成的凸包里——它是它们的一个“加权平均”。\n\n"
            f"先看手算的小例子：缩放后的分数 s = {vec(ex.scores)}，softmax 得到 a = {vec(ex.weights)}，"
            f"z = {vec(ex.z)}。线性规划的结论：{yes(ex.hull.inside)}（三个 Value 围成的三角形，距离 {dist(ex.hull.distance)}）。\n\n"
            f"再看训练好的模型。句子「{n['text']}」，最后一个词元「{tok}」在第 {L} 层第 {H} 个头上的权重是：{w}"
            f"（这个头对「{n['cue']}」的权重 {n['cue_weight']:.3f}，是所有头里最大的）。它的 z 有 {n['d_head']} 维，"
            f"线性规划的结论：{yes(n['z_inside'])}，距离 {dist(n['z_distance'])}。\n\n"
            f"z 乘上 W_O[h] 进入 {n['d_model']} 维的残差空间后，仍然是 v_j·W_O[h] 的同一组凸组合——线性映射不改变系数，"
            f"所以{yes(n['zW_inside'])}（距离 {dist(n['zW_distance'])}）。\n\n"
            f"但残差连接还要加上原来的 x（|x| = {n['norm_x']:.3f}，而 |z·W_O| = {n['norm_zW']:.3f}）："
            f"x + z·W_O 到这个凸包的 L1 距离是 {dist(n['residual_distance'])}（欧氏距离 {n['residual_l2_distance']:.3f}），"
            f"{yes(n['residual_inside'])}。把所有头和偏置都加上的 x + attn_out 同样{yes(n['resid_mid_inside'])}"
            f"（距离 {dist(n['resid_mid_distance'])}）。凸包的保证只属于单个头、归一化后的那一步。"
        )
    return (
        "An attention head adds up the values of the positions it sees, weighted: z = Σ a_j v_j. The softmax "
        "weights are never negative and add up to exactly 1, so z is a weighted average of the values and cannot "
        "leave the region they enclose, their convex hull.\n\n"
        f"The small worked example first: the scaled scores are s = {vec(ex.scores)}, softmax turns them into "
        f"a = {vec(ex.weights)}, and z = {vec(ex.z)}. A linear program says: {yes(ex.hull.inside)} the triangle of the three "
        f"values (distance {dist(ex.hull.distance)}).\n\n"
        f"Now the trained model. In “{n['text']}” the last token “{tok}” gets these weights from layer {L}, head {H}: "
        f"{w} (this head gives “{n['cue']}” {n['cue_weight']:.3f}, more than any other head does). Its z has "
        f"{n['d_head']} coordinates; the linear program says: {yes(n['z_inside'])}, distance {dist(n['z_distance'])}.\n\n"
        f"Multiplied by W_O[h], z moves into the {n['d_model']}-dimensional residual space, and it is still the same "
        f"convex combination of the points v_j·W_O[h]: a linear map keeps the weights, so it is "
        f"{yes(n['zW_inside'])} (distance {dist(n['zW_distance'])}).\n\n"
        f"The residual connection then adds the old x (|x| = {n['norm_x']:.3f}, while |z·W_O| = {n['norm_zW']:.3f}). "
        f"x + z·W_O is at L1 distance {dist(n['residual_distance'])} from that hull (Euclidean "
        f"{n['residual_l2_distance']:.3f}): {yes(n['residual_inside'])}. The full update x + attn_out, all heads and "
        f"the bias included, is {yes(n['resid_mid_inside'])} too (distance {dist(n['resid_mid_distance'])}). "
        "The hull guarantee belongs to one head's normalised mix, and to nothing after it."
    )

"""What one token looks at, what it takes from there, and what the model predicts next.

    ex = explain(model, tokenizer, "患者 服用 华法林 后 出现 黑便", layer=1, head=0, lang="zh")
    print(ex.to_text()); ex.to_markdown(); ex.to_json()      # Jupyter shows ex as markdown

The model runs once, traced (qkv.trace), in eval mode. With `layer` and `head` the explanation follows
one head step by step for the query token (default: the last; negative counts from the end):
s_j = q·k_j / √d_head and A = softmax(s) for every key it can see; z = Σ_j A_j v_j; the residual
update x_new = x + Σ_h z_h W_O[h] + b_O; then P(next) = softmax(h W_out + b). Without them it
summarises every head (of `layer`, if given; `head` alone picks that head in every layer): the key
it weighs most and the entropy of its attention row. A text longer than n_ctx is cropped from the
left (the dropped count is in "cropped", and a note says so); token indices refer to the kept tokens.

JSON (`to_json()`, a dict; json.dumps(ensure_ascii=False) writes it):
    format "qkv-explain", version 1, kind "explain", lang "en" | "zh"
    mode        "head" (layer and head given) | "summary"
    text        the input text;  cropped: tokens dropped on the left (0 unless longer than n_ctx)
    tokens, ids readable token strings (tokenizer.display: a space is "␣", a newline "\\n") and ids
    token       the query position (0-based, in tokens);  query: its display string
    layer, head the ones asked for (null when not given), made non-negative
    model       {n_layers, n_heads, d_model, d_head, n_ctx, norm, pos, causal}
    attention   (mode "head") {scale: √d_head, argmax: position of the largest weight, weight_sum,
                rows: [{pos, token, dot: q·k, scaled: q·k/√d_head, weight: A}] by position,
                one per key the query can see}
    z           (mode "head") {norm: |z|, first: its first coordinates, d_head, check: max|z − Σ A_j v_j|,
                values: the top `top` keys by A_j·|v_j|: [{pos, token, weight, v_norm, contribution, share}]}
    residual    (mode "head") {norm: "pre" | "post", x: |resid_pre|, head_out: |z W_O| of this head,
                attn_out: |all heads + b_O|, x_plus_attn: |x + attn_out|, resid_mid: |resid_mid|}
    heads       (mode "summary") [{layer, head, top_pos, top_token, top_weight, entropy_bits}],
                with max_entropy_bits = log2(number of visible keys) beside it
    next        {position, top: [{rank, id, token, prob}] the `top` most likely next tokens of
                softmax(h W_out + b) at the query position, actual: {id, token, prob, rank} of the
                token that follows in the text, or null for the last token}
"""

from __future__ import annotations

import argparse
import json
import math
import unicodedata

import torch

from ..i18n import check_lang

FORMAT, VERSION, N_COORDS = "qkv-explain", 1, 4

M = {  # message tables: {key: {"en": ..., "zh": ...}}
    "title_head": {"en": "Layer {layer}, head {head}: what token {pos} “{tok}” looks at ({n} tokens)",
                   "zh": "第 {layer} 层第 {head} 个头：第 {pos} 个词元「{tok}」在看哪里（共 {n} 个词元）"},
    "title_sum": {"en": "{scope}: what token {pos} “{tok}” looks at ({n} tokens)",
                  "zh": "{scope}：第 {pos} 个词元「{tok}」在看哪里（共 {n} 个词元）"},
    "scope_all": {"en": "Every layer and head", "zh": "所有层、所有头"},
    "scope_layer": {"en": "Every head of layer {layer}", "zh": "第 {layer} 层的每个头"},
    "scope_head": {"en": "Head {head} of every layer", "zh": "每一层的第 {head} 个头"},
    "step1": {"en": "Step 1. The query of “{tok}” is matched with the key of each token it can see: "
                    "s_j = q·k_j / √d_head (d_head = {d}, √d_head = {s:.3f}), then A = softmax(s).",
              "zh": "第一步：用「{tok}」的 query 与它能看到的每个词元的 key 做点积，s_j = q·k_j / √d_head"
                    "（d_head = {d}，√d_head = {s:.3f}），再取 A = softmax(s)。"},
    "step1_end": {"en": "The weights are ≥ 0 and add up to {sum:.6f}; “{tok}” gets the most.",
                  "zh": "这些权重都不小于 0，总和为 {sum:.6f}；「{tok}」得到的权重最大。"},
    "step2": {"en": "Step 2. The values are mixed with these weights: z = Σ_j A_j v_j. |z| = {norm:.4f}; "
                    "first coordinates {first} (of {d}); |z − Σ_j A_j v_j| ≤ {err:.1e}.",
              "zh": "第二步：按这些权重把各个 value 加起来，z = Σ_j A_j v_j。|z| = {norm:.4f}；"
                    "前几个坐标 {first}（共 {d} 维）；|z − Σ_j A_j v_j| ≤ {err:.1e}。"},
    "step2_tab": {"en": "The values that weigh most in z (A_j·|v_j| and its share of the total):",
                  "zh": "在 z 中分量最重的 value（A_j·|v_j| 及其在总和中的占比）："},
    "step3": {"en": "Step 3. What attention found is added to the residual stream: x_new = x + Σ_h z_h W_O[h] + b_O "
                    "(this head's part is z W_O).",
              "zh": "第三步：把注意力取回的信息加回残差流：x_new = x + Σ_h z_h W_O[h] + b_O"
                    "（本头贡献的是 z W_O）。"},
    "step3_post": {"en": "This is a post-norm block: resid_mid = LayerNorm(x + attn_out).",
                   "zh": "这是后归一化（post-norm）的块：resid_mid = LayerNorm(x + attn_out)。"},
    "r_x": {"en": "|x| (resid_pre, before attention)", "zh": "|x|（resid_pre，注意力之前）"},
    "r_head": {"en": "|z W_O| (this head)", "zh": "|z W_O|（本头）"},
    "r_attn": {"en": "|attn_out| (all heads + b_O)", "zh": "|attn_out|（所有头 + b_O）"},
    "r_sum": {"en": "|x + attn_out| (= resid_mid)", "zh": "|x + attn_out|（即 resid_mid）"},
    "r_sum_post": {"en": "|x + attn_out|", "zh": "|x + attn_out|"},
    "r_mid": {"en": "|resid_mid| = |LayerNorm(x + attn_out)|", "zh": "|resid_mid| = |LayerNorm(x + attn_out)|"},
    "next": {"en": "{step}After all {n} layers: P(next token) = softmax(h W_out + b) at position {pos}, the top {k}:",
             "zh": "{step}经过全部 {n} 层后，在第 {pos} 个位置上 P(下一个词元) = softmax(h W_out + b)，概率最高的 {k} 个："},
    "step4": {"en": "Step 4. ", "zh": "第四步："},
    "actual": {"en": "The token that actually follows is “{tok}”: probability {p}, rank {r}.",
               "zh": "文本中实际的下一个词元是「{tok}」：概率 {p}，排第 {r} 名。"},
    "sum_note": {"en": "Entropy of a row of A in bits: 0 = all weight on one token, {max:.3f} = spread evenly over the {n} visible tokens.",
                 "zh": "注意力行的熵（比特）：0 表示权重全在一个词元上，{max:.3f} 表示均匀分给可见的 {n} 个词元。"},
    "crop": {"en": "The text has {n} tokens, more than n_ctx = {ctx}: the first {drop} are dropped.",
             "zh": "文本有 {n} 个词元，超过 n_ctx = {ctx}：丢弃了开头的 {drop} 个。"},
    "space": {"en": "␣ is a space: spaces are tokens too, and the model attends to them like any other.",
              "zh": "␣ 表示空格：空格本身也是词元，模型像对待其他词元一样关注它。"},
    "largest": {"en": "◀ largest", "zh": "◀ 最大"},
    "c_pos": {"en": "pos", "zh": "位置"}, "c_tok": {"en": "token", "zh": "词元"},
    "c_weight": {"en": "weight A", "zh": "注意力权重 A"}, "c_share": {"en": "share", "zh": "占比"},
    "c_rank": {"en": "rank", "zh": "名次"}, "c_prob": {"en": "probability", "zh": "概率"},
    "c_qty": {"en": "quantity", "zh": "量"}, "c_norm": {"en": "norm", "zh": "范数"},
    "c_layer": {"en": "layer", "zh": "层"}, "c_head": {"en": "head", "zh": "头"},
    "c_most": {"en": "attends most to", "zh": "最关注的词元"},
    "c_ent": {"en": "entropy (bits)", "zh": "熵（比特）"},
}


def _m(key: str, lang: str, **kw) -> str:
    return M[key][lang].format(**kw)


def check_index(value, n: int, what: str, unit: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if not -n <= value < n:
        raise ValueError(f"{what} {value} is out of range: {unit} (use 0..{n - 1} or {-n}..-1)")
    return value % n


def _num(x: float) -> str:
    return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.4f}"


class Explanation:
    """The result of `explain`: one JSON-ready dict, shown as text, markdown or JSON."""

    def __init__(self, data: dict):
        self.data = data

    def to_json(self) -> dict:
        return self.data

    def to_text(self) -> str:
        return _render(_blocks(self.data), markdown=False)

    def to_markdown(self) -> str:
        return _render(_blocks(self.data), markdown=True)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __str__(self) -> str:
        return self.to_text()


@torch.no_grad()
def explain(model, tokenizer, text: str, layer: int | None = None, head: int | None = None,
            token: int | None = None, top: int = 5, lang: str = "en") -> Explanation:
    """Explain how the model processes `text` at one query token (see the module docstring)."""
    check_lang(lang)
    cfg = model.cfg
    if not isinstance(text, str) or not text:
        raise ValueError("the text is empty: give at least one token to explain")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an integer of at least 1, got {top!r}")
    if layer is not None:
        layer = check_index(layer, cfg.n_layers, "layer", f"the model has {cfg.n_layers} layers")
    if head is not None:
        head = check_index(head, cfg.n_heads, "head", f"each layer has {cfg.n_heads} heads")
    all_ids = tokenizer.encode(text)  # UnknownTokenError (a ValueError) names what is missing
    if not all_ids:
        raise ValueError("the text gives no tokens: give at least one token to explain")
    cropped = max(0, len(all_ids) - cfg.n_ctx)
    ids = all_ids[cropped:]
    T = len(ids)
    pos = check_index(T - 1 if token is None else token, T, "token", f"the text has {T} tokens")
    mode = "head" if layer is not None and head is not None else "summary"

    layers = [layer] if mode == "head" else ([layer] if layer is not None else list(range(cfg.n_layers)))
    wanted = {"probs"} | {f"blocks.{L}.attn.hook_pattern" for L in layers}
    if mode == "head":
        p, a = f"blocks.{layer}.", f"blocks.{layer}.attn."
        wanted |= {a + n for n in ("hook_dots", "hook_attn_scores", "hook_v", "hook_z", "hook_result")}
        wanted |= {p + n for n in ("hook_resid_pre", "hook_attn_out", "hook_resid_mid")}
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=wanted.__contains__)
    finally:
        model.train(was_training)

    shown = [tokenizer.display(i) for i in ids]
    n_vis = pos + 1 if cfg.causal else T  # the keys this query can see
    data = {"format": FORMAT, "version": VERSION, "kind": "explain", "lang": lang, "mode": mode,
            "text": text, "cropped": cropped, "tokens": shown, "ids": [int(i) for i in ids],
            "token": pos, "query": shown[pos], "layer": layer, "head": head,
            "model": {k: getattr(cfg, k) for k in ("n_layers", "n_heads", "d_model", "d_head", "n_ctx", "norm", "pos", "causal")}}
    if mode == "head":
        data.update(_head_detail(tr, cfg, layer, head, pos, n_vis, shown, top))
    else:
        data["heads"], data["max_entropy_bits"] = _summary(tr, layers, head, pos, n_vis, shown), math.log2(n_vis)

    probs = tr["probs"][0, pos]  # (d_vocab,): softmax(h W_out + b) at the query position
    k = min(top, probs.shape[0])
    values, indices = torch.topk(probs, k)
    top_rows = [{"rank": r + 1, "id": i, "token": tokenizer.display(i), "prob": p}
                for r, (p, i) in enumerate(zip(values.tolist(), indices.tolist()))]
    actual = None
    if pos + cropped + 1 < len(all_ids):
        nxt = all_ids[pos + cropped + 1]
        actual = {"id": nxt, "token": tokenizer.display(nxt), "prob": probs[nxt].item(),
                  "rank": int((probs > probs[nxt]).sum().item()) + 1}
    data["next"] = {"position": pos, "top": top_rows, "actual": actual}
    return Explanation(data)


def _head_detail(tr, cfg, L, H, pos, n_vis, shown, top) -> dict:
    dots = tr["dots", L][0, H, pos, :n_vis]  # (n_vis,) raw q·k
    scaled = tr["attn_scores", L][0, H, pos, :n_vis]  # q·k / √d_head
    weight = tr["pattern", L][0, H, pos, :n_vis]  # A
    rows = [{"pos": j, "token": shown[j], "dot": d, "scaled": s, "weight": w}
            for j, (d, s, w) in enumerate(zip(dots.tolist(), scaled.tolist(), weight.tolist()))]
    v = tr["v", L][0, :n_vis, H]  # (n_vis, d_head)
    z = tr["z", L][0, pos, H]  # (d_head,)
    v_norm = v.norm(dim=-1)
    contrib = weight * v_norm  # A_j |v_j|
    share = contrib / contrib.sum().clamp_min(1e-30)
    order = torch.argsort(contrib, descending=True)[:top].tolist()
    vn, cl, sh, wl = v_norm.tolist(), contrib.tolist(), share.tolist(), weight.tolist()
    values = [{"pos": j, "token": shown[j], "weight": wl[j], "v_norm": vn[j], "contribution": cl[j], "share": sh[j]}
              for j in order]
    x, attn_out = tr["resid_pre", L][0, pos], tr["attn_out", L][0, pos]
    residual = {"norm": cfg.norm, "x": x.norm().item(), "head_out": tr["result", L][0, pos, H].norm().item(),
                "attn_out": attn_out.norm().item(), "x_plus_attn": (x + attn_out).norm().item(),
                "resid_mid": tr["resid_mid", L][0, pos].norm().item()}
    return {"attention": {"scale": math.sqrt(cfg.d_head), "argmax": int(weight.argmax().item()),
                          "weight_sum": weight.sum().item(), "rows": rows},
            "z": {"norm": z.norm().item(), "first": z[:N_COORDS].tolist(), "d_head": cfg.d_head,
                  "check": (z - weight @ v).abs().max().item(), "values": values},
            "residual": residual}


def _summary(tr, layers, head, pos, n_vis, shown) -> list[dict]:
    A = torch.stack([tr["pattern", L][0, :, pos, :n_vis] for L in layers])  # (n_layers, n_heads, n_vis)
    A = A.double()
    entropy = -(A * torch.where(A > 0, A.log2(), torch.zeros_like(A))).sum(-1)  # bits, 0·log 0 = 0
    w, j = A.max(-1)
    out = []
    for li, L in enumerate(layers):
        for h in [head] if head is not None else range(A.shape[1]):
            jj = int(j[li, h])
            out.append({"layer": L, "head": h, "top_pos": jj, "top_token": shown[jj],
                        "top_weight": float(w[li, h]), "entropy_bits": float(entropy[li, h])})
    return out


# ---- rendering: a list of blocks ("p", line) | ("table", headers, rows, right-aligned columns)

def _blocks(d: dict) -> list:
    lang, pos, q = d["lang"], d["token"], d["query"]
    n, b = len(d["tokens"]), []
    if d["mode"] == "head":
        b.append(("title", _m("title_head", lang, layer=d["layer"], head=d["head"], pos=pos, tok=q, n=n)))
    else:
        key, kw = ("scope_all", {}) if d["layer"] is None and d["head"] is None else \
            ("scope_layer", {"layer": d["layer"]}) if d["layer"] is not None else ("scope_head", {"head": d["head"]})
        b.append(("title", _m("title_sum", lang, scope=_m(key, lang, **kw), pos=pos, tok=q, n=n)))
    if d["cropped"]:
        b.append(("p", _m("crop", lang, n=n + d["cropped"], ctx=d["model"]["n_ctx"], drop=d["cropped"])))
    if any("␣" in t for t in d["tokens"]):
        b.append(("p", _m("space", lang)))
    if d["mode"] == "head":
        att, z, r = d["attention"], d["z"], d["residual"]
        b.append(("p", _m("step1", lang, tok=q, d=d["model"]["d_head"], s=att["scale"])))
        rows = [[str(x["pos"]), x["token"], f"{x['dot']:.4f}", f"{x['scaled']:.4f}", f"{x['weight']:.4f}",
                 _m("largest", lang) if x["pos"] == att["argmax"] else ""] for x in att["rows"]]
        b.append(("table", [_m("c_pos", lang), _m("c_tok", lang), "q·k", "q·k/√d_head", _m("c_weight", lang), ""],
                  rows, {0, 2, 3, 4}))
        b.append(("p", _m("step1_end", lang, sum=att["weight_sum"], tok=att["rows"][att["argmax"]]["token"])))
        first = "[" + ", ".join(f"{c:.3f}" for c in z["first"]) + (", …]" if z["d_head"] > len(z["first"]) else "]")
        b.append(("p", _m("step2", lang, norm=z["norm"], first=first, d=z["d_head"], err=z["check"])))
        b.append(("p", _m("step2_tab", lang)))
        rows = [[str(x["pos"]), x["token"], f"{x['weight']:.4f}", f"{x['v_norm']:.4f}", f"{x['contribution']:.4f}",
                 f"{100 * x['share']:.1f}%"] for x in z["values"]]
        b.append(("table", [_m("c_pos", lang), _m("c_tok", lang), "A_j", "|v_j|", "A_j·|v_j|", _m("c_share", lang)],
                  rows, {0, 2, 3, 4, 5}))
        b.append(("p", _m("step3", lang)))
        pre = r["norm"] == "pre"
        rows = [[_m("r_x", lang), f"{r['x']:.4f}"], [_m("r_head", lang), f"{r['head_out']:.4f}"],
                [_m("r_attn", lang), f"{r['attn_out']:.4f}"],
                [_m("r_sum" if pre else "r_sum_post", lang), f"{r['x_plus_attn']:.4f}"]]
        if not pre:
            b.append(("p", _m("step3_post", lang)))
            rows.append([_m("r_mid", lang), f"{r['resid_mid']:.4f}"])
        b.append(("table", [_m("c_qty", lang), _m("c_norm", lang)], rows, {1}))
    else:
        rows = [[str(h["layer"]), str(h["head"]), f"{h['top_pos']} {h['top_token']}", f"{h['top_weight']:.4f}",
                 f"{h['entropy_bits']:.3f}"] for h in d["heads"]]
        b.append(("table", [_m(c, lang) for c in ("c_layer", "c_head", "c_most", "c_weight", "c_ent")], rows, {0, 1, 3, 4}))
        vis = len(d["tokens"]) if not d["model"]["causal"] else pos + 1
        b.append(("p", _m("sum_note", lang, max=d["max_entropy_bits"], n=vis)))
    nx = d["next"]
    b.append(("p", _m("next", lang, step=_m("step4", lang) if d["mode"] == "head" else "", n=d["model"]["n_layers"],
                      pos=pos, k=len(nx["top"]))))
    b.append(("table", [_m("c_rank", lang), _m("c_tok", lang), _m("c_prob", lang)],
              [[str(t["rank"]), t["token"], _num(t["prob"])] for t in nx["top"]], {0, 2}))
    if nx["actual"]:
        a = nx["actual"]
        b.append(("p", _m("actual", lang, tok=a["token"], p=_num(a["prob"]), r=a["rank"])))
    return b


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def _md_escape(s: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in s)


def _render(blocks: list, markdown: bool) -> str:
    out = []
    for block in blocks:
        if block[0] == "title":
            out += [("### " + _md_escape(block[1])) if markdown else block[1], ""]
        elif block[0] == "p":
            out += [_md_escape(block[1]) if markdown else block[1], ""]
        else:
            _, head, rows, right = block
            if markdown:
                out.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
                out.append("|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|")
                out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
            else:
                widths = [max(_width(x) for x in col) for col in zip(head, *rows)]
                pad = lambda s, i: (" " * (widths[i] - _width(s)) + s) if i in right else s + " " * (widths[i] - _width(s))
                out += ["  " + "  ".join(pad(c, i) for i, c in enumerate(row)).rstrip() for row in [head, *rows]]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# ---- command-line glue (wired into qkv.cli by the lead)

def add_explain_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("explain", help="explain what a token attends to and what the model predicts next")
    p.add_argument("text", metavar="TEXT", help="the text to run through the model")
    p.add_argument("--ckpt", metavar="DIR", help="checkpoint directory (default: the bundled model)")
    p.add_argument("--layer", type=int, help="layer to follow (with --head: one head step by step)")
    p.add_argument("--head", type=int, help="head to follow")
    p.add_argument("--token", type=int, help="query token index (default: the last; negative counts from the end)")
    p.add_argument("--top", type=int, default=5, metavar="N", help="rows in the ranked tables (default 5)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p.add_argument("--html", metavar="FILE", help="write the explorer page for TEXT as one self-contained HTML file "
                                                  "(opens from disk, offline; on --layer/--head/--token if given)")
    return p


def run_explain(args) -> None:
    from ..checkpoint import load
    from ..lessons.base import default_ckpt

    model, tokenizer = load(args.ckpt or default_ckpt())
    if args.html:
        from ..web.export import export_html

        path = export_html(model, tokenizer, args.text, args.html, name=str(args.ckpt or "bundled"),
                           layer=args.layer, head=args.head, token=args.token)
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB): open it in a browser, no server needed")
        return
    ex = explain(model, tokenizer, args.text, layer=args.layer, head=args.head, token=args.token,
                 top=args.top, lang=args.lang)
    if args.format == "json":
        print(json.dumps(ex.to_json(), ensure_ascii=False, indent=2))
    else:
        print(ex.to_markdown() if args.format == "markdown" else ex.to_text(), end="")

"""The parts of an explanation that a GPT's and a translation model's share: one head's steps for one
query (the weights, the mix of the values, the residual update) and the next-token table, as
text.render blocks. `say` looks up the messages (area "explain", or one that overrides some of them).
"""

from __future__ import annotations

from qkv.presentation.byte_tokens import byte_notes


def num(x: float) -> str:
    """A probability: four decimals, or scientific notation when it is tiny."""
    return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.4f}"


def gemma_steps(att: dict, said, d_head: int) -> list:
    """What else made the scores (Gemma), said by `said` (area "gemma"; None: nothing): the sliding window that
    hides the keys before `first`, the soft-cap s_j = cap·tanh(q·k_j / scale / cap) (the q·k/√d_head column
    holds s_j, capped)."""
    out: list = []
    if said is None:
        return out
    if abs(att["scale"] - d_head**0.5) > 1e-9 * att["scale"]:  # Gemma: sqrt(query_pre_attn_scalar)
        out.append(("p", said("explain_scale", s=f"{att['scale']:.4g}", d=d_head)))
    if "first" in att:
        out.append(("p", said("explain_window", first=att["first"])))
    if "soft_cap" in att:
        out.append(("p", said("explain_soft_cap", cap=att["soft_cap"], s=f"{att['scale']:.4g}")))
    return out


def head_steps(d: dict, say, after_values: list = (), gemma=None) -> list:
    """Steps 1–3 for one head: the weights, the mix of the values (then the blocks `after_values`),
    the residual stream; `gemma` says a sliding window's and a soft-cap's part in step 1 (area "gemma")."""
    att, z, r = d["attention"], d["z"], d["residual"]
    out = [("p", say("step1", tok=d["query"], d=d["model"]["d_head"], s=att["scale"]))]
    rows = [
        [
            str(x["pos"]),
            x["token"],
            f"{x['dot']:.4f}",
            f"{x['scaled']:.4f}",
            f"{x['weight']:.4f}",
            say("largest") if x["pos"] == att["argmax"] else "",
        ]
        for x in att["rows"]
    ]
    out.append(("table", [say("c_pos"), say("c_tok"), "q·k", "q·k/√d_head", say("c_weight"), ""], rows, {0, 2, 3, 4}))
    top_row = next(x for x in att["rows"] if x["pos"] == att["argmax"])
    out.append(("p", say("step1_end", sum=att["weight_sum"], tok=top_row["token"])))
    out += gemma_steps(att, gemma, d["model"]["d_head"])
    first = "[" + ", ".join(f"{c:.3f}" for c in z["first"]) + (", …]" if z["d_head"] > len(z["first"]) else "]")
    out.append(("p", say("step2", norm=z["norm"], first=first, d=z["d_head"], err=z["check"])))
    out.append(("p", say("step2_tab")))
    rows = [
        [
            str(x["pos"]),
            x["token"],
            f"{x['weight']:.4f}",
            f"{x['v_norm']:.4f}",
            f"{x['contribution']:.4f}",
            f"{100 * x['share']:.1f}%",
        ]
        for x in z["values"]
    ]
    out.append(
        ("table", [say("c_pos"), say("c_tok"), "A_j", "|v_j|", "A_j·|v_j|", say("c_share")], rows, {0, 2, 3, 4, 5})
    )
    out += after_values
    out.append(("p", say("step3")))
    pre = r["norm"] != "post"  # resid_mid is the plain sum x + attn_out (pre-norm, RMSNorm, no norm)
    parallel = d["model"].get("parallel_attn_mlp", False)  # GPT-NeoX: no resid_mid, x + attn_out is not one
    rows = [
        [say("r_x"), f"{r['x']:.4f}"],
        [say("r_head"), f"{r['head_out']:.4f}"],
        [say("r_attn"), f"{r['attn_out']:.4f}"],
        [say("r_sum" if pre and not parallel else "r_sum_post"), f"{r['x_plus_attn']:.4f}"],
    ]
    if not pre:
        out.append(("p", say("step3_post")))
        rows.append([say("r_mid"), f"{r['resid_mid']:.4f}"])
    out.append(("table", [say("c_qty"), say("c_norm")], rows, {1}))
    return out


def next_token(d: dict, say, lang: str | None = None) -> list:
    """The model's top next tokens at the query's position, and the one that actually follows; for a
    model without LM head (an encoder), one line that says why there are none. With `lang`, a byte
    token among them is shown as what it is, with a line on why (byte_tokens.py)."""
    nx = d["next"]
    if nx is None:
        return [("p", say("no_next"))]
    shown, why = byte_notes([x["token"] for x in nx["top"]], lang) if lang else ([x["token"] for x in nx["top"]], None)
    step = say("step4") if d.get("mode") != "summary" else ""  # a translation's explanation follows one head
    logits = "h W_out + b" if d["model"].get("unembed_bias", True) else "h W_out"  # GPT-2, Llama: no b
    out = [
        ("p", say("next", step=step, n=d["model"]["n_layers"], pos=d["token"], k=len(nx["top"]), logits=logits)),
        (
            "table",
            [say("c_rank"), say("c_tok"), say("c_prob")],
            [[str(x["rank"]), tok, num(x["prob"])] for x, tok in zip(nx["top"], shown)],
            {0, 2},
        ),
    ]
    if why:
        out.append(("p", why))
    if nx["actual"]:
        a = nx["actual"]
        out.append(("p", say("actual", tok=a["token"], p=num(a["prob"]), r=a["rank"])))
    return out

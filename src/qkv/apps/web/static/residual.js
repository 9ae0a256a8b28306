// The residual update at the chosen layer and token: x, each part added to it, and their norms.

import { S, at2, at3 } from "./state.js";
import { $, fmt } from "./util.js";
import { t } from "./i18n.js";

const RESID_ROWS = [
  ["x", "x", "x_norm"], ["head_out", "|z<sub>h</sub>W<sub>O</sub>[h]|", "head_out_norm"],
  ["attn_out", "attn_out", "attn_out_norm"], ["x_plus_attn", "x + attn_out", "x_plus_attn_norm"],
  ["resid_mid", "resid_mid", "resid_mid_norm"], ["mlp_out", "mlp_out", "mlp_out_norm"],
  ["resid_post", "resid_post", "resid_post_norm"],
];

/** The message that describes a residual row: a translation model's decoder reads another stream
 *  before cross-attention (resid_mid) and hands another to its MLP (resid_mid_cross). */
function residDesc(field, post) {
  if (S.tr && S.part === "cross" && (field === "x" || field === "resid_mid")) return `r_${field}_cross`;
  if (S.tr && S.part === "decoder" && field === "resid_mid") return "r_resid_mid_dec";
  return field === "resid_mid" && post ? "r_resid_mid_post" : "r_" + field;
}

export function renderResidual() {
  const { layer: l, head: h, token: i } = S, A = S.A, model = S.doc.model;
  const value = (arr) => (arr === "head_out_norm" ? A[arr][at3(l, h, i)] : A[arr][at2(l, i)]);
  // a decoder block puts cross-attention between its self-attention's resid_mid and its MLP: those rows would not add up
  // a parallel block (GPT-NeoX) has no resid_mid: attention and the MLP both read x, one sum adds both
  const rows = S.tr && S.part === "decoder" ? RESID_ROWS.slice(0, 5)
    : model.parallel_attn_mlp ? RESID_ROWS.filter((r) => r[0] !== "resid_mid") : RESID_ROWS;
  const vals = rows.map((r) => value(r[2]));
  const max = Math.max(...vals, 1e-12);
  const post = model.norm === "post";
  let html = '<div class="rrows">';
  rows.forEach(([field, label], n) => {
    const desc = t(residDesc(field, post), { h });
    html += `<div class="rrow" data-row="${field}"><span class="rlabel">${label}</span><span class="rdesc">${desc}</span>` +
      `<span class="rval" data-field="${field}" data-value="${vals[n]}"><span class="rbar" style="width:${(100 * vals[n] / max).toFixed(1)}%"></span>` +
      `<span class="num">${fmt(vals[n])}</span></span></div>`;
  });
  const cos = A.update_cos[at2(l, i)];
  const hint = t(Math.abs(cos) < 0.2 ? "cos_orth" : cos > 0 ? "cos_along" : "cos_against");
  const rule = model.residual === false ? "res_off" : post ? "res_post" : model.parallel_attn_mlp ? "res_parallel"
    : model.norm === "none" ? "res_none" : "res_pre";
  html += `</div><p class="cos">${t("cos_line", { cos: `<span id="update-cos" class="num">${fmt(cos)}</span>`, hint })}</p>` +
    `<p class="caption">${(S.tr && S.part === "cross" ? t("res_cross") + " " : "") + t(rule, { norm: model.norm === "rms" ? "RMSNorm" : "LayerNorm" })}` +
    `${S.tr && S.part === "decoder" ? " " + t("res_dec") : ""}</p>`;
  $("#residual-title").textContent = t("residual_title", { tok: S.P.q[i], l });
  $("#residual").innerHTML = html;
}

// Step by step: s_j, exp, softmax, a_j v_j and z for the chosen query, as a derivation and a table.

import { S, at3, at4, atK, visibleKeys } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { t } from "./i18n.js";

export function renderSteps() {
  const { layer: l, head: h, token: i, T, k } = S, A = S.A, doc = S.doc;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  // numbers straight from the arrays; e_j = exp(s_j − m) computed here in double precision
  const s = vis.map((j) => A.scores[o4 + j]);
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const sum = e.reduce((x, y) => x + y, 0);
  const a = vis.map((j) => A.pattern[o4 + j]);
  const vn = vis.map((j) => A.v_norm[atK(l, h, j)]);
  let top = 0;
  a.forEach((x, n) => { if (x > a[top]) top = n; });
  const zsum = new Float64Array(k);  // Σ_j a_j v_first_j, shown in the table's last row

  let rows = "";
  vis.forEach((j, n) => {
    const vf = atK(l, h, j) * k, av = [];
    for (let c = 0; c < k; c++) { const x = a[n] * A.v_first[vf + c]; av.push(fmt(x)); zsum[c] += x; }
    rows += `<tr data-key="${j}"${j === i && S.P.self ? ' class="self"' : ""}${n === top ? ' data-top="1"' : ""}>` +
      `<td data-field="pos">${j}</td><td data-field="token">${esc(S.P.k[j])}</td>` +
      `<td data-field="dot">${fmt(A.dots[o4 + j])}</td><td data-field="scaled">${fmt(s[n])}</td>` +
      `<td data-field="shifted">${fmt(s[n] - m)}</td><td data-field="exp">${fmt(e[n])}</td>` +
      `<td data-field="weight" style="--w:${(a[n] * 100).toFixed(1)}%">${fmt(a[n])}</td>` +
      `<td data-field="v_norm">${fmt(vn[n])}</td><td data-field="contribution">${fmt(a[n] * vn[n])}</td>` +
      `<td data-field="av">${av.join(", ")}</td></tr>`;
  });
  const bound = a.reduce((acc, x, n) => acc + x * vn[n], 0);
  const total = a.reduce((x, y) => x + y, 0);
  const zo = at3(l, h, i);
  const zfirst = Array.from(A.z_first.subarray(zo * k, zo * k + k), fmt).join(", ");
  const jt = vis[top];

  const st = { dh: doc.model.d_head, scale: fmt(doc.scale), tok: esc(S.P.k[jt]), dot: fmt(A.dots[o4 + jt]),
    s: fmt(s[top]), m: fmt(m), e: fmt(e[top]), shift: shiftText(s[top], m), sum: fmt(sum), a: fmt(a[top]), n: vis.length, total: fmt(total),
    k, bound: fmt(bound), more: k < doc.model.d_head ? ", …" : "",
    zfirst: `<span id="z-first" class="num">${zfirst}</span>`,
    znorm: `<span id="z-norm" class="num">${fmt(A.z_norm[zo])}</span>` };
  const th = (key, tt, col) => `<th${tt ? ` title="${esc(t(tt))}"` : ""}${col ? ` data-col="${col}"` : ""}>${t(key, { k })}</th>`;
  const masked = vis.length < S.Tk || S.P.causal;
  const maskNote = S.tr && S.part === "cross" ? "mask_cross" : masked ? "mask_causal" : "mask_none";

  $("#steps-title").textContent = S.tr ? t("steps_title_tr", { i, tok: S.P.q[i], part: t("part_" + S.part), l, h })
    : t("steps_title", { i, tok: doc.tokens[i], l, h });
  $("#steps").innerHTML =
    `<ol class="deriv"><li>${t("step1", st)}</li><li>${t("step2", st)}</li><li>${t("step3", st)}</li>` +
    `<li>${t("step4", st)}</li><li>${t("step5", st)}</li></ol>` +
    `<p class="caption">${t(maskNote, { i, T: S.Tk })}</p>` +
    `<div class="table-wrap"><table class="steps-table"><thead><tr><th>j</th>${th("th_token")}` +
    `${th("th_dot", "tt_dot", "dot")}${th("th_scaled", "tt_scaled")}${th("th_shifted", "", "shifted")}${th("th_exp")}` +
    `${th("th_weight", "tt_weight", "weight")}${th("th_vnorm", "", "v_norm")}${th("th_contrib", "tt_contrib")}${th("th_av", "", "av")}</tr></thead>` +
    `<tbody>${rows}</tbody><tfoot><tr><td>Σ</td><td></td><td data-col="dot"></td><td></td><td data-col="shifted"></td><td>${fmt(sum)}</td>` +
    `<td>${fmt(total)}</td><td data-col="v_norm"></td><td>${fmt(bound)}</td><td data-col="av">${Array.from(zsum, fmt).join(", ")}</td></tr></tfoot>` +
    `</table></div>`;
}

/** s − m as the page writes it: "s − m", or "s + |m|" when m < 0 (never "− −4.97"). */
export function shiftText(x, m) {
  return m < 0 ? `${fmt(x)} + ${fmt(-m)}` : `${fmt(x)} − ${fmt(m)}`;
}

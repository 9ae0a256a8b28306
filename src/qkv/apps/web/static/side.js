// side panel (registered in panels.js): two sentences side by side (我打了你 / 你打了我 for the bundled
// model; /api/model offers the pair, S.side, in words the model's vocabulary holds). Each is read by
// api/view (the same document the main panels use), so both attention patterns are at hand for every
// layer and head: the panel draws the page's layer and head (S.layer, S.head) for A and for B, and,
// when the two have the same number of tokens, A − B cell by cell on a diverging scale. Under each
// pattern: the next-token bars after the sentence's last token (the view's next_ids / next_probs), and
// under the difference api/side's union of the two top-10 lists with both probabilities (a token in one
// list still has a probability in the other sentence). The static export has no server: a note.

import { S } from "./state.js";
import { $, clamp, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { announce } from "./announce.js";
import { api, busy } from "./api.js";
import { decode } from "./decode.js";
import { FONT, MASKED, RAMP, columnLabel, fit, sizeCanvas } from "./paint.js";
import { showTip } from "./tip.js";
import { formKeep, register } from "./panels.js";

Object.assign(I18N.en, {
  side_title: "Two sentences side by side",
  side_a: "Sentence A", side_b: "Sentence B", side_run: "Compare",
  side_head: "Layer {l}, head {h} (the page's choice above)",
  side_pattern: "{s}: attention pattern",
  side_diff: "A − B",
  side_diff_none: "A has {ta} tokens and B {tb}: the two patterns have different shapes, so there is no cell-by-cell difference. Type two sentences of the same length (the same words in another order, say).",
  side_same_tokens: "Same tokens, another order: every difference below comes from word order alone.",
  side_same_length: "Same number of tokens, different tokens: row i compares token i of A with token i of B.",
  side_next: "Next token after “{tok}”",
  side_next_diff: "Next token: p(A) − p(B)",
  side_th_tok: "token", side_th_pa: "p after A", side_th_pb: "p after B", side_th_diff: "A − B",
  side_no_next: "This model is an encoder: it predicts no next token.",
  side_caption: "Both patterns are the model's own weights A<sub>ij</sub> = softmax<sub>j</sub>(q<sub>i</sub>·k<sub>j</sub>/√d<sub>head</sub>) for each sentence read alone; choose the layer and head above. " +
    "The table lists every token in either sentence's top 10, with its probability after A and after B.",
  side_scale: "The difference is red where A gives a key more weight than B, blue where less; the colour scale runs to ±{m}, the largest difference of this head.",
  side_loading: "Reading both sentences…",
  side_static: "Two sentences side by side need the model: run <code>qkv serve</code> to compare them.",
  side_tr: "A translation model is shown across its two sentences above; this panel is for a model that reads one text.",
  side_tip: "row {i} “{qa}” / “{qb}”, key {j} “{ka}” / “{kb}”: A {a}, B {b}, A − B {d}",
  side_tip_one: "row {i} “{q}”, key {j} “{k}”: weight {a}",
});
Object.assign(I18N.zh, {
  side_title: "两个句子并排比较",
  side_a: "句子 A", side_b: "句子 B", side_run: "比较",
  side_head: "层 {l}，头 {h}（上方选定的层和头）",
  side_pattern: "{s}：注意力权重",
  side_diff: "A − B",
  side_diff_none: "A 有 {ta} 个词元，B 有 {tb} 个：两个注意力矩阵形状不同，无法逐格相减。请输入长度相同的两个句子（例如同样的词换个顺序）。",
  side_same_tokens: "词元相同，只是顺序不同：下面的每一处差别都只来自词序。",
  side_same_length: "词元个数相同、词元不同：行 i 比较的是 A 和 B 在同一位置 i 上的词元。",
  side_next: "「{tok}」之后的下一个词元",
  side_next_diff: "下一个词元：p(A) − p(B)",
  side_th_tok: "词元", side_th_pa: "A 之后的 p", side_th_pb: "B 之后的 p", side_th_diff: "A − B",
  side_no_next: "这个模型是编码器，不预测下一个词元。",
  side_caption: "两个矩阵都是模型自己的权重 A<sub>ij</sub> = softmax<sub>j</sub>(q<sub>i</sub>·k<sub>j</sub>/√d<sub>head</sub>)，每个句子单独读入；层和头在上方选择。" +
    "表格列出两个句子各自前 10 名中的所有词元，以及它们在 A 之后和 B 之后的概率。",
  side_scale: "差值图中，红色表示 A 给这个键的权重比 B 大，蓝色表示比 B 小；颜色刻度到 ±{m}，即这个头最大的差值。",
  side_loading: "正在读入两个句子……",
  side_static: "两个句子的并排比较需要模型：运行 <code>qkv serve</code> 才能比较。",
  side_tr: "翻译模型已在上方跨两个句子展示；这个面板用于只读一段文本的模型。",
  side_tip: "行 {i}「{qa}」/「{qb}」，键 {j}「{ka}」/「{kb}」：A {a}，B {b}，A − B {d}",
  side_tip_one: "行 {i}「{q}」，键 {j}「{k}」：权重 {a}",
});

const SIDE = { a: null, b: null, pa: null, pb: null, next: null, req: 0, drawn: "", started: false, cells: {} };

function sideBuild() {
  $("#side").innerHTML =
    `<h2 data-i18n="side_title">${t("side_title")}</h2>` +
    '<div class="side-form">' +
    `<label><span data-i18n="side_a">${t("side_a")}</span><input id="side-a" type="text" spellcheck="false"></label>` +
    `<label><span data-i18n="side_b">${t("side_b")}</span><input id="side-b" type="text" spellcheck="false"></label>` +
    `<button id="side-run" type="button" class="primary" data-i18n="side_run">${t("side_run")}</button></div>` +
    '<p id="side-error" class="error" role="alert" hidden></p><p id="side-note" class="note" hidden></p>' +
    '<div id="side-result" data-ready="0"></div>';
  $("#side-run").addEventListener("click", sideRun);
  for (const id of ["#side-a", "#side-b"]) {
    $(id).addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); sideRun(); } });
  }
  $("#side-result").addEventListener("mousemove", sideHover);
  $("#side-result").addEventListener("mouseleave", (e) => showTip(e, null));
}

function sideError(msg) {
  const el = $("#side-error");
  el.textContent = msg || "";
  el.hidden = !msg;
}

/** Read both sentences (two views and the next-token union), then draw. Only the newest answer is drawn. */
async function sideRun() {
  const a = $("#side-a").value, b = $("#side-b").value, req = ++SIDE.req;
  SIDE.started = true;
  sideError("");
  $("#side-result").innerHTML = `<p class="caption">${t("side_loading")}</p>`;
  busy(true);
  try {
    const [va, vb, nx] = await Promise.all([api("api/view", { text: a }), api("api/view", { text: b }), api("api/side", { a, b })]);
    if (req !== SIDE.req) return;
    SIDE.a = va; SIDE.b = vb; SIDE.next = nx.next;
    SIDE.pa = decode(va.arrays.pattern); SIDE.pb = decode(vb.arrays.pattern);
    SIDE.drawn = "";
    sideDraw();
  } catch (e) {
    if (req === SIDE.req) { $("#side-result").innerHTML = ""; sideError(e.message); }
  } finally {
    busy(false);
  }
}

/** The pattern of view `doc` (decoded `P`) at the page's layer and head: T×T values, row-major. */
function sideSlice(doc, P, l, h) {
  const T = doc.ids.length, H = doc.model.n_heads, off = (l * H + h) * T * T;
  return P.subarray(off, off + T * T);
}

/** A T×T heatmap on `cv`: colour(i, j) -> [r, g, b] or null (masked); values written when cells are big. */
function sideHeat(cv, T, rows, cols, colour, value) {
  const wrap = cv.parentElement, avail = Math.min(400, wrap.clientWidth || 300);
  const ctx0 = cv.getContext("2d");
  ctx0.font = `12px ${FONT}`;
  const lw = Math.min(90, Math.max(14, ...rows.concat(cols).map((s) => ctx0.measureText(s).width))) + 8;
  const cell = clamp(Math.floor((avail - lw - 4) / T), 4, 40), top = lw;
  const ctx = sizeCanvas(cv, lw + cell * T + 4, top + cell * T + 4);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    const c = colour(i, j);
    ctx.fillStyle = c ? `rgb(${c[0]},${c[1]},${c[2]})` : `rgb(${MASKED.join(",")})`;
    ctx.fillRect(lw + j * cell, top + i * cell, cell, cell);
    if (c && cell >= 28) {
      const v = value(i, j);
      ctx.fillStyle = (c[0] + c[1] + c[2]) < 380 ? "#fff" : "#334";
      ctx.font = `${Math.min(10, cell / 3.3)}px ${FONT}`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
      ctx.fillText(Math.abs(v) < 0.005 ? "0.00" : v.toFixed(2), lw + (j + 0.5) * cell, top + (i + 0.5) * cell);
    }
  }
  ctx.font = `11px ${FONT}`; ctx.fillStyle = "#445";
  for (let i = 0; i < T; i++) {
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    ctx.fillText(fit(ctx, rows[i], lw - 8), lw - 4, top + (i + 0.5) * cell);
    columnLabel(ctx, fit(ctx, cols[i], lw - 8), lw + (i + 0.5) * cell, top - 4, 11);
  }
  SIDE.cells[cv.id] = { x0: lw, y0: top, cell, T };
}

const sideBlue = (x) => { const r = Math.round(clamp(x, 0, 1) * 255) * 3; return [RAMP[r], RAMP[r + 1], RAMP[r + 2]]; };
/** Diverging colour: white at 0, red towards +1, blue towards −1 (x already divided by the scale). */
function sideDiverge(x) {
  const f = Math.min(1, Math.abs(x)), end = x >= 0 ? [185, 28, 28] : [29, 78, 216];
  return [0, 1, 2].map((c) => Math.round(250 + (end[c] - 250) * f));
}

/** The next-token bars after the last token of view `doc` (as the main next panel reads next_ids / next_probs). */
function sideBars(doc) {
  if (!doc.arrays.next_probs) return `<p class="caption">${t("side_no_next")}</p>`;
  const ids = decode(doc.arrays.next_ids), probs = decode(doc.arrays.next_probs), T = doc.ids.length, K = probs.length / T;
  const i = T - 1, pmax = Math.max(probs[i * K], 1e-12);
  let html = `<h3>${t("side_next", { tok: esc(doc.tokens[i]) })}</h3><div class="bars">`;
  for (let r = 0; r < K; r++) {
    const id = ids[i * K + r], p = probs[i * K + r], tok = doc.vocab[String(id)] ?? `#${id}`;
    html += `<div class="bar" data-rank="${r + 1}" data-id="${id}" data-prob="${p}"><span class="rank">${r + 1}</span>` +
      `<span class="tok">${esc(tok)}</span><span class="track"><span class="fill" style="width:${(100 * p / pmax).toFixed(1)}%"></span></span>` +
      `<span class="prob num">${fmt(p)}</span></div>`;
  }
  return html + "</div>";
}

/** The union of both top lists: p after A, p after B, and the difference as a bar either side of 0. */
function sideNextTable() {
  if (!SIDE.next) return `<p class="caption">${t("side_no_next")}</p>`;
  const m = Math.max(1e-12, ...SIDE.next.map((r) => Math.abs(r.diff)));
  let html = `<h3>${t("side_next_diff")}</h3><table class="side-next"><thead><tr><th>${t("side_th_tok")}</th>` +
    `<th>${t("side_th_pa")}</th><th>${t("side_th_pb")}</th><th>${t("side_th_diff")}</th></tr></thead><tbody>`;
  for (const r of SIDE.next) {
    const w = (50 * Math.abs(r.diff) / m).toFixed(1);
    html += `<tr data-id="${r.id}"><td class="tok">${esc(r.token)}</td><td class="num" data-field="p_a">${fmt(r.p_a)}</td>` +
      `<td class="num" data-field="p_b">${fmt(r.p_b)}</td><td class="sdiff" data-field="diff"><span class="sdbar ${r.diff >= 0 ? "pos" : "neg"}" ` +
      `style="width:${w}%"></span><span class="num">${fmt(r.diff)}</span></td></tr>`;
  }
  return html + "</tbody></table>";
}

/** Draw everything for the page's layer and head (cheap: two or three small canvases and two lists). */
function sideDraw() {
  const A = SIDE.a, B = SIDE.b;
  if (!A || !B) return;
  const l = clamp(S.layer, 0, A.model.n_layers - 1), h = clamp(S.head, 0, A.model.n_heads - 1);
  const Ta = A.ids.length, Tb = B.ids.length, same = Ta === Tb;
  const xa = sideSlice(A, SIDE.pa, l, h), xb = sideSlice(B, SIDE.pb, l, h), causal = A.model.causal;
  let diff = null, m = 0;
  if (same) {
    diff = new Float32Array(Ta * Ta);
    for (let c = 0; c < diff.length; c++) { diff[c] = xa[c] - xb[c]; m = Math.max(m, Math.abs(diff[c])); }
  }
  const sameTokens = same && A.ids.slice().sort((x, y) => x - y).join() === B.ids.slice().sort((x, y) => x - y).join();
  const col = (name, inner) => `<div class="side-col" data-col="${name}">${inner}</div>`;
  const canvas = (id) => `<div class="side-wrap"><canvas id="${id}"></canvas></div>`;
  let html = `<p class="side-head">${t("side_head", { l, h })}</p><div class="side-cols">` +
    col("a", `<h3>${t("side_pattern", { s: "A" })}</h3>${canvas("side-heat-a")}${sideBars(A)}`) +
    col("b", `<h3>${t("side_pattern", { s: "B" })}</h3>${canvas("side-heat-b")}${sideBars(B)}`) +
    col("diff", `<h3>${t("side_diff")}</h3>` + (same ? `<p class="side-kind">${t(sameTokens ? "side_same_tokens" : "side_same_length")}</p>` +
      canvas("side-heat-d") : `<p class="note" id="side-diff-none">${t("side_diff_none", { ta: Ta, tb: Tb })}</p>`) + sideNextTable()) +
    // the colour scale is said only where there is a difference to colour (two sentences of one length)
    `</div><p class="caption">${t("side_caption")}${same ? " " + t("side_scale", { m: fmt(m) }) : ""}</p>`;
  const box = $("#side-result");
  box.innerHTML = html;
  const masked = (i, j) => causal && j > i;
  sideHeat($("#side-heat-a"), Ta, A.tokens, A.tokens, (i, j) => masked(i, j) ? null : sideBlue(xa[i * Ta + j]), (i, j) => xa[i * Ta + j]);
  sideHeat($("#side-heat-b"), Tb, B.tokens, B.tokens, (i, j) => masked(i, j) ? null : sideBlue(xb[i * Tb + j]), (i, j) => xb[i * Tb + j]);
  if (same) {
    const lab = A.tokens.map((tk, i) => tk === B.tokens[i] ? tk : `${tk}/${B.tokens[i]}`);
    sideHeat($("#side-heat-d"), Ta, lab, lab, (i, j) => masked(i, j) ? null : sideDiverge(diff[i * Ta + j] / (m || 1)),
      (i, j) => diff[i * Ta + j]);
  }
  SIDE.drawn = `${l}:${h}:${S.lang}`;
  SIDE.view = { l, h, xa, xb, diff };
  announce("side", { layer: l, head: h, a: A.tokens, b: B.tokens, diff, scale: m, next: SIDE.next });
  box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
}

function sideHover(e) {
  const cv = e.target.closest("canvas"), g = cv && SIDE.cells[cv.id];
  if (!g || !SIDE.view) return showTip(e, null);
  const r = cv.getBoundingClientRect();
  const j = Math.floor((e.clientX - r.left - g.x0) / g.cell), i = Math.floor((e.clientY - r.top - g.y0) / g.cell);
  if (i < 0 || j < 0 || i >= g.T || j >= g.T || (SIDE.a.model.causal && j > i)) return showTip(e, null);
  const A = SIDE.a, B = SIDE.b, v = SIDE.view;
  if (cv.id === "side-heat-d") {
    const o = i * g.T + j;
    return showTip(e, t("side_tip", { i, j, qa: esc(A.tokens[i]), qb: esc(B.tokens[i]), ka: esc(A.tokens[j]), kb: esc(B.tokens[j]),
      a: fmt(v.xa[o]), b: fmt(v.xb[o]), d: fmt(v.diff[o]) }));
  }
  const doc = cv.id === "side-heat-a" ? A : B, x = cv.id === "side-heat-a" ? v.xa : v.xb;
  showTip(e, t("side_tip_one", { i, j, q: esc(doc.tokens[i]), k: esc(doc.tokens[j]), a: fmt(x[i * g.T + j]) }));
}

/** No server (the static export) or a translation model: a note instead of the form. */
function sideOff(key) {
  for (const id of ["#side-a", "#side-b", "#side-run"]) $(id).disabled = true;
  const note = $("#side-note");
  note.innerHTML = t(key); note.dataset.key = key; note.hidden = false;
  $("#side-result").innerHTML = "";
}

/** The first document: the pair /api/model offers (S.side) is compared once; a translation hides the panel. */
function sideFirst(doc) {
  const tr = doc.kind === "translation-view";
  $("#side").hidden = tr;
  if (tr) return;
  if (S.mode !== "live" || SIDE.started) return;
  if (S.side && !$("#side-a").value && !$("#side-b").value) { $("#side-a").value = S.side.a; $("#side-b").value = S.side.b; }
  if ($("#side-a").value && $("#side-b").value) sideRun();  // none offered: the learner types two
}

register({
  name: "side",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() { sideBuild(); },
  keep: formKeep({ a: "#side-a", b: "#side-b" }, () => {  // the address keeps the two sentences (address.js)
    if (S.mode === "live" && !S.tr && $("#side-a").value && $("#side-b").value) sideRun();
  }),
  onDoc(doc) { sideFirst(doc); },
  start(doc) { sideFirst(doc); },  // the default pair is compared at load, in view or not (panels.js)
  render(what) {
    if (S.mode === "static" && !$("#side-note").dataset.key) sideOff("side_static");
    if (SIDE.a && SIDE.drawn !== `${S.layer}:${S.head}:${S.lang}`) sideDraw();  // only when layer, head or language changed
  },
  lang() {
    for (const el of document.querySelectorAll("#side [data-i18n]")) el.innerHTML = t(el.dataset.i18n);
    const note = $("#side-note");
    if (note.dataset.key) note.innerHTML = t(note.dataset.key);
  },
});

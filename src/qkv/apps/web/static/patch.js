// patch panel (registered in panels.js): activation patching between two texts of one length.
// The learner gives a clean text, a corrupted one, the answer the clean one leads to and a wrong word,
// and a site (resid_pre, attn_out, mlp_out: one layer at one position; z: one head at every position).
// api/patch (qkv.analysis.patch.patch_text) runs the corrupted text once per piece with that piece taken
// from the clean run, and measures m = logit(answer) − logit(wrong) at the last token. The heat map shows
// each piece's share of the way from the corrupted run's m to the clean run's, (m − m_corrupted) /
// (m_clean − m_corrupted), on a diverging scale, with m itself on hover. The form opens on the pair
// GET api/patch offers for this model (两个「苹果」 for the bundled one) and runs once when first seen.
// Not tied to the page's text: it keeps its own answer until the learner patches again.

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { register } from "./panels.js";
import { divergeStyle } from "./shade.js";

Object.assign(I18N.en, {
  patch_title: "Activation patching: which activations carry the difference between two texts",
  patch_intro: "Two texts of the same number of tokens that differ in one detail lead the model to different " +
    "answers. Patching runs the corrupted text, puts one piece of the clean run's activations in place of the same " +
    "piece (one layer at one position, or one head at every position), lets the rest of the model compute on " +
    "from there, and measures <code>m = logit(answer) − logit(wrong)</code> after the last token again.",
  patch_clean: "Clean text", patch_corrupt: "Corrupted text", patch_answer: "Answer", patch_wrong: "Wrong word",
  patch_site: "Site", patch_run: "Patch",
  patch_site_resid_pre: "resid_pre: the residual stream as it enters layer L, one position at a time",
  patch_site_attn_out: "attn_out: what layer L's attention adds to the residual stream, one position at a time",
  patch_site_mlp_out: "mlp_out: what layer L's MLP adds to the residual stream, one position at a time",
  patch_site_z: "z: one head's output z = A v (before W_O), at every position at once",
  patch_metric: "<code>m = logit(“{answer}”) − logit(“{wrong}”)</code> after “{tok}” (position {pos}): " +
    "clean run {clean}, corrupted run {corrupted}.",
  patch_cells: "Each cell: how much of the way from the corrupted run's m to the clean run's patching that one piece " +
    "recovers, (m<sub>patched</sub> − m<sub>corrupted</sub>) / (m<sub>clean</sub> − m<sub>corrupted</sub>): 0 changes " +
    "nothing, 1 restores the clean answer (blue), below 0 pushes the other way (red). Hover over a cell, or tap it, for its m.",
  patch_equal: "The two runs give the same m, so there is no way between them to share out: each cell shows m itself.",
  patch_corner_pos: "layer \\ position", patch_corner_head: "layer \\ head",
  patch_tip_pos: "layer {l}, position {p} “{tok}”: share {share}, m = {m}",
  patch_tip_head: "layer {l}, head {h}: share {share}, m = {m}",
  patch_tip_raw_pos: "layer {l}, position {p} “{tok}”: m = {m}",
  patch_tip_raw_head: "layer {l}, head {h}: m = {m}",
  patch_loading: "Patching…",
  patch_none: "Type two texts of the same number of tokens, the answer the clean one leads to and a wrong word, then press Patch.",
  patch_static: "Patching runs the model again: run <code>qkv serve</code> to try it.",
  patch_no_lm: "Patching measures a difference of next-token logits: this model (an encoder) predicts no next token.",
  patch_tr: "Patching is shown for a GPT, not for a translation model.",
});
Object.assign(I18N.zh, {
  patch_title: "激活修补：哪些激活承载了两段文字之间的差别",
  patch_intro: "两段词元数相同、只差一处的文字，会让模型给出不同的答案。修补就是运行损坏文本，把干净文本那次运行里的一块激活" +
    "（某一层的某一个位置，或某个头的所有位置）换到同一块的位置上，让模型从那里接着算下去，再在最后一个词元之后重新量一次 " +
    "<code>m = logit(正确词) − logit(错误词)</code>。",
  patch_clean: "干净文本", patch_corrupt: "损坏文本", patch_answer: "正确词", patch_wrong: "错误词",
  patch_site: "修补位置", patch_run: "修补",
  patch_site_resid_pre: "resid_pre：进入层 L 时的残差流，每次换一个位置",
  patch_site_attn_out: "attn_out：层 L 的注意力加到残差流上的量，每次换一个位置",
  patch_site_mlp_out: "mlp_out：层 L 的 MLP 加到残差流上的量，每次换一个位置",
  patch_site_z: "z：一个头的输出 z = A v（乘 W_O 之前），所有位置一起换",
  patch_metric: "<code>m = logit(「{answer}」) − logit(「{wrong}」)</code>，在「{tok}」（位置 {pos}）之后：" +
    "干净运行 {clean}，损坏运行 {corrupted}。",
  patch_cells: "每一格：只换进这一块之后，m 从损坏运行的值向干净运行的值走回了多少，" +
    "(m<sub>修补</sub> − m<sub>损坏</sub>) / (m<sub>干净</sub> − m<sub>损坏</sub>)：0 表示没有变化，1 表示完全恢复干净文本的答案（蓝色），" +
    "小于 0 表示推向另一边（红色）。鼠标停在格子上（或点一下格子）可以看到它的 m。",
  patch_equal: "两次运行的 m 相同，没有可以分配的差距：每一格显示 m 本身。",
  patch_corner_pos: "层 \\ 位置", patch_corner_head: "层 \\ 头",
  patch_tip_pos: "层 {l}，位置 {p}「{tok}」：比例 {share}，m = {m}",
  patch_tip_head: "层 {l} 头 {h}：比例 {share}，m = {m}",
  patch_tip_raw_pos: "层 {l}，位置 {p}「{tok}」：m = {m}",
  patch_tip_raw_head: "层 {l} 头 {h}：m = {m}",
  patch_loading: "修补中……",
  patch_none: "输入两段词元数相同的文字、干净文本导向的正确词和一个错误词，再点“修补”。",
  patch_static: "激活修补要重新运行模型：运行 <code>qkv serve</code> 才能试。",
  patch_no_lm: "激活修补量的是下一个词元的 <code>logit</code> 之差：这个模型（编码器）不预测下一个词元。",
  patch_tr: "激活修补只对 GPT 展示，不用于翻译模型。",
});

const SITES = ["resid_pre", "attn_out", "mlp_out", "z"];
const PATCH = { asked: false, req: 0, doc: null, error: false, off: "" };
const FIELDS = ["clean", "corrupt", "answer", "wrong"];

function patchBuild() {
  const field = (name, wide) => `<label class="${wide ? "wide" : ""}"><span data-i18n="patch_${name}">${t("patch_" + name)}</span>` +
    `<input id="patch-${name}" type="text" spellcheck="false"></label>`;
  $("#patch").innerHTML = `<h2 data-i18n="patch_title">${t("patch_title")}</h2>` +
    `<p class="caption" data-i18n="patch_intro">${t("patch_intro")}</p>` +
    `<div class="patch-form">${field("clean", true)}${field("corrupt", true)}${field("answer")}${field("wrong")}` +
    `<label><span data-i18n="patch_site">${t("patch_site")}</span><select id="patch-site">` +
    SITES.map((s) => `<option value="${s}">${s}</option>`).join("") + `</select></label>` +
    `<button id="patch-run" type="button" class="primary" data-i18n="patch_run">${t("patch_run")}</button></div>` +
    `<p id="patch-site-note" class="caption"></p>` +
    `<p id="patch-error" class="error" role="alert" hidden></p><p id="patch-note" class="note" hidden></p>` +
    `<div id="patch-result"></div>`;
  $("#patch-run").addEventListener("click", patchRun);
  for (const name of FIELDS) {
    $(`#patch-${name}`).addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); patchRun(); } });
  }
  $("#patch-site").addEventListener("change", () => { patchSiteNote(); patchRun(); });
  $("#patch-result").addEventListener("click", (e) => {  // a finger has no hover: a tap writes the cell's line
    const td = e.target.closest("td[data-layer]");
    if (!td) return;
    for (const x of document.querySelectorAll("#patch td.picked")) x.classList.remove("picked");
    td.classList.add("picked");
    $("#patch-cell").textContent = td.title;
  });
  patchSiteNote();
}

const patchSiteNote = () => { $("#patch-site-note").textContent = t("patch_site_" + $("#patch-site").value); };

function patchError(msg) {
  const el = $("#patch-error");
  el.textContent = msg || ""; el.hidden = !msg; PATCH.error = !!msg;
}

/** A share (or m itself) written in a cell: two decimals, no "−0.00". */
const cellText = (x) => (Number.isFinite(x) ? (Math.abs(x) < 0.005 ? "0.00" : x.toFixed(2)) : fmt(x));

function patchDraw() {
  const d = PATCH.doc, box = $("#patch-result");
  if (!d) return;
  const byHead = d.axes[1] === "head", L = d.values.length, W = L ? d.values[0].length : 0;
  const tc = d.tokens.clean || [], tk = d.tokens.corrupted || [];
  const share = d.normalized;  // null: the two runs' m are equal
  const tokAt = (p) => (tc[p] === tk[p] ? tc[p] : `${tc[p]}/${tk[p]}`);
  let html = `<p class="patch-metric" id="patch-metric">${t("patch_metric", { answer: esc(d.answer ?? d.answer_id),
    wrong: esc(d.wrong ?? d.wrong_id), tok: esc(tc[d.position] ?? d.position), pos: d.position,
    clean: `<span class="num" data-field="clean">${fmt(d.clean)}</span>`,
    corrupted: `<span class="num" data-field="corrupted">${fmt(d.corrupted)}</span>` })}</p>` +
    `<div class="table-wrap patch-wrap"><table class="patch-map" data-site="${esc(d.site)}"><thead><tr>` +
    `<th class="corner">${esc(t(byHead ? "patch_corner_head" : "patch_corner_pos"))}</th>`;
  for (let c = 0; c < W; c++) {
    if (byHead) { html += `<th data-col="${c}">H${c}</th>`; continue; }
    const differ = tc[c] !== tk[c];
    html += `<th data-col="${c}"${differ ? ' class="differ"' : ""}><span class="pos">${c}</span><span class="tok">${esc(tc[c])}</span>` +
      (differ ? `<span class="tok alt">${esc(tk[c])}</span>` : "") + `</th>`;
  }
  html += `</tr></thead><tbody>`;
  for (let l = 0; l < L; l++) {
    html += `<tr><th>L${l}</th>`;
    for (let c = 0; c < W; c++) {
      const m = d.values[l][c], s = share ? share[l][c] : null;
      const vars = { l, p: c, h: c, tok: esc(tokAt(c)), m: fmt(m), share: fmt(s) };
      const tip = share ? t(byHead ? "patch_tip_head" : "patch_tip_pos", vars) : t(byHead ? "patch_tip_raw_head" : "patch_tip_raw_pos", vars);
      const scale = share ? s : m / Math.max(1e-12, ...d.values.flat().map(Math.abs));
      html += `<td class="num" data-layer="${l}" data-col="${c}" data-m="${m}" style="${divergeStyle(scale)}" title="${esc(tip)}">` +
        `${cellText(share ? s : m)}</td>`;
    }
    html += `</tr>`;
  }
  html += `</tbody></table></div><p class="patch-cell" id="patch-cell"></p>` +
    `<p class="caption">${share ? t("patch_cells") : t("patch_equal")}</p>`;
  box.innerHTML = html;
  const el = $("#patch");
  el.dataset.state = "ready"; el.dataset.site = d.site;
  el.dataset.ready = String(Number(el.dataset.ready || 0) + 1);
}

async function patchRun() {
  if (PATCH.off) return;
  const body = { site: $("#patch-site").value };
  for (const name of FIELDS) body[name] = $(`#patch-${name}`).value;
  const req = ++PATCH.req, el = $("#patch");
  if (!body.clean.trim() && !body.corrupt.trim()) { $("#patch-result").innerHTML = `<p class="caption">${t("patch_none")}</p>`; return; }
  el.dataset.state = "loading";
  if (!$("#patch-result table")) $("#patch-result").innerHTML = `<p class="caption">${t("patch_loading")}</p>`;
  busy(true);
  try {
    const d = await api("api/patch", body);
    if (req !== PATCH.req) return;
    PATCH.doc = d; patchError(""); patchDraw();
  } catch (e) {
    if (req !== PATCH.req) return;
    el.dataset.state = "error"; patchError(e.message);
    if (!$("#patch-result table")) $("#patch-result").innerHTML = "";
  } finally {
    busy(false);
  }
}

/** The first time the panel is seen: the sites this model has and the pair to open on, then one run. */
async function patchStart() {
  PATCH.asked = true;
  try {
    const ex = await api("api/patch");
    const sel = $("#patch-site"), keep = sel.value;
    sel.innerHTML = ex.sites.map((s) => `<option value="${s}">${s}</option>`).join("");
    if (ex.sites.includes(keep)) sel.value = keep;
    patchSiteNote();
    if (ex.example && FIELDS.every((n) => !$(`#patch-${n}`).value)) for (const n of FIELDS) $(`#patch-${n}`).value = ex.example[n];
  } catch (e) {
    patchError(e.message);
    return;
  }
  patchRun();
}

/** No server, an encoder or a translation model: a note, the form switched off. */
function patchOff(key) {
  PATCH.off = key;
  for (const el of document.querySelectorAll("#patch input, #patch select, #patch button")) el.disabled = true;
  const note = $("#patch-note");
  note.innerHTML = t(key); note.hidden = false;
  $("#patch-result").innerHTML = "";
  $("#patch").dataset.state = "note";
}

function patchOn() {
  if (!PATCH.off) return;
  PATCH.off = "";
  for (const el of document.querySelectorAll("#patch input, #patch select, #patch button")) el.disabled = false;
  $("#patch-note").hidden = true;
}

register({
  name: "patch",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel): it patches when first seen
  init() { patchBuild(); },
  render() {
    if (S.mode === "static") { if (PATCH.off !== "patch_static") patchOff("patch_static"); return; }
    if (!S.doc) return;
    if (S.tr || !predictsNext()) { const key = S.tr ? "patch_tr" : "patch_no_lm"; if (PATCH.off !== key) patchOff(key); return; }
    patchOn();
    if (!PATCH.asked) patchStart();
  },
  lang() {
    patchSiteNote();
    if (PATCH.off) $("#patch-note").innerHTML = t(PATCH.off);
    if (PATCH.error) patchRun();  // the server's line again, in the new language
    else patchDraw();
  },
});

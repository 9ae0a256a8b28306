// patch panel (registered in panels.js): activation patching between two texts of one length.
// The learner gives a clean text, a corrupted one, the answer the clean one leads to and a wrong word,
// and a site (resid_pre, attn_out, mlp_out: one layer at one position; z: one head at every position).
// api/patch (qkv.analysis.patch.patch_text) runs the corrupted text once per piece with that piece taken
// from the clean run, and measures m = logit(answer) − logit(wrong) at the last token. The heat map shows
// each piece's share of the way from the corrupted run's m to the clean run's, (m − m_corrupted) /
// (m_clean − m_corrupted), on a diverging scale (blue toward the clean run, red away from it, as
// `qkv figure patching`), with m itself on hover or in the line a tap writes. The form opens on the pair
// GET api/patch offers for this model (两个「苹果」 for the bundled one) and runs once when first seen; a
// model that reads none of them opens on the page's sentence in both boxes, to be edited. Not tied to
// the page's text: it keeps its own answer until the learner patches again; a refused patching leaves
// the server's line and no map (the older answer's would sit under it).

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, chosen, hookNamed, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { formKeep, register } from "./panels.js";
import { divergeStyle } from "./shade.js";

Object.assign(I18N.en, {
  patch_title: "Activation patching: which activations carry the difference between two texts",
  patch_intro: "Two texts of the same number of tokens that differ in one detail lead the model to different " +
    "answers. Patching runs the corrupted text, puts one piece of the clean run's activations in place of the same " +
    "piece (one layer at one position, or one head at every position), lets the rest of the model compute on " +
    "from there, and measures <code>m = logit(answer) − logit(wrong)</code> after the last token again.",
  patch_clean: "Clean text", patch_corrupt: "Corrupted text", patch_answer: "Answer", patch_wrong: "Wrong word",
  patch_site: "Activation to patch", patch_run: "Patch",
  patch_site_resid_pre: "resid_pre: the residual stream entering block L, one position at a time",
  patch_site_attn_out: "attn_out: what layer L's attention adds to the residual stream, one position at a time",
  patch_site_mlp_out: "mlp_out: what layer L's MLP adds to the residual stream, one position at a time",
  patch_site_z: "z: one head's output z = A v (before W_O), at every position at once",
  patch_metric: "<code>m = logit(“{answer}”) − logit(“{wrong}”)</code> after “{tok}” (position {pos}): " +
    "clean run {clean}, corrupted run {corrupted}.",
  patch_cells: "Each cell is one patched run: the share of the gap between the corrupted run's m and the clean " +
    "run's m that patching this one piece closes, (m<sub>patched</sub> − m<sub>corrupted</sub>) / " +
    "(m<sub>clean</sub> − m<sub>corrupted</sub>). 0: m stays the corrupted run's; 1: m is back at the clean run's. " +
    "Blue = toward the clean run, red = away from it. Hover over a cell, or tap it, for its m.",
  patch_equal: "The two runs give the same m, so there is no gap between them to share out: each cell shows m " +
    "itself (blue above 0, red below).",
  patch_corner_pos: "layer \\ position", patch_corner_head: "layer \\ head",
  patch_tip_pos: "layer {l}, position {p} “{tok}”: share {share}, m = {m}",
  patch_tip_head: "layer {l}, head {h}: share {share}, m = {m}",
  patch_tip_raw_pos: "layer {l}, position {p} “{tok}”: m = {m}",
  patch_tip_raw_head: "layer {l}, head {h}: m = {m}",
  patch_loading: "Patching…",
  patch_none: "Type two texts of the same number of tokens, the answer the clean one leads to and a wrong word, then press Patch.",
  patch_fill: "This model's tokenizer cannot read the built-in example, so both boxes hold the page's sentence: change one " +
    "token of the corrupted text (keeping the number of tokens), type the answer the clean text leads to and a wrong " +
    "word (one token each), then press Patch.",
  patch_static: "Patching runs the model again: run <code>qkv serve</code> to try it.",
  patch_no_lm: "Patching measures a difference of next-token logits: this model (an encoder) predicts no next token.",
  patch_tr: "Patching is shown for a GPT, not for a translation model.",
});
Object.assign(I18N.zh, {
  patch_title: "激活修补：哪些激活承载了两段文字之间的差别",
  patch_intro: "两段词元数相同、只差一处的文字，会让模型给出不同的答案。修补就是运行损坏文本，把干净文本那次运行里的一处激活" +
    "（某一层的某一个位置，或某个头的所有位置）换到同一处上，让模型从那里接着算下去，再在最后一个词元之后重新量一次 " +
    "<code>m = logit(正确词) − logit(错误词)</code>。",
  patch_clean: "干净文本", patch_corrupt: "损坏文本", patch_answer: "正确词", patch_wrong: "错误词",
  patch_site: "修补哪种激活", patch_run: "修补",
  patch_site_resid_pre: "resid_pre：进入块 L 时的残差流，每次换一个位置",
  patch_site_attn_out: "attn_out：块 L 的注意力加到残差流上的量，每次换一个位置",
  patch_site_mlp_out: "mlp_out：块 L 的 MLP 加到残差流上的量，每次换一个位置",
  patch_site_z: "z：一个头的输出 z = A v（乘 W_O 之前），所有位置一起换",
  patch_metric: "<code>m = logit(「{answer}」) − logit(「{wrong}」)</code>，在「{tok}」（位置 {pos}）之后：" +
    "干净运行 {clean}，损坏运行 {corrupted}。",
  patch_cells: "每一格是一次修补运行：损坏运行的 m 与干净运行的 m 之间的差距，只换进这一处就补上了多少，" +
    "(m<sub>修补</sub> − m<sub>损坏</sub>) / (m<sub>干净</sub> − m<sub>损坏</sub>)。0：m 仍是损坏运行的值；1：m 回到了干净运行的值。" +
    "蓝色 = 朝干净运行的方向，红色 = 背离干净运行的方向。鼠标停在格子上（或点一下格子）可以看到它的 m。",
  patch_equal: "两次运行的 m 相同，没有可以分配的差距：每一格显示 m 本身（大于 0 为蓝色，小于 0 为红色）。",
  patch_corner_pos: "层 \\ 位置", patch_corner_head: "层 \\ 头",
  patch_tip_pos: "层 {l}，位置 {p}「{tok}」：比例 {share}，m = {m}",
  patch_tip_head: "层 {l} 头 {h}：比例 {share}，m = {m}",
  patch_tip_raw_pos: "层 {l}，位置 {p}「{tok}」：m = {m}",
  patch_tip_raw_head: "层 {l} 头 {h}：m = {m}",
  patch_loading: "修补中……",
  patch_none: "输入两段词元数相同的文字、干净文本导向的正确词和一个错误词，再点「修补」。",
  patch_fill: "这个模型的分词器读不了内置的例子，所以两个框里都先放了页面上的句子：在损坏文本里换掉一个词元（词元数保持不变），" +
    "填上干净文本导向的正确词和一个错误词（各一个词元），再点「修补」。",
  patch_static: "激活修补要重新运行模型：运行 <code>qkv serve</code> 才能试。",
  patch_no_lm: "激活修补量的是下一个词元的 <code>logit</code> 之差：这个模型（编码器）不预测下一个词元。",
  patch_tr: "激活修补只对 GPT 展示，不用于翻译模型。",
});

const SITES = ["resid_pre", "attn_out", "mlp_out", "z"];
// doc: the answer drawn (null: none, or a refusal showing: then the older answer is gone, not left under
// the error); error: a refusal is showing; hint: a caption key for the form (patch_none: it is empty,
// patch_fill: it holds the page's sentence to edit), until a patching succeeds; picked: the tapped cell
// [layer, column] of the drawn answer; off: the note key when the panel cannot patch
const PATCH = { asked: false, req: 0, doc: null, error: false, hint: "", picked: null, off: "" };
const FIELDS = ["clean", "corrupt", "answer", "wrong"];

function patchBuild() {
  const field = (name, wide) => `<label class="${wide ? "wide" : ""}"><span data-i18n="patch_${name}">${t("patch_" + name)}</span>` +
    `<input id="patch-${name}" type="text" spellcheck="false"></label>`;
  $("#patch").innerHTML = `<h2 data-i18n="patch_title">${t("patch_title")}</h2>` +
    `<p class="caption" data-i18n="patch_intro">${t("patch_intro")}</p>` +
    `<div class="patch-form">${field("clean", true)}${field("corrupt", true)}${field("answer")}${field("wrong")}` +
    `<label><span data-i18n="patch_site">${t("patch_site")}</span><select id="patch-site">` +
    siteOptions(SITES) + `</select></label>` +
    `<button id="patch-run" type="button" class="primary" data-i18n="patch_run">${t("patch_run")}</button></div>` +
    `<p id="patch-site-note" class="caption"></p><p id="patch-hint" class="caption patch-hint" hidden></p>` +
    `<p id="patch-error" class="error" role="alert" hidden></p><p id="patch-note" class="note" hidden></p>` +
    `<div id="patch-result"></div>`;
  $("#patch-run").addEventListener("click", patchRun);
  for (const name of FIELDS) {
    $(`#patch-${name}`).addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); patchRun(); } });
  }
  $("#patch-site").addEventListener("change", () => { patchSiteNote(); patchRun(); });
  $("#patch-result").addEventListener("click", (e) => {  // a finger has no hover: a tap writes the cell's line
    const td = e.target.closest("td[data-layer]");
    if (td && PATCH.doc) patchPick(+td.dataset.layer, +td.dataset.col);
  });
  patchSiteNote();
}

/** The sites as options: each name with its words beside it in Chinese ("进入本块的残差流 resid_pre"). */
const siteOptions = (sites) => sites.map((s) => `<option value="${esc(s)}">${esc(hookNamed(s))}</option>`).join("");

/** The options' words again, in the page's language. */
function relabelSites() {
  for (const o of document.querySelectorAll("#patch-site option")) o.textContent = hookNamed(o.value);
}

const patchSiteNote = () => { $("#patch-site-note").textContent = t("patch_site_" + $("#patch-site").value); };

/** The form's caption: key, or "" for none. */
function patchHint(key) {
  const el = $("#patch-hint");
  PATCH.hint = key; el.hidden = !key; el.innerHTML = key ? t(key) : "";
}

/** The refused request's line (msg; "" clears it). While it shows, no answer is: the one drawn was an
 *  older request's, for other texts or words. */
function patchError(msg) {
  const el = $("#patch-error");
  el.textContent = msg || ""; el.hidden = !msg; PATCH.error = !!msg;
  if (!msg) return;
  PATCH.doc = null; PATCH.picked = null;
  $("#patch-result").innerHTML = "";
  $("#patch").dataset.state = "error";
}

/** A share (or m itself) written in a cell: two decimals, no "−0.00". */
const cellText = (x) => (Number.isFinite(x) ? (Math.abs(x) < 0.005 ? "0.00" : x.toFixed(2)) : fmt(x));

/** Cell (l, c)'s line, as text (a title, a textContent: not HTML): its share and m (m alone when the two
 *  runs' m are equal). */
function patchCellLine(d, l, c) {
  const byHead = d.axes[1] === "head", share = d.normalized;
  const tc = d.tokens.clean || [], tk = d.tokens.corrupted || [];
  const tok = tc[c] === tk[c] ? tc[c] : `${tc[c]}/${tk[c]}`;
  const vars = { l, p: c, h: c, tok, m: fmt(d.values[l][c]), share: fmt(share ? share[l][c] : null) };
  return share ? t(byHead ? "patch_tip_head" : "patch_tip_pos", vars) : t(byHead ? "patch_tip_raw_head" : "patch_tip_raw_pos", vars);
}

/** Tap (or click) cell (l, c): outline it and write its line under the map. */
function patchPick(l, c) {
  const td = $(`#patch-result td[data-layer="${l}"][data-col="${c}"]`);
  if (!td) return;
  for (const x of document.querySelectorAll("#patch td.picked")) x.classList.remove("picked");
  td.classList.add("picked");
  PATCH.picked = [l, c];
  $("#patch-cell").textContent = patchCellLine(PATCH.doc, l, c);
}

function patchDraw() {
  const d = PATCH.doc, box = $("#patch-result");
  if (!d) {  // nothing to draw: a patching in flight says so in the current language
    if ($("#patch").dataset.state === "loading" && !box.querySelector("table")) box.innerHTML = `<p class="caption">${t("patch_loading")}</p>`;
    return;
  }
  const byHead = d.axes[1] === "head", L = d.values.length, W = L ? d.values[0].length : 0;
  const tc = d.tokens.clean || [], tk = d.tokens.corrupted || [];
  const share = d.normalized;  // null: the two runs' m are equal
  let html = `<p class="patch-metric" id="patch-metric">${t("patch_metric", { answer: esc(chosen(d.answer, d.answer_id)),
    wrong: esc(chosen(d.wrong, d.wrong_id)), tok: esc(tc[d.position] ?? d.position), pos: d.position,
    clean: `<span class="num" data-field="clean">${fmt(d.clean)}</span>`,
    corrupted: `<span class="num" data-field="corrupted">${fmt(d.corrupted)}</span>` })}</p>` +
    `<div class="table-wrap patch-wrap"><table class="patch-map" data-site="${esc(d.site)}"><thead><tr>` +
    `<th class="corner">${esc(t(byHead ? "patch_corner_head" : "patch_corner_pos"))}</th>`;
  for (let c = 0; c < W; c++) {
    if (byHead) { html += `<th data-col="${c}">${t("tab_head", { h: c })}</th>`; continue; }
    const differ = tc[c] !== tk[c];
    html += `<th data-col="${c}"${differ ? ' class="differ"' : ""}><span class="pos">${c}</span><span class="tok">${esc(tc[c])}</span>` +
      (differ ? `<span class="tok alt">${esc(tk[c])}</span>` : "") + `</th>`;
  }
  html += `</tr></thead><tbody>`;
  const top = Math.max(1e-12, ...d.values.flat().map(Math.abs));
  for (let l = 0; l < L; l++) {
    html += `<tr><th>${t("tab_layer", { l })}</th>`;
    for (let c = 0; c < W; c++) {
      const m = d.values[l][c], s = share ? share[l][c] : null;
      html += `<td class="num" data-layer="${l}" data-col="${c}" data-m="${m}" style="${divergeStyle(share ? s : m / top)}" ` +
        `title="${esc(patchCellLine(d, l, c))}">${cellText(share ? s : m)}</td>`;
    }
    html += `</tr>`;
  }
  html += `</tbody></table></div><p class="patch-cell" id="patch-cell"></p>` +
    `<p class="caption" id="patch-caption">${share ? t("patch_cells") : t("patch_equal")}</p>`;
  box.innerHTML = html;
  const el = $("#patch");
  el.dataset.state = "ready"; el.dataset.site = d.site;
  el.dataset.ready = String(Number(el.dataset.ready || 0) + 1);
  if (PATCH.picked) patchPick(...PATCH.picked);
}

async function patchRun() {
  if (PATCH.off) return;
  const body = { site: $("#patch-site").value };
  for (const name of FIELDS) body[name] = $(`#patch-${name}`).value;
  const req = ++PATCH.req, el = $("#patch");
  if (!body.clean.trim() && !body.corrupt.trim()) {
    patchError(""); PATCH.doc = null; $("#patch-result").innerHTML = ""; patchHint("patch_none");
    el.dataset.state = "empty";
    return;
  }
  el.dataset.state = "loading";
  if (!$("#patch-result table")) $("#patch-result").innerHTML = `<p class="caption">${t("patch_loading")}</p>`;
  busy(true);
  try {
    const d = await api("api/patch", body);
    if (req !== PATCH.req) return;
    PATCH.doc = d; PATCH.picked = null; patchError(""); patchHint(""); patchDraw();
  } catch (e) {
    if (req !== PATCH.req) return;
    patchError(e.message);
  } finally {
    busy(false);
  }
}

/** The first time the panel is seen: the sites this model has and the pair to open on, then one run.
 *  A model whose tokenizer reads none of the pairs opens on the page's sentence in both boxes, with a
 *  line that says what to change (and runs nothing: it has no answer yet). */
async function patchStart() {
  PATCH.asked = true;
  const empty = () => FIELDS.every((n) => !$(`#patch-${n}`).value);
  try {
    const ex = await api("api/patch");
    const sel = $("#patch-site"), keep = sel.value;
    sel.innerHTML = siteOptions(ex.sites);
    if (ex.sites.includes(keep)) sel.value = keep;
    patchSiteNote();
    if (ex.example && empty()) for (const n of FIELDS) $(`#patch-${n}`).value = ex.example[n];
    else if (!ex.example && empty() && S.doc && S.doc.text) {
      $("#patch-clean").value = $("#patch-corrupt").value = S.doc.text;
      patchHint("patch_fill");
      return;
    }
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
  // the address keeps the form (address.js); before the panel is first seen, patchStart runs what it holds
  keep: formKeep({ clean: "#patch-clean", corrupt: "#patch-corrupt", answer: "#patch-answer", wrong: "#patch-wrong",
    site: "#patch-site" }, () => { patchSiteNote(); if (PATCH.asked && !PATCH.off) patchRun(); }),
  render() {
    if (S.mode === "static") { if (PATCH.off !== "patch_static") patchOff("patch_static"); return; }
    if (!S.doc) return;
    if (S.tr || !predictsNext()) { const key = S.tr ? "patch_tr" : "patch_no_lm"; if (PATCH.off !== key) patchOff(key); return; }
    patchOn();
    if (!PATCH.asked) patchStart();
  },
  lang() {  // everything again in the new language
    relabelSites();
    patchSiteNote();
    patchHint(PATCH.hint);
    if (PATCH.off) $("#patch-note").innerHTML = t(PATCH.off);
    else if (PATCH.error) patchRun();  // asked again, for the server's line in the new language
    else patchDraw();
  },
});

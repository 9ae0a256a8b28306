// lens panel (registered in panels.js): the logit lens at the page's query token.
// api/lens (qkv.analysis.lens.lens_top) reads the residual stream entering each block, and leaving the
// last one, through the model's own final norm and unembedding: row L (named "after block L − 1, entering
// block L"; row 0 the embeddings) is what the model would predict if it stopped before block L, the last
// row its output. Each row shows the top LENS_TOP next tokens, shaded by probability; the cell where the
// model's final prediction first enters a row's top list is outlined; a tap on a cell (a phone has no
// hover) writes its line under the table. Requests wait LENS_WAIT ms after the last change; only the
// newest answer is drawn; answers are kept per (ids, token); a refused request leaves the server's line
// and no table (an older request's would sit under it). An encoder or a translation model has no such
// stream to read: a one-line note.

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showErrorIn } from "./errors.js";
import { register } from "./panels.js";
import { rampStyle } from "./shade.js";

Object.assign(I18N.en, {
  lens_name: "Logit lens",
  lens_title: "Logit lens: what the model would predict after each block, after “{tok}” (position {i})",
  lens_caption: "Each row reads the residual stream at one point (the embeddings, entering block 0; after block 0, " +
    "entering block 1; …; after block {last}, the last one) straight through the model's own final norm and " +
    "unembedding, as if the model stopped there: P = softmax(LN_final(x) W_U + b_U). The last row, after block " +
    "{last}, is the model's output. Each cell is one of the {k} most probable next tokens, shaded by its probability; " +
    "the outlined cell is where the final prediction, “{final}”, first enters a row's top {k}. Hover over a cell, or tap it, for its probability.",
  lens_th_row: "stream read", lens_th_final: "p(“{final}”)",
  lens_row_embed: "embeddings (entering block 0)", lens_row_layer: "after block {l} (entering block {next})",
  lens_row_out: "after block {l}: the output",
  lens_short_embed: "emb", lens_short_layer: "after B{l}", lens_short_out: "output",
  lens_first: "“{final}” first enters the top {k} {where} (p = {p}); the output gives it p = {pout}.",
  lens_where_embed: "at the embeddings (entering block 0)", lens_where_layer: "after block {l} (entering block {next})",
  lens_where_out: "only after block {l}, the output",
  lens_cell: "{row}: “{tok}” (id {id}), rank {r}, p = {p}",
  lens_loading: "Computing…",
  lens_static: "The logit lens runs the model again: run <code>qkv serve</code> to see it.",
  lens_no_lm: "The logit lens reads a residual stream through the unembedding: this model (an encoder) has none.",
  lens_tr: "The logit lens is shown for a GPT's residual stream, not for a translation model.",
});
Object.assign(I18N.zh, {
  lens_name: "逐层预测 (logit lens)",
  lens_title: "逐层预测 (logit lens)：如果模型在每一块之后就停下，它会在「{tok}」（位置 {i}）之后预测什么",
  lens_caption: "每一行读残差流上的一处（嵌入，即进入块 0 时；块 0 之后，即进入块 1 时；……；块 {last} 之后，即最后一块之后），" +
    "把它直接送进模型自己的最终归一化和反嵌入，就像模型在那里停下：P = softmax(LN_final(x) W_U + b_U)。最后一行（块 {last} 之后）" +
    "就是模型的输出。每一格是概率最高的 {k} 个下一个词元之一，颜色越深概率越大；加框的格子是最终预测「{final}」第一次进入某一行前 {k} 名的地方。" +
    "鼠标停在格子上（或点一下格子）可以看到它的概率。",
  lens_th_row: "读取处", lens_th_final: "p(「{final}」)",
  lens_row_embed: "嵌入（进入块 0 时）", lens_row_layer: "块 {l} 之后（进入块 {next} 时）",
  lens_row_out: "块 {l} 之后：输出",
  lens_short_embed: "嵌入", lens_short_layer: "块{l}后", lens_short_out: "输出",
  lens_first: "「{final}」{where}第一次进入前 {k} 名（p = {p}）；模型输出给它的概率是 {pout}。",
  lens_where_embed: "在嵌入处（进入块 0 时）", lens_where_layer: "在块 {l} 之后（进入块 {next} 时）",
  lens_where_out: "直到块 {l} 之后（输出）才",
  lens_cell: "{row}：「{tok}」（编号 {id}），第 {r} 名，p = {p}",
  lens_loading: "计算中……",
  lens_static: "逐层预测要重新运行模型：运行 <code>qkv serve</code> 才能看到。",
  lens_no_lm: "逐层预测是把残差流送进反嵌入来读：这个模型（编码器）没有反嵌入。",
  lens_tr: "逐层预测只对 GPT 的残差流展示，不用于翻译模型。",
});

const LENS_WAIT = 120, LENS_TOP = 5;
// shown: the key drawn ("" while loading, or after a refusal); picked: the tapped cell [row, rank] of
// the drawn answer, whose line is written under the table
const LENS = { cache: new Map(), req: 0, timer: 0, shown: "", picked: null };

const lensKey = () => `${S.token}|${S.doc.ids.join(",")}`;

/** Row L's name (n blocks, rows 0..n): the embeddings (entering block 0), after block L − 1 (entering
 *  block L), and after the last block, the output; the same words as the caption and the CLI. */
function lensRow(L, n) {
  if (L === 0) return t("lens_row_embed");
  return t(L === n ? "lens_row_out" : "lens_row_layer", { l: L - 1, next: L });
}

/** Its short name, for a phone: emb, after B0, ..., output. */
function lensShort(L, n) {
  if (L === 0) return t("lens_short_embed");
  return L === n ? t("lens_short_out") : t("lens_short_layer", { l: L - 1 });
}

/** Where row `first` is, in lens_first's words. */
function lensWhere(first, n) {
  if (first === 0) return t("lens_where_embed");
  return t(first === n ? "lens_where_out" : "lens_where_layer", { l: first - 1, next: first });
}

/** A token in a cell: a byte token (<0xE5>) may wrap after its "<0x" on a narrow screen (lens.css). */
const tokHtml = (tok) => esc(tok).replace(/^&lt;0x(?=[0-9A-Fa-f])/, "&lt;0x<wbr>");

/** A cell's line (its tooltip, and what a tap writes under the table). */
const lensCellLine = (row, r, c, n) =>
  t("lens_cell", { row: lensRow(row, n), tok: c.token ?? `#${c.id}`, id: c.id, r: r + 1, p: fmt(c.p) });

function lensDraw(d) {
  const el = $("#lens"), n = d.layers.length - 1, k = d.k, fin = d.final;
  const first = d.layers.findIndex((r) => r.top.some((c) => c.id === fin.id));
  const finTok = fin.token ?? `#${fin.id}`;
  let html = `<h2>${esc(t("lens_title", { tok: d.tokens ? d.tokens[d.position] : d.position, i: d.position }))}</h2>` +
    `<p class="caption" id="lens-caption">${t("lens_caption", { k, final: esc(finTok), last: n - 1 })}</p>` +
    `<div class="table-wrap lens-wrap"><table class="lens-table"><thead><tr><th>${t("lens_th_row")}</th>`;
  for (let r = 1; r <= k; r++) html += `<th class="rank">${r}</th>`;
  const pfin = esc(t("lens_th_final", { final: finTok }));
  html += `<th class="pfin" title="${pfin}"><span>${pfin}</span></th></tr></thead><tbody>`;
  d.layers.forEach((row, L) => {
    const name = lensRow(L, n);
    html += `<tr data-layer="${L}"${L === n ? ' class="out"' : ""}><th title="${esc(name)} · ${esc(row.name)}"><span class="long">${esc(name)}</span>` +
      `<span class="short">${esc(lensShort(L, n))}</span></th>`;
    row.top.forEach((c, r) => {
      const tok = c.token ?? `#${c.id}`, mark = c.id === fin.id ? (L === first ? " final first" : " final") : "";
      html += `<td class="lens-cell${mark}" data-field="token" data-rank="${r + 1}" data-id="${c.id}" style="${rampStyle(c.p)}" ` +
        `title="${esc(lensCellLine(L, r, c, n))}"><span class="tok">${tokHtml(tok)}</span>` +
        `<span class="num" data-field="p">${fmt(c.p)}</span></td>`;
    });
    html += `<td class="num pfin" data-field="p_final">${fmt(row.p_final)}</td></tr>`;
  });
  html += `</tbody></table></div><p class="cell-line" id="lens-cell"></p>`;
  if (first >= 0) {
    html += `<p class="caption" id="lens-first">${t("lens_first", { final: esc(finTok), k, where: lensWhere(first, n),
      p: `<span class="num">${fmt(d.layers[first].p_final)}</span>`, pout: `<span class="num">${fmt(d.layers[n].p_final)}</span>` })}</p>`;
  }
  el.innerHTML = html;
  el.dataset.state = "ready";
  el.dataset.token = d.position;
  el.dataset.ids = d.ids.join(",");
  if (LENS.picked) lensPick(d, ...LENS.picked);
}

/** Tap (or click) the cell at row L, rank r (0-based): outline it and write its line under the table. */
function lensPick(d, L, r) {
  const td = $(`#lens tr[data-layer="${L}"] td[data-rank="${r + 1}"]`);
  if (!td) return;
  for (const x of document.querySelectorAll("#lens td.picked")) x.classList.remove("picked");
  td.classList.add("picked");
  LENS.picked = [L, r];
  $("#lens-cell").textContent = lensCellLine(L, r, d.layers[L].top[r], d.layers.length - 1);
}

/** The request for the page's text and token was refused: the server's line, no table (it would be an
 *  older request's). */
function lensFail(msg) {
  const el = $("#lens");
  el.innerHTML = `<h2>${t("lens_name")}</h2>`;
  el.dataset.state = "error";
  LENS.shown = ""; LENS.picked = null;
  showErrorIn(el, msg);
}

function lensNote(key) {
  const el = $("#lens");
  el.innerHTML = `<h2>${t("lens_name")}</h2><p class="note">${t(key)}</p>`;
  el.dataset.state = "note";
  LENS.shown = "";
}

async function lensFetch(key, body) {
  const req = ++LENS.req;
  busy(true);
  try {
    const d = await api("api/lens", body);
    LENS.cache.set(key, d);
    if (LENS.cache.size > 64) LENS.cache.delete(LENS.cache.keys().next().value);
    if (req === LENS.req) lensShow(key, d);
  } catch (e) {
    if (req === LENS.req) lensFail(e.message);
  } finally {
    busy(false);
  }
}

function lensShow(key, d) {
  if (key !== LENS.shown) LENS.picked = null;  // another text or token: its cells are other cells
  LENS.shown = key;
  lensDraw(d);
}

function lensRender(what) {
  if (!S.doc) return;
  if (S.mode === "static") { lensNote("lens_static"); return; }
  if (S.tr || !predictsNext()) { lensNote(S.tr ? "lens_tr" : "lens_no_lm"); return; }
  const key = lensKey();
  clearTimeout(LENS.timer);
  if (key === LENS.shown && what !== "lang") return;  // nothing of ours changed
  const d = LENS.cache.get(key);
  if (d) { LENS.req++; lensShow(key, d); return; }
  const el = $("#lens");
  LENS.shown = "";
  el.dataset.state = "loading";
  if (!el.querySelector("table")) el.innerHTML = `<h2>${t("lens_name")}</h2><p class="caption">${t("lens_loading")}</p>`;
  const body = { ids: S.doc.ids, token: S.token, top: LENS_TOP };
  LENS.timer = setTimeout(() => lensFetch(key, body), LENS_WAIT);
}

register({
  name: "lens",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() {
    $("#lens").addEventListener("click", (e) => {  // a finger has no hover: a tap writes the cell's line
      const td = e.target.closest("td.lens-cell"), d = LENS.cache.get(LENS.shown);
      if (td && d) lensPick(d, +td.closest("tr").dataset.layer, +td.dataset.rank - 1);
    });
  },
  onDoc() { LENS.shown = ""; },
  render(what) { lensRender(what); },
  lang() {  // everything again in the new language; a refusal is asked again, for the server's line in it
    const d = LENS.cache.get(LENS.shown);
    if (d) lensDraw(d); else if (S.doc) lensRender("lang");
  },
});

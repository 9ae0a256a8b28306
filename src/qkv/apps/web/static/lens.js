// lens panel (registered in panels.js): the logit lens at the page's query token.
// api/lens (qkv.analysis.lens.lens_top) reads the residual stream entering each block, and leaving the
// last one, through the model's own final norm and unembedding: row L is what the model would predict if
// it stopped before block L, the last row its output. Each row shows the top LENS_TOP next tokens, shaded
// by probability; the cell where the model's final prediction first enters a row's top list is outlined.
// Requests wait LENS_WAIT ms after the last change; only the newest answer is drawn; answers are kept
// per (ids, token). An encoder or a translation model has no such stream to read: a one-line note.

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showErrorIn } from "./errors.js";
import { register } from "./panels.js";
import { rampStyle } from "./shade.js";

Object.assign(I18N.en, {
  lens_name: "Logit lens",
  lens_title: "Logit lens: what the model would predict after each layer, after “{tok}” (position {i})",
  lens_caption: "Row L puts the residual stream as it enters layer L (row 0: the embeddings alone) straight through " +
    "the model's own final norm and unembedding, as if the model stopped there: P = softmax(LN_final(x) W_U + b_U). " +
    "The last row is the model's output. Each cell is one of the {k} most probable next tokens, shaded by its " +
    "probability; the outlined cell is where the final prediction, “{final}”, first enters a row's top {k}.",
  lens_th_row: "after", lens_th_final: "p(“{final}”)",
  lens_row_embed: "embeddings", lens_row_layer: "layer {l}", lens_row_out: "layer {l} (output)",
  lens_short_embed: "emb", lens_short_out: "L{l} out",
  lens_first: "“{final}” first enters the top {k} after {where} (p = {p}); the output gives it p = {pout}.",
  lens_where_embed: "the embeddings", lens_where_layer: "layer {l}",
  lens_cell: "{row}: “{tok}” (id {id}), p = {p}",
  lens_loading: "Computing…",
  lens_static: "The logit lens runs the model again: run <code>qkv serve</code> to see it.",
  lens_no_lm: "The logit lens reads a residual stream through the unembedding: this model (an encoder) has none.",
  lens_tr: "The logit lens is shown for a GPT's residual stream, not for a translation model.",
});
Object.assign(I18N.zh, {
  lens_name: "逐层预测 (logit lens)",
  lens_title: "逐层预测 (logit lens)：如果模型在每一层之后就停下，它会在「{tok}」（位置 {i}）之后预测什么",
  lens_caption: "第 L 行把进入层 L 时的残差流（第 0 行：只有嵌入）直接送进模型自己的最终归一化和反嵌入，" +
    "就像模型在那里停下：P = softmax(LN_final(x) W_U + b_U)。最后一行就是模型的输出。每一格是概率最高的 {k} 个下一个词元之一，" +
    "颜色越深概率越大；加框的格子是最终预测「{final}」第一次进入某一行前 {k} 名的地方。",
  lens_th_row: "经过", lens_th_final: "p(“{final}”)",
  lens_row_embed: "嵌入", lens_row_layer: "层 {l} 之后", lens_row_out: "层 {l} 之后（输出）",
  lens_short_embed: "嵌入", lens_short_out: "L{l} 输出",
  lens_first: "「{final}」在{where}第一次进入前 {k} 名（p = {p}）；模型输出给它的概率是 {pout}。",
  lens_where_embed: "嵌入", lens_where_layer: "层 {l} 之后",
  lens_cell: "{row}：「{tok}」（编号 {id}），p = {p}",
  lens_loading: "计算中……",
  lens_static: "逐层预测要重新运行模型：运行 <code>qkv serve</code> 才能看到。",
  lens_no_lm: "逐层预测是把残差流送进反嵌入来读：这个模型（编码器）没有反嵌入。",
  lens_tr: "逐层预测只对 GPT 的残差流展示，不用于翻译模型。",
});

const LENS_WAIT = 120, LENS_TOP = 5;
const LENS = { cache: new Map(), req: 0, timer: 0, shown: "" };

const lensKey = () => `${S.token}|${S.doc.ids.join(",")}`;

/** Row L's name: the embeddings, after layer L − 1, or the output. */
function lensRow(L, n) {
  if (L === 0) return t("lens_row_embed");
  return t(L === n ? "lens_row_out" : "lens_row_layer", { l: L - 1 });
}

/** Its short name, for a phone: emb, L0, L1, ..., L{n-1} out. */
function lensShort(L, n) {
  if (L === 0) return t("lens_short_embed");
  return L === n ? t("lens_short_out", { l: L - 1 }) : `L${L - 1}`;
}

function lensDraw(d) {
  const el = $("#lens"), n = d.layers.length - 1, k = d.k, fin = d.final;
  const first = d.layers.findIndex((r) => r.top.some((c) => c.id === fin.id));
  const finTok = fin.token ?? `#${fin.id}`;
  let html = `<h2>${esc(t("lens_title", { tok: d.tokens ? d.tokens[d.position] : d.position, i: d.position }))}</h2>` +
    `<p class="caption">${t("lens_caption", { k, final: esc(finTok) })}</p>` +
    `<div class="table-wrap lens-wrap"><table class="lens-table"><thead><tr><th>${t("lens_th_row")}</th>`;
  for (let r = 1; r <= k; r++) html += `<th class="rank">${r}</th>`;
  const pfin = esc(t("lens_th_final", { final: finTok }));
  html += `<th class="pfin" title="${pfin}"><span>${pfin}</span></th></tr></thead><tbody>`;
  d.layers.forEach((row, L) => {
    const name = lensRow(L, n);
    html += `<tr data-layer="${L}"${L === n ? ' class="out"' : ""}><th title="${esc(row.name)}"><span class="long">${esc(name)}</span>` +
      `<span class="short">${esc(lensShort(L, n))}</span></th>`;
    row.top.forEach((c, r) => {
      const tok = c.token ?? `#${c.id}`, mark = c.id === fin.id ? (L === first ? " final first" : " final") : "";
      html += `<td class="lens-cell${mark}" data-field="token" data-rank="${r + 1}" data-id="${c.id}" style="${rampStyle(c.p)}" ` +
        `title="${esc(t("lens_cell", { row: name, tok, id: c.id, p: fmt(c.p) }))}"><span class="tok">${esc(tok)}</span>` +
        `<span class="num" data-field="p">${fmt(c.p)}</span></td>`;
    });
    html += `<td class="num pfin" data-field="p_final">${fmt(row.p_final)}</td></tr>`;
  });
  html += `</tbody></table></div>`;
  if (first >= 0) {
    const where = first === 0 ? t("lens_where_embed") : t("lens_where_layer", { l: first - 1 });
    html += `<p class="caption" id="lens-first">${t("lens_first", { final: esc(finTok), k, where,
      p: `<span class="num">${fmt(d.layers[first].p_final)}</span>`, pout: `<span class="num">${fmt(d.layers[n].p_final)}</span>` })}</p>`;
  }
  el.innerHTML = html;
  el.dataset.state = "ready";
  el.dataset.token = d.position;
  el.dataset.ids = d.ids.join(",");
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
    if (req === LENS.req) { LENS.shown = key; showErrorIn("#lens", ""); lensDraw(d); }
  } catch (e) {
    if (req === LENS.req) { $("#lens").dataset.state = "error"; showErrorIn("#lens", e.message); }
  } finally {
    busy(false);
  }
}

function lensRender(what) {
  if (!S.doc) return;
  if (S.mode === "static") { lensNote("lens_static"); return; }
  if (S.tr || !predictsNext()) { lensNote(S.tr ? "lens_tr" : "lens_no_lm"); return; }
  const key = lensKey();
  clearTimeout(LENS.timer);
  if (key === LENS.shown && what !== "lang") return;  // nothing of ours changed
  const d = LENS.cache.get(key);
  if (d) { LENS.req++; LENS.shown = key; lensDraw(d); return; }
  const el = $("#lens");
  LENS.shown = "";
  el.dataset.state = "loading";
  if (!el.querySelector("table")) el.innerHTML = `<p class="caption">${t("lens_loading")}</p>`;
  const body = { ids: S.doc.ids, token: S.token, top: LENS_TOP };
  LENS.timer = setTimeout(() => lensFetch(key, body), LENS_WAIT);
}

register({
  name: "lens",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  onDoc() { LENS.shown = ""; },
  render(what) { lensRender(what); },
  lang() { const d = LENS.cache.get(LENS.shown); if (d) lensDraw(d); else if (S.doc) lensRender("lang"); },
});

// attribution panel (registered in panels.js): direct logit attribution at the page's query token.
// api/attribution (qkv.analysis.attribution) splits the logit of one next token (the model's own top
// prediction, or a word the learner types) into one term per part that wrote into the residual stream:
// the embeddings, each head's z_h W_O[h], each layer's b_O and MLP, and the constants; held at this run's
// final-norm scale, the terms add up to the logit exactly. The heads are an n_layers x n_heads table on a
// diverging scale, the rest one bar each, and a line shows the sum beside the model's logit. Requests wait
// ATTR_WAIT ms after the last change; only the newest answer is drawn; answers are kept per (ids, token,
// target). An encoder or a translation model has no such logit: a one-line note.

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { register } from "./panels.js";
import { absMax, divergeStyle } from "./shade.js";

Object.assign(I18N.en, {
  attr_name: "Direct logit attribution",
  attr_title: "Direct logit attribution: who writes the logit of “{target}” after “{tok}” (position {i})",
  attr_default: "(the model's top prediction)",
  attr_caption: "The residual stream at the end is a sum of what each part wrote into it: the embeddings, every " +
    "head's z_h W_O[h], every layer's b_O and MLP. With the final norm's scale s held at this run's value ({s}), " +
    "the logit splits into one term per part, each read along W_U[:, t] (centred first, for LayerNorm), and the " +
    "terms add up to the logit exactly. “Direct”: a head's term is what it adds through the residual stream " +
    "alone, not through the layers that read it later.",
  attr_target: "Next token", attr_placeholder: "the model's top prediction", attr_run: "Attribute",
  attr_sum: "Sum of the {n} terms: {total} · the model's logit: {logit} · difference: {diff} (float rounding)",
  attr_groups: "All heads: {heads} · all MLPs: {mlp} · embeddings: {emb} · biases and constants: {rest}",
  attr_heads: "Each head's term (layers down, heads across)",
  attr_scale: "Blue raises the logit, red lowers it; the colours run to ±{m}, the largest term in the table.",
  attr_other: "The embeddings, each layer's attention bias and MLP, and the constant terms",
  attr_embed: "token embedding", attr_pos: "position embedding", attr_bias: "layer {l} attention bias b_O",
  attr_mlp: "layer {l} MLP", attr_lnb: "final LayerNorm's bias", attr_bu: "unembedding bias b_U",
  attr_cell: "layer {l}, head {h}: {v}",
  attr_loading: "Computing…",
  attr_static: "Direct logit attribution runs the model again: run <code>qkv serve</code> to see it.",
  attr_no_lm: "Direct logit attribution splits a next-token logit: this model (an encoder) predicts no next token.",
  attr_tr: "Direct logit attribution is shown for a GPT, not for a translation model.",
});
Object.assign(I18N.zh, {
  attr_name: "直接归因 (direct logit attribution)",
  attr_title: "直接归因：「{tok}」（位置 {i}）之后，谁写下了「{target}」的 <code>logit</code>",
  attr_default: "（模型自己的第一名预测）",
  attr_caption: "最后的残差流是各个部分写进去的量之和：嵌入、每个头的 z_h W_O[h]、每一层的 b_O 和 MLP。" +
    "把最终归一化的缩放 s 固定为这次运行的值（{s}），<code>logit</code> 就拆成每个部分一项，各自沿 W_U[:, t] 读出" +
    "（LayerNorm 还要先减去均值），各项加起来正好等于 <code>logit</code>。“直接”是说：一个头的这一项只算它经残差流直接送到输出的部分，" +
    "不算它经过后面各层产生的影响。",
  attr_target: "下一个词元", attr_placeholder: "模型自己的第一名预测", attr_run: "归因",
  attr_sum: "{n} 项之和：{total} · 模型的 <code>logit</code>：{logit} · 差：{diff}（浮点舍入）",
  attr_groups: "所有头合计 {heads} · 所有 MLP 合计 {mlp} · 嵌入合计 {emb} · 偏置与常数合计 {rest}",
  attr_heads: "每个头的一项（行是层，列是头）",
  attr_scale: "蓝色抬高 <code>logit</code>，红色压低它；颜色刻度到 ±{m}，即表中最大的一项。",
  attr_other: "嵌入、每一层的注意力偏置和 MLP，以及常数项",
  attr_embed: "词元嵌入", attr_pos: "位置嵌入", attr_bias: "层 {l} 注意力偏置 b_O",
  attr_mlp: "层 {l} MLP", attr_lnb: "最终 LayerNorm 的偏置", attr_bu: "反嵌入偏置 b_U",
  attr_cell: "层 {l} 头 {h}：{v}",
  attr_loading: "计算中……",
  attr_static: "直接归因要重新运行模型：运行 <code>qkv serve</code> 才能看到。",
  attr_no_lm: "直接归因拆的是下一个词元的 <code>logit</code>：这个模型（编码器）不预测下一个词元。",
  attr_tr: "直接归因只对 GPT 展示，不用于翻译模型。",
});

const ATTR_WAIT = 120;
const ATTR = { cache: new Map(), req: 0, timer: 0, shown: "", error: false };

const attrTarget = () => $("#attr-target").value.trim();
const attrKey = () => `${S.token}|${attrTarget()}|${S.doc.ids.join(",")}`;

/** A component's label: embed, pos_embed, L{l}_b_O, L{l}_mlp, ln_final_b, b_U. */
function attrLabel(name) {
  const m = /^L(\d+)_(b_O|mlp)$/.exec(name);
  if (m) return t(m[2] === "mlp" ? "attr_mlp" : "attr_bias", { l: +m[1] });
  return t({ embed: "attr_embed", pos_embed: "attr_pos", ln_final_b: "attr_lnb", b_U: "attr_bu" }[name] || name);
}

function attrBuild() {
  $("#attribution").innerHTML = `<h2 id="attr-h">${t("attr_name")}</h2>` +
    `<div class="attr-form"><label><span data-i18n="attr_target">${t("attr_target")}</span>` +
    `<input id="attr-target" type="text" spellcheck="false" data-i18n-placeholder="attr_placeholder" placeholder="${esc(t("attr_placeholder"))}"></label>` +
    `<button id="attr-run" type="button" class="primary" data-i18n="attr_run">${t("attr_run")}</button></div>` +
    `<p id="attr-error" class="error" role="alert" hidden></p><div id="attr-result"></div>`;
  const go = () => attrRender("target");
  $("#attr-run").addEventListener("click", go);
  $("#attr-target").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); go(); } });
}

function attrError(msg) {
  const el = $("#attr-error");
  el.textContent = msg || ""; el.hidden = !msg; ATTR.error = !!msg;
}

function attrDraw(d) {
  const el = $("#attribution"), box = $("#attr-result");
  const tok = d.tokens ? d.tokens[d.position] : String(d.position), target = d.token_text ?? `#${d.token}`;
  $("#attr-h").innerHTML = t("attr_title", { target: esc(target), tok: esc(tok), i: d.position }) +
    (d.typed ? "" : ` <span class="attr-default">${t("attr_default")}</span>`);
  const L = d.heads.length, H = L ? d.heads[0].length : 0, m = absMax(d.heads.flat());
  const sum = (xs) => (xs || []).reduce((a, x) => a + x, 0);
  const emb = d.embed + (d.pos_embed ?? 0), heads = sum(d.heads.flat()), mlp = d.mlp ? sum(d.mlp) : null;
  const rest = d.total - emb - heads - (mlp ?? 0);
  const n = d.components.length;
  let html = `<p class="caption">${t("attr_caption", { s: fmt(d.scale) })}</p>` +
    `<p class="attr-sum" id="attr-sum">${t("attr_sum", { n, total: `<span class="num" data-field="total">${fmt(d.total)}</span>`,
      logit: `<span class="num" data-field="logit">${fmt(d.logit)}</span>`, diff: `<span class="num">${fmt(d.rounding)}</span>` })}</p>` +
    `<p class="caption attr-groups">${t("attr_groups", { heads: `<span class="num">${fmt(heads)}</span>`,
      mlp: `<span class="num">${fmt(mlp)}</span>`, emb: `<span class="num">${fmt(emb)}</span>`, rest: `<span class="num">${fmt(rest)}</span>` })}</p>` +
    `<div class="attr-cols"><div class="attr-col"><h3>${t("attr_heads")}</h3><div class="table-wrap"><table class="attr-heads"><thead><tr><th></th>`;
  for (let j = 0; j < H; j++) html += `<th>H${j}</th>`;
  html += `</tr></thead><tbody>`;
  for (let l = 0; l < L; l++) {
    html += `<tr><th>L${l}</th>`;
    for (let j = 0; j < H; j++) {
      const v = d.heads[l][j];
      html += `<td class="num" data-layer="${l}" data-head="${j}" style="${divergeStyle(v / m)}" ` +
        `title="${esc(t("attr_cell", { l, h: j, v: fmt(v) }))}">${fmt(v)}</td>`;
    }
    html += `</tr>`;
  }
  html += `</tbody></table></div><p class="caption">${t("attr_scale", { m: fmt(m) })}</p></div>`;
  // the other terms: one bar each, either side of 0
  const others = d.components.filter((c) => !/^L\d+H\d+$/.test(c.name));
  const mo = absMax(others.map((c) => c.value));
  html += `<div class="attr-col"><h3>${t("attr_other")}</h3><div class="attr-bars">`;
  for (const c of others) {
    const w = Number.isFinite(c.value) ? (50 * Math.abs(c.value) / mo).toFixed(1) : "0";
    html += `<div class="attr-bar" data-name="${esc(c.name)}"><span class="lab">${esc(attrLabel(c.name))}</span>` +
      `<span class="track"><span class="fill ${c.value >= 0 ? "pos" : "neg"}" style="width:${w}%"></span></span>` +
      `<span class="num" data-field="value">${fmt(c.value)}</span></div>`;
  }
  html += `</div></div></div>`;
  box.innerHTML = html;
  el.dataset.state = "ready";
  Object.assign(el.dataset, { token: d.position, target: d.token, ids: d.ids.join(",") });
}

function attrNote(key) {
  $("#attr-h").innerHTML = t("attr_name");
  $("#attr-target").disabled = true; $("#attr-run").disabled = true;
  $("#attr-result").innerHTML = `<p class="note">${t(key)}</p>`;
  $("#attribution").dataset.state = "note";
  ATTR.shown = "";
}

async function attrFetch(key, body) {
  const req = ++ATTR.req;
  busy(true);
  try {
    const d = await api("api/attribution", body);
    d.typed = body.target !== undefined;
    ATTR.cache.set(key, d);
    if (ATTR.cache.size > 64) ATTR.cache.delete(ATTR.cache.keys().next().value);
    if (req === ATTR.req) { ATTR.shown = key; attrError(""); attrDraw(d); }
  } catch (e) {
    if (req === ATTR.req) { $("#attribution").dataset.state = "error"; attrError(e.message); }
  } finally {
    busy(false);
  }
}

function attrRender(what) {
  if (!S.doc) return;
  if (S.mode === "static") { attrNote("attr_static"); return; }
  if (S.tr || !predictsNext()) { attrNote(S.tr ? "attr_tr" : "attr_no_lm"); return; }
  $("#attr-target").disabled = false; $("#attr-run").disabled = false;
  const key = attrKey();
  clearTimeout(ATTR.timer);
  if (key === ATTR.shown && what !== "lang") return;  // nothing of ours changed
  const d = ATTR.cache.get(key);
  if (d) { ATTR.req++; ATTR.shown = key; attrError(""); attrDraw(d); return; }
  const el = $("#attribution"), box = $("#attr-result");
  ATTR.shown = "";
  el.dataset.state = "loading";
  if (!box.querySelector("table")) box.innerHTML = `<p class="caption">${t("attr_loading")}</p>`;
  const body = { ids: S.doc.ids, token: S.token }, target = attrTarget();
  if (target) body.target = target;
  ATTR.timer = setTimeout(() => attrFetch(key, body), ATTR_WAIT);
}

register({
  name: "attribution",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() { attrBuild(); },
  onDoc() { ATTR.shown = ""; },
  render(what) { attrRender(what); },
  lang() {
    const d = ATTR.cache.get(ATTR.shown);
    if (d && !ATTR.error) attrDraw(d);
    else if (S.doc) attrRender("lang");  // an error line is asked again, in the new language
  },
});

// attribution panel (registered in panels.js): direct logit attribution at the page's query token.
// api/attribution (qkv.analysis.attribution) splits the logit of one next token (the model's own top
// prediction, or what the learner types: digits alone, 173 or #173, a token id; anything else a word)
// into one term per part that wrote into the residual stream: the embeddings, each head's z_h W_O[h],
// each layer's b_O and MLP (those the model has), and the constants; held at this run's final-norm
// scale, the terms add up to the logit exactly. The heads are an n_layers x n_heads table on a diverging
// scale (a tap on a cell writes its line under it), the rest one bar each, and a line shows the sum
// beside the model's logit. Requests wait ATTR_WAIT ms after the last change; only the newest answer is
// drawn; answers are kept per (ids, token, target); a refused request leaves the server's line and no
// result (an older request's would sit under it). An encoder or a translation model has no such logit:
// a one-line note.

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, chosen, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { formKeep, register } from "./panels.js";
import { absMax, divergeStyle } from "./shade.js";

Object.assign(I18N.en, {
  attr_name: "Direct logit attribution",
  attr_title: "Direct logit attribution: who writes the logit of “{target}” after “{tok}” (position {i})",
  attr_default: "(the model's top prediction)",
  attr_caption: "The residual stream at the end is a sum of what each part wrote into it: {parts}. With the final " +
    "norm's scale s held at this run's value ({s}), the logit splits into one term per part, each read along " +
    "W_U[:, t]{centred}, and the terms add up to the logit exactly. “Direct”: a head's term is what it adds " +
    "through the residual stream alone, not through the layers that read it later.",
  attr_part_embed: "the embeddings", attr_part_heads: "every head's z_h W_O[h]", attr_part_bias: "every layer's b_O",
  attr_part_mlp: "every layer's MLP", attr_sep: ", ", attr_last_sep: " and ",
  attr_centred: " (centred first, as LayerNorm does)",
  attr_target: "Next token", attr_placeholder: "empty: the model's top prediction", attr_run: "Attribute",
  attr_help: "A word, or a token id: digits alone (173, or #173) are an id, anything else is read as a word.",
  attr_sum: "Sum of the {n} terms: {total} · the model's logit: {logit} · difference: {diff} (float rounding)",
  attr_groups: "All heads: {heads} · all MLPs: {mlp} · embeddings: {emb} · biases and constants: {rest}",
  attr_groups_nomlp: "All heads: {heads} · embeddings: {emb} · biases and constants: {rest}",
  attr_heads: "Each head's term (layers down, heads across)",
  attr_scale: "Blue raises the logit, red lowers it; the colours run to ±{m}, the largest term in the table. " +
    "Hover over a cell, or tap it, for its line.",
  attr_other: "The other terms: {parts}",
  attr_other_embed: "the embeddings", attr_other_bias: "each layer's attention bias", attr_other_mlp: "each layer's MLP",
  attr_other_const: "the constant terms",
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
  attr_caption: "最后的残差流是各个部分写进去的量之和：{parts}。把最终归一化的缩放 s 固定为这次运行的值（{s}），" +
    "<code>logit</code> 就拆成每个部分一项，各自沿 W_U[:, t] 读出{centred}，各项加起来正好等于 <code>logit</code>。" +
    "「直接」是说：一个头的这一项只算它经残差流直接送到输出的部分，不算它经过后面各层产生的影响。",
  attr_part_embed: "嵌入", attr_part_heads: "每个头的 z_h W_O[h]", attr_part_bias: "每一层的 b_O",
  attr_part_mlp: "每一层的 MLP", attr_sep: "、", attr_last_sep: "、",
  attr_centred: "（先像 LayerNorm 那样减去均值）",
  attr_target: "下一个词元", attr_placeholder: "留空：模型自己的第一名预测", attr_run: "归因",
  attr_help: "填一个词，或一个词元编号：只有数字（173 或 #173）就是编号，其他都当作词来读。",
  attr_sum: "{n} 项之和：{total} · 模型的 <code>logit</code>：{logit} · 差：{diff}（浮点舍入）",
  attr_groups: "所有头合计 {heads} · 所有 MLP 合计 {mlp} · 嵌入合计 {emb} · 偏置与常数合计 {rest}",
  attr_groups_nomlp: "所有头合计 {heads} · 嵌入合计 {emb} · 偏置与常数合计 {rest}",
  attr_heads: "每个头的一项（行是层，列是头）",
  attr_scale: "蓝色抬高 <code>logit</code>，红色压低它；颜色刻度到 ±{m}，即表中最大的一项。鼠标停在格子上（或点一下格子）可以看到它的数值。",
  attr_other: "其余各项：{parts}",
  attr_other_embed: "嵌入", attr_other_bias: "每一层的注意力偏置", attr_other_mlp: "每一层的 MLP",
  attr_other_const: "常数项",
  attr_embed: "词元嵌入", attr_pos: "位置嵌入", attr_bias: "层 {l} 注意力偏置 b_O",
  attr_mlp: "层 {l} MLP", attr_lnb: "最终 LayerNorm 的偏置", attr_bu: "反嵌入偏置 b_U",
  attr_cell: "层 {l} 头 {h}：{v}",
  attr_loading: "计算中……",
  attr_static: "直接归因要重新运行模型：运行 <code>qkv serve</code> 才能看到。",
  attr_no_lm: "直接归因拆的是下一个词元的 <code>logit</code>：这个模型（编码器）不预测下一个词元。",
  attr_tr: "直接归因只对 GPT 展示，不用于翻译模型。",
});

const ATTR_WAIT = 120;
// shown: the key drawn ("" while loading or after a refusal); error: the refusal's line is showing (then
// no result is: it would be an older request's); picked: the tapped head [layer, head] of the drawn answer
const ATTR = { cache: new Map(), req: 0, timer: 0, shown: "", error: false, picked: null };

/** The field's value as the request's target: digits alone (173, or #173) are a token id, anything
 *  else a word; empty: undefined (the model's top prediction). */
function attrTarget(value = $("#attr-target").value) {
  const v = value.trim(), id = /^#?(\d+)$/.exec(v);
  return id ? Number(id[1]) : v || undefined;
}
const attrKey = () => `${S.token}|${JSON.stringify(attrTarget() ?? null)}|${S.doc.ids.join(",")}`;

/** A component's label: embed, pos_embed, L{l}_b_O, L{l}_mlp, ln_final_b, b_U. */
function attrLabel(name) {
  const m = /^L(\d+)_(b_O|mlp)$/.exec(name);
  if (m) return t(m[2] === "mlp" ? "attr_mlp" : "attr_bias", { l: +m[1] });
  return t({ embed: "attr_embed", pos_embed: "attr_pos", ln_final_b: "attr_lnb", b_U: "attr_bu" }[name] || name);
}

/** Words a, b and c, in the language's way of listing them. */
function listed(words) {
  if (words.length < 2) return words.join("");
  return words.slice(0, -1).join(t("attr_sep")) + t("attr_last_sep") + words[words.length - 1];
}

/** The parts this model has (no MLP on an attention-only model, no b_O without biases), for the caption
 *  and the heading of the bars. */
function attrParts(d) {
  const names = d.components.map((c) => c.name), has = (re) => names.some((n) => re.test(n));
  const caption = ["attr_part_embed", "attr_part_heads"];
  if (d.attn_bias) caption.push("attr_part_bias");
  if (d.mlp) caption.push("attr_part_mlp");
  const other = [];
  if (has(/^(pos_)?embed$/)) other.push("attr_other_embed");
  if (has(/_b_O$/)) other.push("attr_other_bias");
  if (has(/_mlp$/)) other.push("attr_other_mlp");
  if (has(/^(ln_final_b|b_U)$/)) other.push("attr_other_const");
  return { caption: listed(caption.map((k) => t(k))), other: listed(other.map((k) => t(k))) };
}

function attrBuild() {
  $("#attribution").innerHTML = `<h2 id="attr-h">${t("attr_name")}</h2>` +
    `<div class="attr-form"><label><span data-i18n="attr_target">${t("attr_target")}</span>` +
    `<input id="attr-target" type="text" spellcheck="false" aria-describedby="attr-help" data-i18n-placeholder="attr_placeholder" placeholder="${esc(t("attr_placeholder"))}"></label>` +
    `<button id="attr-run" type="button" class="primary" data-i18n="attr_run">${t("attr_run")}</button></div>` +
    `<p id="attr-help" class="caption attr-help" data-i18n="attr_help">${t("attr_help")}</p>` +
    `<p id="attr-error" class="error" role="alert" hidden></p><div id="attr-result"></div>`;
  const go = () => attrRender("target");
  $("#attr-run").addEventListener("click", go);
  $("#attr-target").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); go(); } });
  $("#attr-result").addEventListener("click", (e) => {  // a finger has no hover: a tap writes the cell's line
    const td = e.target.closest("td[data-head]"), d = ATTR.cache.get(ATTR.shown);
    if (td && d) attrPick(d, +td.dataset.layer, +td.dataset.head);
  });
}

/** The refused request's line (msg; "" clears it). While it shows, the title and the result are
 *  cleared: they were an older request's. */
function attrError(msg) {
  const el = $("#attr-error");
  el.textContent = msg || ""; el.hidden = !msg; ATTR.error = !!msg;
  if (!msg) return;
  $("#attr-h").innerHTML = t("attr_name");
  $("#attr-result").innerHTML = "";
  $("#attribution").dataset.state = "error";
  ATTR.shown = ""; ATTR.picked = null;
}

const attrCellLine = (d, l, h) => t("attr_cell", { l, h, v: fmt(d.heads[l][h]) });

/** Tap (or click) head h of layer l: outline it and write its line under the table. */
function attrPick(d, l, h) {
  const td = $(`#attr-result td[data-layer="${l}"][data-head="${h}"]`);
  if (!td) return;
  for (const x of document.querySelectorAll("#attr-result td.picked")) x.classList.remove("picked");
  td.classList.add("picked");
  ATTR.picked = [l, h];
  $("#attr-cell").textContent = attrCellLine(d, l, h);
}

function attrDraw(d) {
  const el = $("#attribution"), box = $("#attr-result");
  const tok = d.tokens ? d.tokens[d.position] : String(d.position);
  const target = d.typed ? chosen(d.token_text, d.token) : d.token_text ?? `#${d.token}`;  // a typed word: its id too
  $("#attr-h").innerHTML = t("attr_title", { target: esc(target), tok: esc(tok), i: d.position }) +
    (d.typed ? "" : ` <span class="attr-default">${t("attr_default")}</span>`);
  const L = d.heads.length, H = L ? d.heads[0].length : 0, m = absMax(d.heads.flat());
  const sum = (xs) => (xs || []).reduce((a, x) => a + x, 0);
  const emb = d.embed + (d.pos_embed ?? 0), heads = sum(d.heads.flat()), mlp = d.mlp ? sum(d.mlp) : null;
  const rest = d.total - emb - heads - (mlp ?? 0);
  const n = d.components.length, parts = attrParts(d);
  const centred = d.norm === "pre" ? t("attr_centred") : "";
  let html = `<p class="caption" id="attr-caption">${t("attr_caption", { s: fmt(d.scale), parts: parts.caption, centred })}</p>` +
    `<p class="attr-sum" id="attr-sum">${t("attr_sum", { n, total: `<span class="num" data-field="total">${fmt(d.total)}</span>`,
      logit: `<span class="num" data-field="logit">${fmt(d.logit)}</span>`, diff: `<span class="num">${fmt(d.rounding)}</span>` })}</p>` +
    `<p class="caption attr-groups">${t(d.mlp ? "attr_groups" : "attr_groups_nomlp", { heads: `<span class="num">${fmt(heads)}</span>`,
      mlp: `<span class="num">${fmt(mlp)}</span>`, emb: `<span class="num">${fmt(emb)}</span>`, rest: `<span class="num">${fmt(rest)}</span>` })}</p>` +
    `<div class="attr-cols"><div class="attr-col"><h3>${t("attr_heads")}</h3><div class="table-wrap"><table class="attr-heads"><thead><tr><th></th>`;
  for (let j = 0; j < H; j++) html += `<th>${t("tab_head", { h: j })}</th>`;
  html += `</tr></thead><tbody>`;
  for (let l = 0; l < L; l++) {
    html += `<tr><th>${t("tab_layer", { l })}</th>`;
    for (let j = 0; j < H; j++) {
      const v = d.heads[l][j];
      html += `<td class="num" data-layer="${l}" data-head="${j}" style="${divergeStyle(v / m)}" ` +
        `title="${esc(attrCellLine(d, l, j))}">${fmt(v)}</td>`;
    }
    html += `</tr>`;
  }
  html += `</tbody></table></div><p class="cell-line" id="attr-cell"></p><p class="caption">${t("attr_scale", { m: fmt(m) })}</p></div>`;
  // the other terms: one bar each, either side of 0
  const others = d.components.filter((c) => !/^L\d+H\d+$/.test(c.name));
  const mo = absMax(others.map((c) => c.value));
  html += `<div class="attr-col"><h3 id="attr-other">${t("attr_other", { parts: parts.other })}</h3><div class="attr-bars">`;
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
  if (ATTR.picked) attrPick(d, ...ATTR.picked);
}

function attrShow(key, d) {
  if (key !== ATTR.shown) ATTR.picked = null;  // another answer: its cells are other cells
  ATTR.shown = key; attrError(""); attrDraw(d);
}

function attrNote(key) {
  $("#attr-h").innerHTML = t("attr_name");
  $("#attr-target").disabled = true; $("#attr-run").disabled = true;
  attrError("");
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
    if (req === ATTR.req) attrShow(key, d);
  } catch (e) {
    if (req === ATTR.req) attrError(e.message);
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
  if (d) { ATTR.req++; attrShow(key, d); return; }
  const el = $("#attribution"), box = $("#attr-result");
  ATTR.shown = "";
  el.dataset.state = "loading";
  if (!box.querySelector("table")) box.innerHTML = `<p class="caption">${t("attr_loading")}</p>`;
  const body = { ids: S.doc.ids, token: S.token }, target = attrTarget();
  if (target !== undefined) body.target = target;
  ATTR.timer = setTimeout(() => attrFetch(key, body), ATTR_WAIT);
}

register({
  name: "attribution",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() { attrBuild(); },
  keep: formKeep({ target: "#attr-target" }, () => attrRender("target")),  // the address keeps the target (address.js)
  onDoc() { ATTR.shown = ""; },
  render(what) { attrRender(what); },
  lang() {  // everything again in the new language
    const d = ATTR.cache.get(ATTR.shown);
    if (d && !ATTR.error) attrDraw(d);
    else if (S.doc) {  // a refusal is asked again, for the server's line in the new language
      if (ATTR.error) $("#attr-h").innerHTML = t("attr_name");
      attrRender("lang");
    }
  },
});

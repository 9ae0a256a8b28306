// origin panel (registered in panels.js): where q, k and v come from, just before the step table.
// For the page's layer, head and query token it asks api/origin (qkv.analysis.origin) for x, x·W_Q + b_Q = q,
// every visible key's k (and v) and the products q[c]·k_j[c] with their sums q·k_j, and shows each
// vector as a coloured strip and as numbers (the neuron view of bertviz, every number written out).
// Requests wait a moment after the last change (ORIGIN_WAIT ms); only the newest one's answer is drawn;
// answers are kept per (ids, layer, head, token). The static export has no server: the panel says so.

import { S } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showError } from "./errors.js";
import { register } from "./panels.js";

Object.assign(I18N.en, {
  origin_title: "Where q, k and v come from: query {i} “{tok}”, layer {l}, head {h}",
  origin_x_pre: "x is what attention reads: the {norm} of the residual stream, <code>{name}</code> (d_model = {d}).",
  origin_x_post: "x is what attention reads: the residual stream itself, <code>{name}</code> (d_model = {d}); {why}",
  origin_why_post: "in a post-norm block the LayerNorm comes after attention.",
  origin_why_none: "this model has no LayerNorm.",
  origin_formula: "q = x W_Q + b_Q, k_j = x_j W_K + b_K, v_j = x_j W_V + b_V: each a (d_model) × (d_model, {dh}) product plus a bias of head {h}. " +
    "q · k_j = Σ_c q[c] k_j[c], the products below added up; the step table then divides it by √d_head = {scale}.",
  origin_rope: "RoPE: q and k are rotated by the angle of their positions after the projection; the products use the rotated vectors.",
  origin_values_k: "values=\"k\": this model has no W_V, the values are the keys (v_j = k_j).",
  origin_query: "The query {i} “{tok}”",
  origin_keys: "Every key the query can see (click a row for its numbers)",
  origin_key: "Key {j} “{tok}”",
  origin_th_key: "k_j",
  origin_th_prod: "q[c]·k_j[c]",
  origin_th_dot: "q·k_j",
  origin_th_scaled: "q·k_j / √d_head",
  origin_sum: "Σ_c q[c]·k_j[c] = q·k_j = {dot}",
  origin_loading: "Computing…",
  origin_numbers: "its {n} numbers",
  origin_static: "Where q, k and v come from needs the model's weights: run <code>qkv serve</code> to see it.",
  origin_tr: "This view shows a GPT's (or an encoder's) own attention; a translation model's step table above uses the same formula.",
  origin_strip: "each cell one coordinate: blue > 0, red < 0, the deeper the larger (scaled to the row's largest |value|)",
});
Object.assign(I18N.zh, {
  origin_title: "q、k、v 从哪里来：查询 {i}「{tok}」，层 {l}，头 {h}",
  origin_x_pre: "x 是注意力读入的向量：残差流经过 {norm} 之后，<code>{name}</code>（d_model = {d}）。",
  origin_x_post: "x 是注意力读入的向量：残差流本身，<code>{name}</code>（d_model = {d}）；{why}",
  origin_why_post: "后置归一化的块里，LayerNorm 在注意力之后。",
  origin_why_none: "这个模型没有 LayerNorm。",
  origin_formula: "q = x W_Q + b_Q，k_j = x_j W_K + b_K，v_j = x_j W_V + b_V：都是 (d_model) × (d_model, {dh}) 的乘积，再加上头 {h} 的偏置。" +
    "q · k_j = Σ_c q[c] k_j[c]，即下面各个乘积之和；逐步计算表再把它除以 √d_head = {scale}。",
  origin_rope: "RoPE：投影之后，q 和 k 按各自位置的角度旋转；乘积用的是旋转后的向量。",
  origin_values_k: "values=\"k\"：这个模型没有 W_V，值就是键（v_j = k_j）。",
  origin_query: "查询 {i}「{tok}」",
  origin_keys: "查询能看到的每一个键（点一行看它的全部数字）",
  origin_key: "键 {j}「{tok}」",
  origin_th_key: "k_j",
  origin_th_prod: "q[c]·k_j[c]",
  origin_th_dot: "q·k_j",
  origin_th_scaled: "q·k_j / √d_head",
  origin_sum: "Σ_c q[c]·k_j[c] = q·k_j = {dot}",
  origin_loading: "计算中……",
  origin_numbers: "它的 {n} 个数",
  origin_static: "q、k、v 的来历要用到模型的权重：运行 <code>qkv serve</code> 才能看到。",
  origin_tr: "这里展示 GPT（或编码器）自己的注意力；翻译模型上方的逐步计算表用的是同一个公式。",
  origin_strip: "每一格是一个坐标：蓝色 > 0，红色 < 0，颜色越深绝对值越大（按这一行最大的 |值| 缩放）",
});

const ORIGIN_WAIT = 120;
const ORIGIN = { cache: new Map(), req: 0, timer: 0, shown: "", pick: null, lastKey: "" };

/** The request for the page's current choice, and its cache key. */
function originBody() {
  return { ids: S.doc.ids, layer: S.layer, head: S.head, token: S.token };
}
const originKey = (b) => `${b.layer}/${b.head}/${b.token}/${b.ids.join(",")}`;

/** A coloured strip (one cell per coordinate) and the numbers, for the vector `xs` named `name`. */
function originVec(name, label, xs) {
  const m = Math.max(1e-12, ...xs.map(Math.abs));
  const cells = xs.map((x) => {
    const a = Math.min(1, Math.abs(x) / m).toFixed(3);
    const rgb = x >= 0 ? "37,99,235" : "220,38,38";
    return `<i style="background:rgba(${rgb},${a})" title="${fmt(x)}"></i>`;
  }).join("");
  const nums = `<span class="onums num">${xs.map(fmt).join(", ")}</span>`;
  // a long vector (x: d_model numbers) keeps its numbers folded under the strip; d_head ones show them
  return `<div class="ovec" data-vec="${name}"><span class="oname">${label}</span>` +
    `<span class="ostrip" title="${esc(t("origin_strip"))}">${cells}</span>` +
    (xs.length > 48 ? `<details class="onums-box"><summary>${t("origin_numbers", { n: xs.length })}</summary>${nums}</details>` : nums) +
    `</div>`;
}

/** A strip only (the key table's rows). */
function originStrip(xs) {
  const m = Math.max(1e-12, ...xs.map(Math.abs));
  return `<span class="ostrip">${xs.map((x) => `<i style="background:rgba(${x >= 0 ? "37,99,235" : "220,38,38"},${Math.min(1, Math.abs(x) / m).toFixed(3)})"></i>`).join("")}</span>`;
}

function originDraw(d) {
  const el = $("#origin");
  const q = d.query, rot = d.rope;
  let best = 0;
  d.keys.forEach((k, n) => { if (k.dot > d.keys[best].dot) best = n; });
  if (ORIGIN.lastKey !== `${d.layer}/${d.head}/${d.token}`) { ORIGIN.pick = null; ORIGIN.lastKey = `${d.layer}/${d.head}/${d.token}`; }
  const pickN = Math.max(0, d.keys.findIndex((k) => k.pos === ORIGIN.pick));
  const kk = d.keys[ORIGIN.pick === null ? best : pickN];
  const why = d.norm === "none" ? t("origin_why_none") : t("origin_why_post");
  let html = `<h2>${esc(t("origin_title", { i: d.token, tok: q.token, l: d.layer, h: d.head }))}</h2>` +
    `<p class="caption">${t(d.pre_norm ? "origin_x_pre" : "origin_x_post", { name: esc(d.x_name), d: d.d_model, why, norm: d.norm === "rms" ? "RMSNorm" : "LayerNorm" })} ` +
    `${t("origin_formula", { dh: d.d_head, h: d.head, scale: fmt(d.scale) })}</p>` +
    (rot ? `<p class="caption">${t("origin_rope")}</p>` : "") +
    (d.values === "k" ? `<p class="caption">${t("origin_values_k")}</p>` : "");
  html += `<h3>${esc(t("origin_query", { i: d.token, tok: q.token }))}</h3><div class="ovecs">` +
    originVec("x", "x", q.x) + originVec("xW_Q", "x W_Q", q.xW_Q) + originVec("b_Q", "b_Q", d.b_Q) +
    originVec("q", "q", q.q) + (rot ? originVec("q_rot", "q (RoPE)", q.q_rot) : "") + `</div>`;
  html += `<h3>${t("origin_keys")}</h3><div class="table-wrap"><table class="origin-table"><thead><tr><th>j</th>` +
    `<th>${t("th_token")}</th><th>${t("origin_th_key")}</th><th>${t("origin_th_prod")}</th>` +
    `<th>${t("origin_th_dot")}</th><th>${t("origin_th_scaled")}</th></tr></thead><tbody>`;
  for (const k of d.keys) {
    html += `<tr data-key="${k.pos}"${k === kk ? ' class="picked"' : ""}><td>${k.pos}</td><td data-field="token">${esc(k.token)}</td>` +
      `<td>${originStrip(rot ? k.k_rot : k.k)}</td><td>${originStrip(k.product)}</td>` +
      `<td data-field="dot" class="num">${fmt(k.dot)}</td><td data-field="scaled" class="num">${fmt(k.scaled)}</td></tr>`;
  }
  html += `</tbody></table></div>`;
  html += `<h3 id="origin-key" data-key="${kk.pos}">${esc(t("origin_key", { j: kk.pos, tok: kk.token }))}</h3><div class="ovecs">` +
    originVec("x_j", "x_j", kk.x) + originVec("xW_K", "x_j W_K", kk.xW_K) + originVec("b_K", "b_K", d.b_K) +
    originVec("k", "k_j", kk.k) + (rot ? originVec("k_rot", "k_j (RoPE)", kk.k_rot) : "") +
    originVec("product", "q[c]·k_j[c]", kk.product) +
    `<p class="osum">${t("origin_sum", { dot: `<span class="num" data-field="sum">${fmt(kk.dot)}</span>` })}</p>` +
    (d.values === "k" ? "" : originVec("xW_V", "x_j W_V", kk.xW_V) + originVec("b_V", "b_V", d.b_V)) +
    originVec("v", "v_j", kk.v) + `</div>`;
  el.innerHTML = html;
  el.dataset.state = "ready";
  Object.assign(el.dataset, { layer: d.layer, head: d.head, token: d.token });
}

function originNote(key) {
  const el = $("#origin");
  el.innerHTML = `<p class="note">${t(key)}</p>`;
  el.dataset.state = "note";
}

async function originFetch(body, key) {
  const req = ++ORIGIN.req;
  busy(true);
  try {
    const d = await api("api/origin", body);
    ORIGIN.cache.set(key, d);
    if (ORIGIN.cache.size > 64) ORIGIN.cache.delete(ORIGIN.cache.keys().next().value);
    if (req === ORIGIN.req) { ORIGIN.shown = key; originDraw(d); }
  } catch (e) {
    if (req === ORIGIN.req) { $("#origin").dataset.state = "error"; showError(e.message); }
  } finally {
    busy(false);
  }
}

function originRender(what) {
  const el = $("#origin");
  if (!S.doc) return;
  if (S.mode === "static") { originNote("origin_static"); return; }
  if (S.tr) { originNote("origin_tr"); return; }
  const body = originBody(), key = originKey(body);
  clearTimeout(ORIGIN.timer);
  if (key === ORIGIN.shown && what !== "lang") return;  // nothing of ours changed
  const d = ORIGIN.cache.get(key);
  if (d) { ORIGIN.req++; ORIGIN.shown = key; originDraw(d); return; }
  ORIGIN.shown = "";
  el.dataset.state = "loading";
  if (!el.querySelector("h2")) el.innerHTML = `<p class="caption">${t("origin_loading")}</p>`;
  ORIGIN.timer = setTimeout(() => originFetch(body, key), ORIGIN_WAIT);
}

register({
  name: "origin",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() {
    $("#origin").addEventListener("click", (e) => {
      const row = e.target.closest("tr[data-key]");
      if (!row) return;
      ORIGIN.pick = +row.dataset.key;
      const d = ORIGIN.cache.get(ORIGIN.shown);
      if (d) originDraw(d);
    });
  },
  keep: {  // the key row picked, for the page's address (address.js)
    read: () => (ORIGIN.pick === null ? {} : { key: String(ORIGIN.pick) }),
    write(v) {
      if (!/^\d+$/.test(v.key || "")) return;
      ORIGIN.pick = +v.key;
      const d = ORIGIN.cache.get(ORIGIN.shown);
      if (d) originDraw(d);
    },
  },
  onDoc() { ORIGIN.shown = ""; },
  render(what) { originRender(what); },
  lang() { const d = ORIGIN.cache.get(ORIGIN.shown); if (d) originDraw(d); else if (S.doc) originRender("lang"); },
});

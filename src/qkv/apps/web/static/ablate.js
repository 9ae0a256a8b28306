// ablate panel (registered in panels.js): switch heads off and see what changes.
// A grid of the model's heads, each labelled by the head detector (api/heads, qkv.head_scores: the kind of
// head it scores highest as, against that kind's even-spread baseline, and the score). The heads switched off go to api/ablate
// (qkv.analysis.ablate: z_h = 0 before W_O), which answers the next-token probabilities at every
// position and the patterns of the layers from the first ablated one on, before and after. The page
// shows them at its own query token, layer and head. Requests wait ABLATE_WAIT ms after the last click;
// only the newest answer is drawn; answers are kept per (ids, heads). The static export says "run qkv serve".

import { S, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showError } from "./errors.js";
import { decode } from "./decode.js";
import { register } from "./panels.js";
import { chooseHead } from "./actions.js";

Object.assign(I18N.en, {
  ablate_title: "Switch heads off",
  ablate_caption: "Click heads to switch them off: their z is set to 0 before W_O, so layer L's attention output loses " +
    "z_h W_O[h] and every later layer reads a different residual stream. Beside each head: what kind of head the " +
    "detector (<code>qkv heads</code>) finds it is, and its score: the share of its weight on that kind's keys, over " +
    "{n} random token sequences each repeated once.",
  ablate_caption_nolabels: "Click heads to switch them off: their z is set to 0 before W_O, so layer L's attention output " +
    "loses z_h W_O[h] and every later layer reads a different residual stream. (No head labels: {why})",
  ablate_clear: "Switch all on",
  ablate_head: "L{l} H{h}",
  ablate_none: "No head is off: the model is unchanged.",
  ablate_loading: "Computing…",
  ablate_next: "Next token after “{tok}” (position {i}), before → after",
  ablate_moved: "Probability moved (½ Σ |P_after − P_before|): {moved}",
  ablate_th_tok: "token", ablate_th_before: "before", ablate_th_after: "after", ablate_th_delta: "change",
  ablate_layers: "Largest change of each later head's pattern, max |A_after − A_before| (click to show that head)",
  ablate_row: "Layer {l}, head {h}: where query {i} “{tok}” looks, before → after",
  ablate_row_early: "Layer {l} comes before the first head switched off (layer {first}): its pattern cannot change.",
  ablate_row_same: "Layer {l} is the first layer switched off: its own patterns are computed before any z is dropped, so they stay the same; later layers change.",
  ablate_changes: "The pattern entries that changed most",
  ablate_change: "layer {l} head {h}: query {i} → key {j}",
  ablate_static: "Switching heads off runs the model again: run <code>qkv serve</code> to try it.",
  ablate_no_lm: "Switching heads off is shown on the next-token probabilities: this model predicts none.",
  ablate_tr: "Switching heads off is shown for a GPT's next-token probabilities, not for a translation model.",
});
Object.assign(I18N.zh, {
  ablate_title: "关掉注意力头",
  ablate_caption: "点击注意力头把它关掉：它的 z 在乘 W_O 之前被置为 0，于是它所在那一层（层 L）的注意力输出少了 z_h W_O[h]，" +
    "之后每一层读到的残差流都不同了。每个头旁边写着头检测器（<code>qkv heads</code>）判断它属于哪一类头，以及它的得分：" +
    "在 {n} 段各重复一次的随机词元序列上，它落在这一类头该看的键上的权重份额。",
  ablate_caption_nolabels: "点击注意力头把它关掉：它的 z 在乘 W_O 之前被置为 0，于是它所在那一层（层 L）的注意力输出少了 z_h W_O[h]，" +
    "之后每一层读到的残差流都不同了。（没有头标签：{why}）",
  ablate_clear: "全部打开",
  ablate_head: "L{l} H{h}",
  ablate_none: "没有关掉任何头：模型没有变化。",
  ablate_loading: "计算中……",
  ablate_next: "「{tok}」（位置 {i}）之后的下一个词元：关掉之前 → 之后",
  ablate_moved: "移动的概率（½ Σ |P_之后 − P_之前|）：{moved}",
  ablate_th_tok: "词元", ablate_th_before: "之前", ablate_th_after: "之后", ablate_th_delta: "变化",
  ablate_layers: "之后各层每个头的注意力模式的最大变化 max |A_之后 − A_之前|（点击显示那个头）",
  ablate_row: "层 {l} 头 {h}：查询 {i}「{tok}」看向哪里，之前 → 之后",
  ablate_row_early: "层 {l} 在最早被关掉的头所在的层（层 {first}）之前：它的注意力模式不会变。",
  ablate_row_same: "层 {l} 就是最早有头被关掉的那一层：它自己的注意力模式在丢掉 z 之前就算好了，所以不变；之后的层才会变。",
  ablate_changes: "变化最大的注意力权重",
  ablate_change: "层 {l} 头 {h}：查询 {i} → 键 {j}",
  ablate_static: "关掉注意力头要重新运行模型：运行 <code>qkv serve</code> 才能试。",
  ablate_no_lm: "关掉注意力头的效果显示在下一个词元的概率上：这个模型不预测下一个词元。",
  ablate_tr: "关掉注意力头只对 GPT 的下一个词元概率展示，不用于翻译模型。",
});

const ABLATE_WAIT = 150;
const AB = { seen: null, labels: null, asked: false, off: new Set(), cache: new Map(), req: 0, timer: 0, key: "", doc: null,
  A0: null, A1: null, grid: "" };

const abHeads = () => [...AB.off].map((s) => s.split("/").map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const abKey = () => `${abHeads().map((p) => p.join("/")).join(",")}|${S.doc.ids.join(",")}`;

function abCaption() {
  const L = AB.labels;
  if (!(L && L.labels)) return t("ablate_caption_nolabels", { why: esc(L ? L.why : "…") });
  const rule = L.stand_out || { ratio: 3, floor: 0.3 }, R = L.roles || {};
  const roles = R.labels ? t("pl_roles_caption", { n: R.n_sentences, ex: esc(R.example || ""), cue: esc(R.example_cue || "") })
    : R.why_lang ? t("pl_roles_none", { why: esc(R.why_lang[S.lang] || "") }) : "";
  return t("ablate_caption", { n: L.n_sequences ?? L.n_sentences }) + " " +
    t("pl_stand_out", { ratio: rule.ratio, floor: rule.floor }) + (roles ? " " + roles : "");
}

/** One measure's label of a head: its kind's short name and score where the head stands out
 *  (routes_heads: "shown"), else "—"; the title names the measure, the score and its ratio to an even spread. */
function abTag(lab, names, measure, field) {
  if (!lab || !names) return "";
  const name = names[lab.category], ratio = (lab.ratio ?? 0).toFixed(1);
  const title = t(lab.shown ? "pl_tag_title" : "pl_tag_title_none", { measure: t(measure), label: name.label, mass: fmt(lab.mass), ratio });
  return `<span class="ab-tag" data-field="${field}" data-shown="${lab.shown ? 1 : 0}" title="${esc(title)}">` +
    `<span class="ab-by">${t(measure + "_short")}</span><span class="${field === "label" ? "ab-label" : "ab-role"}">` +
    `${lab.shown ? `${esc(name.short)} ${fmt(lab.mass)}` : "—"}</span></span>`;
}

/** The grid of heads (layers down, heads across), each a toggle with the detector's label and the
 *  measured role, each shown only where the head stands out. */
function abGrid() {
  const D = AB.labels, L = D && D.labels, names = D && D.names && D.names[S.lang];
  const R = D && D.roles && D.roles.labels, rnames = D && D.roles && D.roles.names && D.roles.names[S.lang];
  let html = "";
  for (let l = 0; l < S.L; l++) {
    html += `<div class="ab-row" style="grid-template-columns:repeat(${S.H}, minmax(0, 1fr))">`;
    for (let h = 0; h < S.H; h++) {
      const on = AB.off.has(`${l}/${h}`);
      html += `<button type="button" class="ab-head${on ? " off" : ""}" data-layer="${l}" data-head="${h}" aria-pressed="${on}">` +
        `<span class="ab-name">${t("ablate_head", { l, h })}</span>` +
        abTag(L && L[l] && L[l][h], names, "pl_detector", "label") + abTag(R && R[l] && R[l][h], rnames, "pl_roles", "role") +
        `</button>`;
    }
    html += `</div>`;
  }
  return html;
}

function abSkeleton() {
  const el = $("#ablate");
  el.innerHTML = `<h2>${t("ablate_title")}</h2><p class="caption" id="ablate-caption">${abCaption()}</p>` +
    `<div class="ab-grid" id="ablate-grid">${abGrid()}</div>` +
    `<p><button type="button" id="ablate-clear">${t("ablate_clear")}</button></p><div id="ablate-result"></div>`;
  AB.grid = `${S.L}x${S.H}/${S.lang}`;
}

function abNote(key) {
  const el = $("#ablate");
  el.innerHTML = `<h2>${t("ablate_title")}</h2><p class="note">${t(key)}</p>`;
  el.dataset.state = "note"; AB.grid = "";
}

/** Bars for one probability (before or after), scaled to pmax. */
const abBar = (p, pmax, field) => `<span class="ab-bar"><span class="fill" style="width:${(100 * p / pmax).toFixed(1)}%"></span></span>` +
  `<span class="num" data-field="${field}">${fmt(p)}</span>`;

function abResult() {
  const box = $("#ablate-result"), d = AB.doc;
  if (!box) return;
  if (!AB.off.size) { box.innerHTML = `<p class="caption">${t("ablate_none")}</p>`; return; }
  if (!d || AB.key !== abKey()) return;  // the answer is on its way
  const i = S.token, T = d.ids.length, H = S.H, nx = d.next.find((n) => n.pos === i) || d.next[d.next.length - 1];
  const pmax = Math.max(1e-12, ...nx.rows.map((r) => Math.max(r.before, r.after)));
  let html = `<h3>${esc(t("ablate_next", { tok: nx.token, i: nx.pos }))}</h3><div class="table-wrap"><table class="ab-next">` +
    `<thead><tr><th>${t("ablate_th_tok")}</th><th>${t("ablate_th_before")}</th><th>${t("ablate_th_after")}</th><th>${t("ablate_th_delta")}</th></tr></thead><tbody>`;
  for (const r of nx.rows) {
    html += `<tr data-id="${r.id}"><td class="tok">${esc(r.token)}</td><td>${abBar(r.before, pmax, "before")}</td>` +
      `<td>${abBar(r.after, pmax, "after")}</td><td class="num${r.after > r.before ? " up" : r.after < r.before ? " down" : ""}" data-field="delta">${fmt(r.after - r.before)}</td></tr>`;
  }
  html += `</tbody></table></div><p class="caption">${t("ablate_moved", { moved: `<span class="num" data-field="moved">${fmt(nx.moved)}</span>` })}</p>`;
  // later layers: the largest change of each head's pattern
  if (d.first < S.L) {
    html += `<h3>${t("ablate_layers")}</h3><table class="ab-max"><tbody>`;
    for (let l = d.first; l < S.L; l++) {
      html += `<tr><th>${t("tab_layer", { l })}</th>`;
      for (let h = 0; h < H; h++) {
        const c = d.max_change[l][h], chosen = l === S.layer && h === S.head;
        html += `<td class="num${chosen ? " chosen" : ""}" data-layer="${l}" data-head="${h}" style="--c:${Math.min(1, c).toFixed(3)}">${fmt(c)}</td>`;
      }
      html += `</tr>`;
    }
    html += `</tbody></table>`;
  }
  // the page's layer and head: the chosen query's row, before and after
  const l = S.layer, h = S.head;
  if (l < d.first) {
    html += `<p class="caption" id="ablate-row-note">${t("ablate_row_early", { l, first: d.first })}</p>`;
  } else {
    if (l === d.first) html += `<p class="caption" id="ablate-row-note">${t("ablate_row_same", { l })}</p>`;
    html += `<h3>${esc(t("ablate_row", { l, h, i, tok: d.tokens[i] }))}</h3><div class="table-wrap"><table class="ab-row-table">` +
      `<thead><tr><th>j</th><th>${t("ablate_th_tok")}</th><th>${t("ablate_th_before")}</th><th>${t("ablate_th_after")}</th><th>${t("ablate_th_delta")}</th></tr></thead><tbody>`;
    const base = (((l - d.first) * H + h) * T + i) * T;
    for (let j = 0; j < T; j++) {
      const a0 = AB.A0[base + j], a1 = AB.A1[base + j];
      if (S.doc.model.causal && j > i) break;
      html += `<tr data-key="${j}"><td>${j}</td><td class="tok">${esc(d.tokens[j])}</td><td>${abBar(a0, 1, "before")}</td>` +
        `<td>${abBar(a1, 1, "after")}</td><td class="num" data-field="delta">${fmt(a1 - a0)}</td></tr>`;
    }
    html += `</tbody></table></div>`;
  }
  if (d.changes.length) {
    html += `<h3>${t("ablate_changes")}</h3><ul class="ab-changes">` + d.changes.map((c) =>
      `<li>${t("ablate_change", { l: c.layer, h: c.head, i: c.query, j: c.key })}: <span class="num">${fmt(c.before)}</span> → ` +
      `<span class="num">${fmt(c.after)}</span></li>`).join("") + `</ul>`;
  }
  box.innerHTML = html;
}

async function abFetch(key, body) {
  const req = ++AB.req;
  busy(true);
  try {
    const d = await api("api/ablate", body);
    AB.cache.set(key, d);
    if (AB.cache.size > 32) AB.cache.delete(AB.cache.keys().next().value);
    if (req === AB.req) abShow(key, d);
  } catch (e) {
    if (req === AB.req) { $("#ablate").dataset.state = "error"; showError(e.message); }
  } finally {
    busy(false);
  }
}

function abShow(key, d) {
  AB.key = key; AB.doc = d;
  AB.A0 = decode(d.patterns.before); AB.A1 = decode(d.patterns.after);
  const el = $("#ablate");
  el.dataset.state = "ready"; el.dataset.heads = key.split("|")[0];
  abResult();
}

/** The heads switched off changed (or the text): show the cached answer, or ask after a moment. */
function abUpdate() {
  clearTimeout(AB.timer);
  const el = $("#ablate");
  if (!AB.off.size) { AB.req++; AB.key = ""; AB.doc = null; el.dataset.state = "ready"; el.dataset.heads = ""; abResult(); return; }
  const key = abKey(), d = AB.cache.get(key);
  if (d) { AB.req++; abShow(key, d); return; }
  el.dataset.state = "loading";
  const box = $("#ablate-result");
  if (box && !box.querySelector("table")) box.innerHTML = `<p class="caption">${t("ablate_loading")}</p>`;
  const body = { ids: S.doc.ids, heads: abHeads() };
  AB.timer = setTimeout(() => abFetch(key, body), ABLATE_WAIT);
}

async function abLabels() {
  if (AB.asked) return;
  AB.asked = true;
  try {
    AB.labels = await api("api/heads");
  } catch (e) {
    AB.labels = { labels: null, why: e.message };
  }
  if ($("#ablate-grid")) { $("#ablate-grid").innerHTML = abGrid(); $("#ablate-caption").innerHTML = abCaption(); }
}

function abRender(what) {
  if (!S.doc) return;
  if (S.mode === "static") { abNote("ablate_static"); return; }
  if (S.tr || !predictsNext()) { abNote(S.tr ? "ablate_tr" : "ablate_no_lm"); return; }
  if (AB.grid !== `${S.L}x${S.H}/${S.lang}`) { abSkeleton(); AB.seen = S.doc; abUpdate(); return; }
  if (AB.seen !== S.doc) { AB.seen = S.doc; abUpdate(); return; }  // a new text: ask again
  abResult();  // token, layer, head: only the result part depends on them
}

register({
  name: "ablate",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() {
    $("#ablate").addEventListener("click", (e) => {
      const b = e.target.closest("button.ab-head");
      if (b) {
        const id = `${b.dataset.layer}/${b.dataset.head}`;
        if (AB.off.has(id)) AB.off.delete(id); else AB.off.add(id);
        b.classList.toggle("off", AB.off.has(id));
        b.setAttribute("aria-pressed", String(AB.off.has(id)));
        abUpdate();
        return;
      }
      if (e.target.closest("#ablate-clear")) {
        AB.off.clear();
        for (const x of document.querySelectorAll("#ablate button.ab-head")) { x.classList.remove("off"); x.setAttribute("aria-pressed", "false"); }
        abUpdate();
        return;
      }
      const c = e.target.closest("td[data-layer]");
      if (c) chooseHead(+c.dataset.layer, +c.dataset.head, +c.dataset.layer !== S.layer ? "layer" : "head", performance.now());
    });
  },
  keep: {  // the heads switched off, "0/1 2/3", for the page's address (address.js)
    read: () => ({ off: abHeads().map((p) => p.join("/")).join(" ") }),
    write(v) {
      if (typeof v.off !== "string") return;
      const fits = (s) => /^\d+\/\d+$/.test(s) && (!S.doc || (+s.split("/")[0] < S.L && +s.split("/")[1] < S.H));
      AB.off = new Set(v.off.split(/\s+/).filter(fits));
      AB.grid = "";  // drawn again, with these heads off
      if (S.doc) abRender("init");
    },
  },
  onDoc(doc) {
    if (S.mode === "live" && doc.kind === "view" && predictsNext()) abLabels();
    if (AB.off.size && [...AB.off].some((s) => +s.split("/")[0] >= S.L || +s.split("/")[1] >= S.H)) AB.off.clear();
    AB.grid = AB.grid && AB.grid === `${S.L}x${S.H}/${S.lang}` ? AB.grid : "";
  },
  render(what) { abRender(what); },
  lang() { AB.grid = ""; },
});

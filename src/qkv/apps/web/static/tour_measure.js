// What each step of the guided tour sets up on the page and measures there (tour.js runs them in
// order, tour_steps.js holds their words). A step is an async function of the tour's context
// ({extra: the panel's own element for a small drawing or buttons; live(): whether the tour is still on
// this step, checked after every await, so a step that was left never changes the page}) that loads a text, selects a
// layer, head and token, and returns the facts its words name: each a value, or a function of the
// language for a fact said in words ({facts, variant}; variant "none": body_none / try_none; variant
// "decoder": the model served is not a decoder predicting the next token, said in TOUR_UI.needs_decoder).
// Every pointer is chosen by a measure at run time, never written in: the view's own numbers (the
// largest weight, the smallest entropy, the largest update), the lessons' (GET /api/heads: the
// lesson heads' roles) or the tour's routes (/api/tour/order, /api/tour/view, /api/tour/translate).

import { S, at2, at4, model, modelDesign, predictsNext, translates } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { api, busy } from "./api.js";
import { analyze, loadDoc } from "./actions.js";
import { sharpestHead } from "./doc.js";
import { followToken } from "./next.js";
import { render } from "./render.js";
import { pgSnapshot, pgSteps } from "./pg_state.js";
import { pgShort } from "./exact.js";
import { TOUR_UI } from "./tour_steps.js";

const FOOD = "我 吃了 苹果 ，", COMPANY = "我 投资了 苹果 ，";
const ORDER_ZH = ["我 打了 你 ，", "你 打了 我 ，"];
const ORDER_EN = ["the dog bit the man,", "the man bit the dog,"];  // a real LLM's: the same bag of tokens too
let shownOrder = [0, false];  // the positions step's sentence and whether positions are on
const LLM_TEXT = "The capital of France is";

/** Whether the page serves a pretrained LLM (not a qkv checkpoint): it reads English as words. */
function realLLM() {
  const m = model(), src = (m && m.loaded_from) || {};
  return !!src.architecture && !String(src.architecture).startsWith("qkv ") && predictsNext() && !translates();
}
const order = () => (realLLM() ? ORDER_EN : ORDER_ZH);
const food = () => (realLLM() ? "I ate an apple and it tasted" : FOOD);  // what the model reads as words

/** The model served, named in words: its title or name (the bundled one as such). */
export const modelName = (lang) => {
  const m = model(), src = (m && m.loaded_from) || {}, name = src.title || src.name || (m && m.name) || "";
  return !name || name === "bundled" ? TOUR_UI[lang].bundled : String(name);
};

/** Thrown after an await when the tour has left the step (tour.js drops it). */
export class Left extends Error {}
const still = (ctx) => { if (!ctx.live()) throw new Left("left"); };

/** The answer for a step that needs a GPT-like decoder when the model served is not one, else null. */
function needsDecoder() {
  if (S.tr || translates() || !predictsNext() || modelDesign() !== "decoder") return { facts: { model: modelName }, variant: "decoder" };
  return null;
}

const word = (i) => String(S.doc.tokens[i]).trim();
const find = (w) => S.doc.tokens.findIndex((t) => String(t).trim() === w);
const headAt = (l, h) => (lang) => TOUR_UI[lang].head_at.replace("{l}", l).replace("{h}", h);

/** The page shows `text` with positions on (the ordinary view), analysed if it does not already. */
export async function show(text, ctx) {
  if (S.doc && !S.tr && S.doc.positions === undefined && S.doc.text === text) return;
  still(ctx);
  $("#text").value = text;
  await analyze(text, performance.now(), "text");
  still(ctx);
  if (!S.doc || S.doc.text !== text) throw new Error(document.getElementById("error").textContent || text);
}

/** Select layer l, head h and query token i on the page, and redraw. */
export function point(l, h, i) {
  S.layer = l; S.head = h;
  if (i !== null && i !== S.token) { S.token = i; followToken(); }
  render("head", performance.now());
}

/** The key of row (l, h, i) with the largest weight, skipping `skip` (a position, or -1): [j, weight]. */
function topKey(l, h, i, skip = -1) {
  let best = -1, w = -1;
  for (let j = 0; j < S.Tk; j++) {
    const a = S.A.pattern[at4(l, h, i, j)];
    if (j !== skip && a > w) { w = a; best = j; }
  }
  return [best, w];
}

async function worked() {
  const card = $("#playground"), b = card && card.querySelector('[data-preset="article"]');
  if (b) b.click();  // the playground's own preset: the articles' numbers, computed by the page
  const s = pgSnapshot(), st = pgSteps(s.q, s.K, s.V, s.d_k);
  return { facts: { a: st.weights.map(pgShort).join(", "), z: `(${st.z.map(pgShort).join(", ")})` } };
}

async function hull(ctx) {
  const none = needsDecoder();
  if (none) return none;
  await show(food(), ctx);
  const l = S.L - 1, h = sharpestHead(l), i = S.T - 1, [j, w] = topKey(l, h, i);
  point(l, h, i);
  return { facts: { model: modelName, text: S.doc.text, layer: l, head: h, query: word(i), key: word(j), weight: fmt(w) } };
}

async function whyV(ctx) {
  const none = needsDecoder();
  if (none) return none;
  await show(food(), ctx);
  const i = S.T - 1;
  let best = null;
  for (let l = 0; l < S.L; l++) for (let h = 0; h < S.H; h++) {
    const [j, w] = topKey(l, h, i, i);
    if (!best || w > best.w) best = { l, h, j, w };
  }
  point(best.l, best.h, i);
  return { facts: { layer: best.l, head: best.h, query: word(i), key: word(best.j), weight: fmt(best.w) } };
}

/** Every head's weight from 苹果 to the verb before it in the text shown: [L][H]. */
function appleToCue(cue) {
  const i = find("苹果"), j = find(cue);
  if (i < 0 || j < 0) throw new Error(TOUR_UI[S.lang].not_words);
  const w = [];
  for (let l = 0; l < S.L; l++) { w.push([]); for (let h = 0; h < S.H; h++) w[l].push(S.A.pattern[at4(l, h, i, j)]); }
  return w;
}

async function apple(ctx) {
  const none = needsDecoder();
  if (none) return none;
  await show(FOOD, ctx);  // the Chinese pair of the articles, on any model (a model that reads it as bytes: said so)
  const fruit = appleToCue("吃了");
  await show(COMPANY, ctx);
  const company = appleToCue("投资了");
  let l0 = 0, h0 = 0;
  for (let l = 0; l < S.L; l++) for (let h = 0; h < S.H; h++) if (company[l][h] > company[l0][h0]) { l0 = l; h0 = h; }
  point(l0, h0, find("苹果"));
  const lesson = await lessonCueHead(l0, h0);
  still(ctx);
  return { facts: { text: S.doc.text, layer: l0, head: h0, cue: "投资了", w_a: fmt(company[l0][h0]), w_b: fmt(fruit[l0][h0]),
    lesson } };
}

/** What the lesson heads (GET /api/heads: its roles) names as the cue-verb head, said against (l, h). */
async function lessonCueHead(l, h) {
  let best = null;
  try {
    const d = await api("api/heads");
    if (d.roles && d.roles.labels) best = bestPerCategory(d.roles.labels, d.roles.categories).find((b) => b.cat === "cue");
  } catch (e) { /* no roles for this model: said as nothing */ }
  return (lang) => {
    const ui = TOUR_UI[lang];
    if (!best) return ui.lesson_none;
    return best.l === l && best.h === h ? ui.lesson_same : ui.lesson_other.replace("{l}", best.l).replace("{h}", best.h);
  };
}

/** For each category of a labels table, the head giving it the most weight: [{cat, l, h, mass}]. */
function bestPerCategory(labels, cats) {
  return cats.map((cat) => {
    let best = { cat, l: 0, h: 0, mass: -1 };
    labels.forEach((row, l) => row.forEach((lab, h) => {
      if (lab.masses[cat] > best.mass) best = { cat, l, h, mass: lab.masses[cat] };
    }));
    return best;
  });
}

async function heads(ctx) {
  const none = needsDecoder();  // the head detector reads a causal model's repeated random tokens
  if (none) return none;
  if (!S.doc || S.doc.positions !== undefined) await show(COMPANY, ctx);
  const d = await api("api/heads");
  still(ctx);
  const roles = d.roles && d.roles.labels ? d.roles : null, src = roles || (d.labels ? d : null);
  if (!src) throw new Error((d.why_lang && d.why_lang[S.lang]) || TOUR_UI[S.lang].no_labels);
  const best = bestPerCategory(src.labels, src.categories), names = roles ? roles.names : d.names;
  const chosen = best.find((b) => b.cat === "previous") || best[0];
  point(chosen.l, chosen.h, null);
  const list = (lang) => best.map((b) => `${names[lang][b.cat].short} ${headAt(b.l, b.h)(lang)} (${fmt(b.mass)})`)
    .join(lang === "zh" ? "；" : "; ");
  const selected = (lang) => `${headAt(chosen.l, chosen.h)(lang)} (${names[lang][chosen.cat].short})`;
  return { facts: { list, selected }, variant: roles ? "" : "none", best };
}

/** Show sentence n (0: 我打你, 1: 你打我) with positions on or off, as the server computes it. */
export async function showOrder(n, on, extra, ctx) {
  still(ctx);
  const req = ++S.req;  // an older analysis that answers later is dropped (actions.js)
  busy(true);
  try {
    const doc = await api("api/tour/view", { text: order()[n], positions: on });
    if (req !== S.req || !ctx.live()) return;
    loadDoc(doc);
    const i = S.T - 1;
    let best = 0, most = -1;
    for (let h = 0; h < S.H; h++) { const w = topKey(0, h, i, i)[1]; if (w > most) { most = w; best = h; } }
    point(0, best, i);
  } finally {
    busy(false);
  }
  shownOrder = [n, on];
  pressOrder(extra);
}

function pressOrder(extra) {
  for (const b of extra.querySelectorAll("[data-order]")) {
    const [bn, bon] = b.dataset.order.split(",");
    b.setAttribute("aria-pressed", String(Number(bn) === shownOrder[0] && (bon === "1") === shownOrder[1]));
  }
}

async function positions(ctx) {
  const none = needsDecoder();
  if (none) return none;
  const d = await api("api/tour/order", { a: order()[0], b: order()[1] });
  still(ctx);
  if (!d.perm) throw new Error(TOUR_UI[S.lang].not_words);
  const off = d.leak.off, later = off.slice(1), most = later.length ? Math.max(...later) : NaN;
  drawOrder(ctx, d);
  await showOrder(0, false, ctx.extra, ctx);
  still(ctx);
  // a token the two sentences share at one position, having read different tokens before it (打了: 我 / 你)
  const ids = [d.a.ids, d.b.ids];
  const m = ids[0].findIndex((x, j) => j > 0 && j < ids[0].length - 1 && x === ids[1][j] && ids[0].slice(0, j).join() !== ids[1].slice(0, j).join());
  return { redraw: () => drawOrder(ctx, d), variant: later.length ? "" : "none", facts: { a: d.a.text, b: d.b.text, last: d.a.tokens[d.a.tokens.length - 1], mid: d.a.tokens[m > 0 ? m : 1],
    leak0: fmt(off[0]), leak_max: fmt(most), leak_layer: 1 + later.indexOf(most), on0: fmt(d.leak.on[0]) }, order: d };
}

/** The positions step's four buttons and its table of leaks per layer. */
function drawOrder(ctx, d) {
  const extra = ctx.extra, ui = TOUR_UI[S.lang], L = d.leak.off.length;
  const btn = (n, on) => `<button type="button" class="tour-toggle" data-order="${n},${on ? 1 : 0}" aria-pressed="false">` +
    `${esc(order()[n].replace(/[ ，]/g, (c) => (realLLM() ? c : "")))} · ${esc(on ? ui.on : ui.off)}</button>`;
  const cells = (k) => d.leak[k].map((x) => `<td>${fmt(x)}</td>`).join("");
  extra.innerHTML = `<div class="tour-toggles">${btn(0, true)}${btn(1, true)}${btn(0, false)}${btn(1, false)}</div>` +
    `<div class="tour-scroll"><table class="tour-leak"><caption>${esc(ui.leak_title)}</caption>` +
    `<tr><th>${esc(ui.layer)}</th>${Array.from({ length: L }, (_, l) => `<th>${l}</th>`).join("")}</tr>` +
    `<tr><th>${esc(ui.leak_on)}</th>${cells("on")}</tr><tr><th>${esc(ui.leak_off)}</th>${cells("off")}</tr></table></div>`;  // a real LLM's 30 layers scroll
  for (const b of extra.querySelectorAll("[data-order]")) {
    b.addEventListener("click", () => { const [n, on] = b.dataset.order.split(","); showOrder(Number(n), on === "1", extra, ctx).catch(() => {}); });
  }
  pressOrder(extra);
}

async function residual(ctx) {
  const none = needsDecoder();
  if (none) return none;
  await show(food(), ctx);
  const i = S.T - 1;
  let best = 0, most = -1;
  for (let l = 0; l < S.L; l++) {
    const r = S.A.attn_out_norm[at2(l, i)] / S.A.x_norm[at2(l, i)];
    if (r > most) { most = r; best = l; }
  }
  point(best, S.head, i);
  const norm = (lang) => { const n = (model() || {}).norm, ui = TOUR_UI[lang];
    return n === "rms" ? ui.norm_rms : n === "none" ? ui.norm_none : ui.norm_ln; };
  return { facts: { norm, query: word(i), layer: best, upd: fmt(S.A.attn_out_norm[at2(best, i)]),
    x: fmt(S.A.x_norm[at2(best, i)]), ratio: fmt(most) } };
}

async function next(ctx) {
  const none = needsDecoder();
  if (none) return none;
  await show(food(), ctx);
  const i = S.T - 1, K = S.A.next_ids.length / S.T;
  const tok = (r) => S.doc.vocab[String(S.A.next_ids[i * K + r])] ?? "";
  const p1 = S.A.next_probs[i * K], p2 = S.A.next_probs[i * K + 1], ratio = p1 / p2;
  point(S.layer, S.head, i);
  return { facts: { text: S.doc.text, top1: tok(0), p1: fmt(p1), top2: tok(1), p2: fmt(p2), ratio: fmt(ratio),
    ratio_cold: fmt(ratio ** 2), ratio_hot: fmt(Math.sqrt(ratio)) } };
}

async function translate(ctx) {
  const d = await api("api/tour/translate", { text: COMPANY });
  still(ctx);
  let r = 0;
  d.reads.forEach((x, n) => { if (/[\p{L}\p{N}]/u.test(x.token) && x.top_weight > d.reads[r].top_weight) r = n; });
  const read = d.reads[r];
  drawCross(ctx.extra, d, r);
  return { redraw: () => drawCross(ctx.extra, d, r), facts: { src: d.text, tgt: d.translation, layer: d.layer, head: d.head, word: read.token,
    weight: fmt(read.top_weight), source_word: read.top_token }, cross: { step: r, source: read.top_pos } };
}

/** The translation step's small heatmap: one row per word written, one column per source word. */
function drawCross(extra, d, chosen) {
  const title = TOUR_UI[S.lang].map_title.replace("{layer}", d.layer).replace("{head}", d.head);
  const head = d.source.tokens.map((t) => `<th>${esc(t)}</th>`).join("");
  const rows = d.reads.map((x, n) => `<tr${n === chosen ? ' class="chosen"' : ""}><th>${esc(x.token)}</th>` +
    x.rows.map((c) => `<td style="background: rgba(37, 99, 235, ${c.weight.toFixed(3)})" title="${fmt(c.weight)}"` +
      ` data-w="${c.weight}"${n === chosen && c.pos === x.top_pos ? ' class="top"' : ""}></td>`).join("") + "</tr>").join("");
  extra.innerHTML = `<table class="tour-cross"><caption>${esc(title)}</caption><tr><th></th>${head}</tr>${rows}</table>`;
}

async function llm(ctx) {
  const m = model(), src = (m && m.loaded_from) || {};
  const none = { facts: { cmd: "qkv serve --ckpt smollm2", model: modelName }, variant: "none" };
  if (!realLLM()) return none;
  await show(LLM_TEXT, ctx);
  const i = S.T - 1, k = S.doc.tokens.findIndex((t) => String(t).includes("France"));
  if (k < 0) return none;
  let best = { l: 0, h: 0, w: -1 };
  for (let l = 0; l < S.L; l++) for (let h = 0; h < S.H; h++) {
    const w = S.A.pattern[at4(l, h, i, k)];
    if (w > best.w) best = { l, h, w };
  }
  point(best.l, best.h, i);
  const K = S.A.next_ids.length / S.T;
  return { facts: { model: src.title || src.name || src.architecture, text: S.doc.text, top: S.doc.vocab[String(S.A.next_ids[i * K])],
    p: fmt(S.A.next_probs[i * K]), key: word(k), layer: best.l, head: best.h, weight: fmt(best.w) } };
}

export const MEASURES = { worked, hull, why_v: whyV, apple, heads, positions, residual, next, translate, llm };

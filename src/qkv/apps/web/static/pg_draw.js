// The attention playground's drawing: the panel's DOM, built once per layout (number of keys,
// language), and the redraw, at most one per animation frame, which rewrites attributes and text
// nodes only. Each redraw is announced ("pg-frame"; measure.js counts them for the benchmarks).

import { esc, fmt } from "./util.js";
import { t } from "./i18n.js";
import { announce } from "./announce.js";
import { pgClosed, pgFmt, pgShort } from "./exact.js";
import { convexHull } from "./hull.js";
import { PG, PG_COLORS, PG_H, PG_PRESETS, PG_TEMPS, PG_W, pgKey, pgN, pgName, pgRead, pgSteps, pgWeights } from "./pg_state.js";

const pgSub = (s, j) => `${s}<sub>${j + 1}</sub>`;

export function pgBuild() {
  const n = pgN(), box = document.getElementById("playground");
  const coordRow = (kind, j) => [0, 1].map((i) =>
    `<td><input class="pg-in" type="text" spellcheck="false" autocomplete="off" data-kind="${kind}" data-j="${j}" data-i="${i}"` +
    ` aria-label="${esc(pgName(kind, j, i))}"></td>`).join("");
  const rows = PG.K.map((_, j) => `<tr><th style="color:${PG_COLORS[j]}">${pgSub("k", j)}</th>${coordRow("K", j)}` +
    `<th style="color:${PG_COLORS[j]}">${pgSub("v", j)}</th>${coordRow("V", j)}` +
    `<td><button type="button" class="pg-del" data-j="${j}" title="${esc(t("pg_del"))}"${n <= 2 ? " disabled" : ""}>×</button></td></tr>`).join("");
  const num = (f, j, i) => `<span class="pg-x" data-f="${f}"${j !== undefined ? ` data-j="${j}"` : ""}${i !== undefined ? ` data-i="${i}"` : ""}></span><span class="pg-d"></span>`;
  const body = PG.K.map((_, j) => `<tr data-j="${j}"><th style="color:${PG_COLORS[j]}">${j + 1}</th>` +
    `<td>${num("dot_terms", j, 0)} + <span class="pg-paren">${num("dot_terms", j, 1)}</span> = ${num("dots", j)}</td>` +
    `<td>${num("scores", j)}</td><td>${num("shifted", j)}</td><td>${num("exps", j)}</td><td>${num("exps_shifted", j)}</td>` +
    `<td class="pg-w">${num("weights", j)}</td><td class="pg-delta"></td>` +
    `<td>(${num("contributions", j, 0)}, ${num("contributions", j, 1)})</td></tr>`).join("");
  const th = (key, title) => `<th${title ? ` title="${esc(t(title))}"` : ""}>${t(key)}</th>`;
  box.innerHTML =
    `<h2>${t("pg_title")}</h2><p class="caption pg-intro">${t("pg_intro")}</p>` +
    `<div class="pg-presets"><span class="label">${t("pg_presets")}</span>` +
    Object.keys(PG_PRESETS).map((p) => `<button type="button" data-preset="${p}"${p === PG.preset ? ' class="on"' : ""}>${t("pg_preset_" + p)}</button>`).join("") +
    `</div><p class="pg-about" data-state="${PG.preset ? "preset" : "none"}"><span class="pg-claim">${PG.preset ? t("pg_about_" + PG.preset) : ""}</span>` +
    `<span class="pg-changed">${PG.preset ? t("pg_about_changed", { name: t("pg_preset_" + PG.preset) }) : ""}</span></p>` +
    `<div class="pg-main">` +
    `<figure class="pg-plane"><svg id="pg-kplane" viewBox="0 0 ${PG_W} ${PG_H}" role="img" aria-label="q, k">${pgPlaneK(n)}</svg>` +
    `<figcaption class="caption">${t("pg_kplane")}</figcaption></figure>` +
    `<figure class="pg-plane"><svg id="pg-vplane" viewBox="0 0 ${PG_W} ${PG_H}" role="img" aria-label="v, z">${pgPlaneV(n)}</svg>` +
    `<figcaption class="caption">${t("pg_vplane")}</figcaption></figure>` +
    `<div class="pg-form"><table class="pg-coords"><thead><tr><th></th><th>x</th><th>y</th><th></th><th>x</th><th>y</th><th></th></tr></thead>` +
    `<tbody><tr><th class="pg-qlabel">q</th>${coordRow("q", 0)}<td colspan="4"></td></tr>${rows}</tbody></table>` +
    `<div class="pg-row"><button type="button" class="pg-add"${n >= 6 ? " disabled" : ""}>${t("pg_add")}</button>` +
    `<label class="pg-dk" title="${esc(t("pg_dk_title"))}">d<sub>k</sub> <input class="pg-in" type="text" spellcheck="false" data-kind="dk" data-j="0" data-i="0" aria-label="d_k">` +
    `<input class="pg-range" type="range" min="-4" max="8" step="0.5" aria-label="log2 d_k"></label></div>` +
    `<div class="pg-row"><select class="pg-move-j">${PG.K.map((_, j) => `<option value="${j}">k${j + 1}</option>`).join("")}</select>` +
    `<button type="button" class="pg-move" title="${esc(t("pg_move_title"))}">${t("pg_move")}</button></div>` +
    `<p class="pg-error error" role="alert" hidden></p>` +
    `<p class="caption">${t("pg_drag_tip")}</p><p class="caption">${t("pg_forms")}</p></div></div>` +
    `<p class="pg-change"></p>` +
    `<p class="pg-formula">√d<sub>k</sub> = ${num("sqrt_d_k")} · max s = ${num("max_score")} · z = Σ a<sub>j</sub>v<sub>j</sub> = (${num("z", undefined, 0)}, ${num("z", undefined, 1)})</p>` +
    `<div class="table-wrap"><table class="steps-table pg-table"><thead><tr><th>j</th>${th("pg_th_dot")}${th("pg_th_s")}` +
    `${th("pg_th_shift")}${th("pg_th_exp")}${th("pg_th_exps")}${th("pg_th_a")}${th("pg_th_delta", "pg_delta_title")}${th("pg_th_av")}</tr></thead>` +
    `<tbody>${body}</tbody><tfoot><tr><td>Σ</td><td></td><td></td><td></td><td>${num("total")}</td><td>${num("total_shifted")}</td>` +
    `<td><span class="pg-sum-a"></span></td><td></td><td>(${num("z", undefined, 0)}, ${num("z", undefined, 1)})</td></tr></tfoot></table></div>` +
    `<p class="caption">${t("pg_stable")}</p><p class="pg-hull-cap caption"></p>` +
    `<div class="pg-temp"><h3>${t("pg_temp_title")}</h3><div class="pg-temp-rows">` +
    [0, ...PG_TEMPS].map((_, r) => `<div class="pg-trow" data-r="${r}"><span class="pg-tlabel"></span><span class="pg-tbar">` +
      PG.K.map((_, j) => `<i style="background:${PG_COLORS[j]}"></i>`).join("") + `</span><span class="pg-tw num"></span></div>`).join("") +
    `</div><p class="caption">${t("pg_temp_caption")}</p></div>`;

  const all = (sel) => Array.from(box.querySelectorAll(sel));
  const el = { box, inputs: {}, kplane: box.querySelector("#pg-kplane"), vplane: box.querySelector("#pg-vplane"), nums: [] };
  for (const inp of all(".pg-in")) { el.inputs[pgKey(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i)] = inp; }
  for (const x of all(".pg-x")) el.nums.push({ x, d: x.nextElementSibling, f: x.dataset.f, j: x.dataset.j, i: x.dataset.i, text: null });
  for (const name of ["error", "change", "hull-cap", "range", "move-j", "sum-a", "about"]) el[name] = box.querySelector(".pg-" + name);
  el.presets = all(".pg-presets button[data-preset]");
  Object.assign(el, {
    delta: all(".pg-delta"), wcell: all(".pg-w"), paren: all(".pg-paren"), trows: all(".pg-trow"),
    kpts: all("#pg-kplane .pg-pt"), vpts: all("#pg-vplane .pg-pt"), proj: all(".pg-proj"), spokes: all(".pg-spoke"),
    ghosts: all(".pg-ghost"), trails: all(".pg-trail"), vdots: all(".pg-vdot"), vlabels: all(".pg-vlabel"),
  });
  for (const name of ["qarrow", "qline", "hull", "hull-line", "z", "zghost", "ztrail"]) el[name] = box.querySelector(".pg-" + name);
  el.grids = [el.kplane.querySelector(".pg-grid"), el.vplane.querySelector(".pg-grid")];
  PG.el = el;
  for (const [key, inp] of Object.entries(el.inputs)) {
    const [kind, j, i] = [inp.dataset.kind, +inp.dataset.j, +inp.dataset.i];
    inp.value = kind === "dk" ? PG.text.dk : kind === "q" ? PG.text.q[i] : PG.text[kind][j][i];
    inp.classList.toggle("bad", key in PG.errors);
  }
  pgFit(true);
}

// The point markers: q, k_j (key plane), v_j (value plane). A ghost and a trail per point show
// where it was before the change in progress. Each point group is moved by its transform.
function pgPlaneK(n) {
  let s = `<defs><marker id="pg-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
    `<path d="M0,0L10,5L0,10z" fill="#ea580c"/></marker></defs><g class="pg-grid"></g><line class="pg-qline"/>`;
  for (let j = 0; j < n; j++) s += `<line class="pg-proj" stroke="${PG_COLORS[j]}"/>`;
  s += `<line class="pg-qarrow" marker-end="url(#pg-head)"/>`;
  for (let j = 0; j <= n; j++) s += `<line class="pg-trail"/><circle class="pg-ghost" r="6"/>`;
  for (let j = 0; j < n; j++) {
    s += `<g class="pg-pt pg-key" data-kind="K" data-j="${j}"><circle class="pg-hit" r="14"/>` +
      `<circle r="6.5" fill="${PG_COLORS[j]}"/><text x="9" y="-8">k${j + 1}</text></g>`;
  }
  return s + `<g class="pg-pt pg-q" data-kind="q" data-j="0"><circle class="pg-hit" r="14"/><path d="M0,-9L9,0L0,9L-9,0z"/><text x="10" y="-9">q</text></g>`;
}

function pgPlaneV(n) {
  let s = `<g class="pg-grid"></g><polygon class="pg-hull"/><line class="pg-hull-line"/>`;
  for (let j = 0; j < n; j++) s += `<line class="pg-spoke" stroke="${PG_COLORS[j]}"/>`;
  for (let j = 0; j < n; j++) s += `<line class="pg-trail"/><circle class="pg-ghost" r="6"/>`;
  s += `<line class="pg-ztrail"/><path class="pg-zghost" d="M-5,-5L5,5M-5,5L5,-5"/>`;
  for (let j = 0; j < n; j++) {
    s += `<g class="pg-pt pg-val" data-kind="V" data-j="${j}"><circle class="pg-hit" r="14"/>` +
      `<rect class="pg-vdot" x="-6" y="-6" width="12" height="12" rx="2" fill="${PG_COLORS[j]}"/><text class="pg-vlabel" x="9" y="-8"></text></g>`;
  }
  return s + `<g class="pg-z"><path d="M-7,-7L7,7M-7,7L7,-7"/><text x="9" y="-8">z</text></g>`;
}

// plane units -> SVG pixels, kept within ±1e5 px (a number near the largest float must still draw)
const pgClip = (v) => (v > 1e5 ? 1e5 : v < -1e5 ? -1e5 : v === v ? v : 0);
const pgX = (p, x) => pgClip((x - p.x0) * p.sc);
const pgY = (p, y) => pgClip(PG_H - (y - p.y0) * p.sc);

/** Fit each plane to its points (and the origin); with force false, only when a point left the view. */
export function pgFit(force) {
  const sets = { k: [PG.q, ...PG.K], v: [...PG.V] };
  ["k", "v"].forEach((name, n) => {
    const p = PG.planes[name], pts = sets[name].concat([[0, 0]]);
    const m = 18 / p.sc;
    const out = pts.some(([x, y]) => x < p.x0 + m || x > p.x0 + PG_W / p.sc - m || y < p.y0 + m || y > p.y0 + PG_H / p.sc - m);
    if (!force && !out) return;
    const xs = pts.map((pt) => pt[0]), ys = pts.map((pt) => pt[1]);
    const lo = [Math.min(...xs), Math.min(...ys)], hi = [Math.max(...xs), Math.max(...ys)];
    const span = Math.min(Math.max(hi[0] - lo[0], hi[1] - lo[1], 1) * 1.35 + 0.6, 1e300);
    p.sc = Math.min(PG_W, PG_H) / span;
    p.x0 = lo[0] / 2 + hi[0] / 2 - PG_W / 2 / p.sc;
    p.y0 = lo[1] / 2 + hi[1] / 2 - PG_H / 2 / p.sc;
    PG.el.grids[n].innerHTML = pgGrid(p);
  });
}

function pgGrid(p) {
  const least = 26 / p.sc, unit = Math.pow(10, Math.floor(Math.log10(least)));  // grid lines ≥ 26 px apart
  const step = [1, 2, 2.5, 5, 10].map((m) => m * unit).find((s) => s >= least);
  const x1 = p.x0 + PG_W / p.sc, y1 = p.y0 + PG_H / p.sc;
  let s = "";
  for (let x = Math.ceil(p.x0 / step) * step; x <= x1; x += step) {
    const X = pgX(p, x).toFixed(1), axis = Math.abs(x) < step / 2;
    s += `<line class="${axis ? "pg-axis" : "pg-gl"}" x1="${X}" y1="0" x2="${X}" y2="${PG_H}"/>`;
    if (!axis) s += `<text class="pg-tick" x="${(+X + 2).toFixed(1)}" y="${(pgY(p, 0) + 11).toFixed(1)}">${+x.toPrecision(6)}</text>`;
  }
  for (let y = Math.ceil(p.y0 / step) * step; y <= y1; y += step) {
    const Y = pgY(p, y).toFixed(1), axis = Math.abs(y) < step / 2;
    s += `<line class="${axis ? "pg-axis" : "pg-gl"}" x1="0" y1="${Y}" x2="${PG_W}" y2="${Y}"/>`;
    if (!axis) s += `<text class="pg-tick" x="${(pgX(p, 0) + 3).toFixed(1)}" y="${(+Y - 2).toFixed(1)}">${+y.toPrecision(6)}</text>`;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// The redraw: at most one per animation frame
// ---------------------------------------------------------------------------------------------

export function pgSchedule() {
  if (!PG.raf) PG.raf = requestAnimationFrame(() => { PG.raf = 0; pgDraw(); });
}

function pgSet(node, attr, value) { if (node.getAttribute(attr) !== value) node.setAttribute(attr, value); }
function pgText(node, text) { if (node.textContent !== text) node.textContent = text; }
function pgLine(node, p, a, b) {
  pgSet(node, "x1", pgX(p, a[0]).toFixed(1)); pgSet(node, "y1", pgY(p, a[1]).toFixed(1));
  pgSet(node, "x2", pgX(p, b[0]).toFixed(1)); pgSet(node, "y2", pgY(p, b[1]).toFixed(1));
}
const pgAt = (p, pt) => `translate(${pgX(p, pt[0]).toFixed(1)},${pgY(p, pt[1]).toFixed(1)})`;

export function pgDraw() {
  const t0 = performance.now(), el = PG.el, n = pgN();
  if (PG.drag && PG.drag.at) pgDragTo();
  const errs = Object.values(PG.errors);
  const s = pgSteps(PG.q, PG.K, PG.V, PG.dk);
  if (s.error) errs.push(s.error);
  el.error.hidden = !errs.length;
  pgText(el.error, errs.join(" · "));
  if (!s.error) {
    PG.steps = s;
    pgDrawPlanes(s, n);
    pgDrawNumbers(s, n);
  }
  pgDrawAbout();
  announce("pg-frame", { t0 });
}

function pgDrawPlanes(s, n) {
  const el = PG.el, pk = PG.planes.k, pv = PG.planes.v, ref = PG.ref;
  el.kpts.forEach((g) => pgSet(g, "transform", pgAt(pk, g.dataset.kind === "q" ? PG.q : PG.K[+g.dataset.j])));
  el.vpts.forEach((g) => pgSet(g, "transform", pgAt(pv, PG.V[+g.dataset.j])));
  // q as an arrow from the origin, the line it spans, and each key's foot on that line
  const qq = PG.q[0] * PG.q[0] + PG.q[1] * PG.q[1], far = (PG_W + PG_H) / pk.sc;
  const u = qq > 0 ? [PG.q[0] / Math.sqrt(qq), PG.q[1] / Math.sqrt(qq)] : [0, 0];
  pgLine(el.qarrow, pk, [0, 0], PG.q);
  pgLine(el.qline, pk, [-u[0] * far, -u[1] * far], [u[0] * far, u[1] * far]);
  PG.K.forEach((k, j) => { const d = k[0] * u[0] + k[1] * u[1]; pgLine(el.proj[j], pk, k, [d * u[0], d * u[1]]); });
  // where the moved points were: a ghost and a trail for q and each key, each value, and z
  const was = [[pk, ref && ref.q, PG.q], ...PG.K.map((k, j) => [pk, ref && ref.K[j], k]), ...PG.V.map((v, j) => [pv, ref && ref.V[j], v])];
  const order = [n, ...PG.K.map((_, j) => j), ...PG.V.map((_, j) => n + 1 + j)];  // ghosts: keys' (n + 1, q last), then values'
  was.forEach(([p, old, now], m) => {
    const g = el.ghosts[order[m]], tr = el.trails[order[m]], show = !!old && (old[0] !== now[0] || old[1] !== now[1]);
    pgSet(g, "visibility", show ? "visible" : "hidden"); pgSet(tr, "visibility", show ? "visible" : "hidden");
    if (show) { pgSet(g, "cx", pgX(p, old[0]).toFixed(1)); pgSet(g, "cy", pgY(p, old[1]).toFixed(1)); pgLine(tr, p, old, now); }
  });
  const zMoved = !!ref && Math.hypot(ref.z[0] - s.z[0], ref.z[1] - s.z[1]) * pv.sc > 0.5;
  pgSet(el.zghost, "visibility", zMoved ? "visible" : "hidden"); pgSet(el.ztrail, "visibility", zMoved ? "visible" : "hidden");
  if (zMoved) { pgSet(el.zghost, "transform", pgAt(pv, ref.z)); pgLine(el.ztrail, pv, ref.z, s.z); }
  // the values: hull, spokes from z, sizes by weight; z
  const hull = convexHull(PG.V.map((v) => v.slice()));
  pgSet(el.hull, "points", hull.length >= 3 ? hull.map((h) => `${pgX(pv, h[0]).toFixed(1)},${pgY(pv, h[1]).toFixed(1)}`).join(" ") : "");
  const ends = hull.length === 2 ? hull : [[0, 0], [0, 0]];
  pgSet(el["hull-line"], "visibility", hull.length === 2 ? "visible" : "hidden");
  pgLine(el["hull-line"], pv, ends[0], ends[1]);
  PG.V.forEach((v, j) => {
    const a = s.weights[j], r = (3 + 9 * Math.sqrt(a)).toFixed(1);
    pgLine(el.spokes[j], pv, s.z, v);
    pgSet(el.spokes[j], "stroke-opacity", (0.08 + 0.8 * a).toFixed(2));
    pgSet(el.vdots[j], "x", `-${r}`); pgSet(el.vdots[j], "y", `-${r}`);
    pgSet(el.vdots[j], "width", String(2 * r)); pgSet(el.vdots[j], "height", String(2 * r));
    pgText(el.vlabels[j], `v${j + 1} · ${pgShort(a)}`);
  });
  pgSet(el.z, "transform", pgAt(pv, s.z));
  el.zWhere = pgWhere(hull, s.z);
}

/** Whether q, K, V and d_k are still the preset's numbers (the temperature preset invites a change of
 *  d_k: only q, K and V count there). */
function pgAtPreset() {
  const p = PG.preset && PG.presetAt;
  if (!p) return false;
  const same = (a, b) => a.length === b.length && a.every((x, i) => (Array.isArray(x) ? same(x, b[i]) : x === b[i]));
  return same(PG.q, p.q) && same(PG.K, p.K) && same(PG.V, p.V) && (PG.preset === "temperature" || PG.dk === p.d_k);
}

/** The preset's line under the buttons: its claim while its numbers are untouched; once a point is
 *  dragged or a number typed, a line saying they changed, and its button no longer marked on. Both
 *  lines are in the page, one over the other (playground.css): the one not shown keeps its room, so
 *  the planes below never move under the mouse that drags a point. */
function pgDrawAbout() {
  const el = PG.el, at = pgAtPreset(), changed = !!PG.preset && !at;
  const state = !PG.preset ? "none" : changed ? "changed" : "preset";
  if (el.about.dataset.state !== state) el.about.dataset.state = state;
  for (const b of el.presets) b.classList.toggle("on", b.dataset.preset === PG.preset && at);
}

/** Where z lies with respect to the drawn hull: "inside", "edge" or "outside" (in the plane's units). */
function pgWhere(hull, z) {
  const eps = 1e-9 * Math.max(1, ...PG.V.flat().map(Math.abs));
  if (hull.length === 1) return Math.hypot(z[0] - hull[0][0], z[1] - hull[0][1]) <= eps ? "edge" : "outside";
  let edge = false;
  for (let m = 0; m < hull.length; m++) {
    const a = hull[m], b = hull[(m + 1) % hull.length], len = Math.hypot(b[0] - a[0], b[1] - a[1]);
    const side = ((b[0] - a[0]) * (z[1] - a[1]) - (b[1] - a[1]) * (z[0] - a[0])) / len;  // counter-clockwise: ≥ 0 inside
    if (side < -eps) return "outside";
    if (side <= eps) edge = true;
  }
  return edge || hull.length === 2 ? "edge" : "inside";
}

function pgDrawNumbers(s, n) {
  const el = PG.el, ref = PG.ref;
  for (const c of el.nums) {
    let x = s[c.f];
    if (c.j !== undefined) x = x[+c.j];
    if (c.i !== undefined) x = x[+c.i];
    const text = pgFmt(x);
    if (text === c.text) continue;
    c.text = text;
    c.x.textContent = text;
    // a decimal next to an exact form that is not a plain integer
    c.d.textContent = /[^\d-]/.test(text) && pgClosed(x) !== null ? `≈ ${fmt(x)}` : "";
  }
  el.paren.forEach((p, j) => p.classList.toggle("neg", s.dot_terms[j][1] < 0));
  el.wcell.forEach((c, j) => c.style.setProperty("--w", `${(100 * s.weights[j]).toFixed(1)}%`));
  el["sum-a"].textContent = pgFmt(s.weights.reduce((a, b) => a + b, 0));
  el.delta.forEach((c, j) => {
    const d = ref ? s.weights[j] - ref.weights[j] : 0;
    pgText(c, d === 0 ? "0" : (d > 0 ? "+" : "") + fmt(d));
    c.className = "pg-delta" + (d > 1e-12 ? " up" : d < -1e-12 ? " down" : "");
  });
  const sum = s.weights.map((a, j) => `${pgShort(a)}·v<sub>${j + 1}</sub>`).join(" + ");
  el["hull-cap"].innerHTML = t("pg_hull", { sum, z: s.z.map(pgShort).join(", "),
    where: `<span class="pg-where" data-where="${el.zWhere}">${t("pg_" + el.zWhere)}</span>` });
  const vec = (xs) => xs.map(pgShort).join(", ");
  const moved = ref && ref.weights.length === n && (s.z[0] !== ref.z[0] || s.z[1] !== ref.z[1] || s.weights.some((a, j) => a !== ref.weights[j]));
  el.change.innerHTML = moved ? t("pg_change", { what: esc(PG.what), a0: vec(ref.weights), a1: vec(s.weights), z0: vec(ref.z), z1: vec(s.z) })
    : t("pg_nochange");
  const dks = [PG.dk, ...PG_TEMPS];
  el.trows.forEach((row, r) => {
    const w = pgWeights(PG.q, PG.K, dks[r]);
    pgText(row.firstChild, `${r === 0 ? t("pg_now") + ": " : ""}d_k = ${pgShort(dks[r])}`);
    Array.from(row.children[1].children).forEach((seg, j) => { seg.style.width = `${(100 * w[j]).toFixed(2)}%`; });
    pgText(row.lastChild, w.map((a) => a.toFixed(2)).join(" · "));
  });
}

/** The text an input gets when the page moves a point: an exact form when the number has one. */
export function pgWrite(kind, j, i, text) {
  pgRead(kind, j, i, text);
  const inp = PG.el.inputs[pgKey(kind, j, i)];
  if (inp && inp.value !== text) inp.value = text;
  if (inp) inp.classList.remove("bad");
}

export function pgDragTo() {
  const d = PG.drag, p = PG.planes[d.kind === "V" ? "v" : "k"], r = d.rect;
  const grid = d.shift ? 1e4 : 20;  // snap to 0.05, or to 0.0001 with Shift
  const x = (d.at[0] - r.left) * PG_W / r.width / p.sc + p.x0, y = (PG_H - (d.at[1] - r.top) * PG_H / r.height) / p.sc + p.y0;
  [x, y].forEach((v, i) => pgWrite(d.kind, d.j, i, String(Math.round(v * grid) / grid + 0)));
  d.at = null;
}

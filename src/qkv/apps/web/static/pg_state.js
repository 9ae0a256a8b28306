// The attention playground's numbers: the computation (the same steps, in the same order, as
// qkv.analysis.attend), its state (q, the keys, the values, d_k, each as the text typed and its value)
// and the presets. Drawing is pg_draw.js; the panel and its events are playground.js.
//     q·k_j = q_1 k_j1 + q_2 k_j2,  s_j = q·k_j / √d_k,  a_j = e^{s_j − max s} / Σ_i e^{s_i − max s},
//     z = Σ_j a_j v_j   (a_j ≥ 0, Σ a_j = 1: z lies in the convex hull of the values)

import { t } from "./i18n.js";
import { pgParse } from "./exact.js";

export function pgSteps(q, K, V, dk) {
  const sq = Math.sqrt(dk);
  const dot_terms = K.map((k) => [q[0] * k[0], q[1] * k[1]]);
  const dots = dot_terms.map((p) => p[0] + p[1]);
  const scores = dots.map((d) => d / sq);
  const max_score = Math.max(...scores);
  const shifted = scores.map((s) => s - max_score);
  const bad = K.findIndex((_, j) => !(Number.isFinite(dot_terms[j][0] + dot_terms[j][1]) && Number.isFinite(shifted[j])));
  if (bad >= 0) return { error: t("pg_err_overflow", { j: bad + 1 }) };
  const exps = scores.map(Math.exp), exps_shifted = shifted.map(Math.exp);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const total_shifted = sum(exps_shifted);
  const weights = exps_shifted.map((e) => e / total_shifted);
  const contributions = weights.map((a, j) => [a * V[j][0], a * V[j][1]]);
  const z = [0, 1].map((i) => weights.reduce((acc, a, j) => acc + a * V[j][i], 0));
  return { d_k: dk, sqrt_d_k: sq, dot_terms, dots, scores, max_score, shifted, exps, total: sum(exps),
    exps_shifted, total_shifted, weights, contributions, z };
}

/** The weights alone (for the temperature rows). */
export function pgWeights(q, K, dk) {
  const s = K.map((k) => (q[0] * k[0] + q[1] * k[1]) / Math.sqrt(dk)), m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m)), total = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / total);
}

// ---------------------------------------------------------------------------------------------
// State and presets. Each coordinate is the value of its text (what the input shows).
// ---------------------------------------------------------------------------------------------

export const PG_PRESETS = {
  article: { q: ["√2", "0"], K: [["ln 2", "0"], ["0", "1"], ["0", "-1"]], V: [["0", "0"], ["4", "0"], ["0", "4"]], dk: "2" },
  dominant: { q: ["3", "0.5"], K: [["3", "0"], ["0", "1.5"], ["-1", "0.5"], ["0.5", "-2"]],
    V: [["4", "1"], ["0", "3"], ["-2", "-1"], ["1", "-3"]], dk: "2" },
  equal: { q: ["0", "1"], K: [["-2", "1"], ["-0.5", "1"], ["1", "1"], ["2.5", "1"]],
    V: [["0", "0"], ["3", "0"], ["3", "3"], ["0", "3"]], dk: "2" },
  temperature: { q: ["2", "1"], K: [["1", "0"], ["0", "1"], ["-1", "-1"]], V: [["0", "0"], ["4", "0"], ["2", "3"]], dk: "1" },
};
export const PG_COLORS = ["#1d4ed8", "#15803d", "#9333ea", "#db2777", "#0e7490", "#a16207"];
export const PG_TEMPS = [0.25, 1, 4, 16, 64];
export const PG_W = 320;
export const PG_H = 260;

export const PG = {
  preset: "article", presetAt: null, text: null, q: [0, 0], K: [], V: [], dk: 2, errors: {},
  steps: null, ref: null, what: "", drag: null, raf: 0, el: null,
  planes: { k: { x0: -1, y0: -1, sc: 40 }, v: { x0: -1, y0: -1, sc: 40 } },
};
export const pgN = () => PG.K.length;
export const pgKey = (kind, j, i) => (kind === "q" ? `q.${i}` : kind === "dk" ? "dk" : `${kind}${j}.${i}`);
export const pgName = (kind, j, i) => (kind === "dk" ? "d_k" : `${kind === "q" ? "q" : kind.toLowerCase() + (j + 1)} ${"xy"[i]}`);

/** Read one text into the state; a text that cannot be read keeps the last number and records why. */
export function pgRead(kind, j, i, text) {
  const key = pgKey(kind, j, i);
  try {
    const v = pgParse(text);
    if (kind === "dk" && !(v > 0)) throw new Error(t("pg_err_dk"));
    if (kind === "dk") { PG.text.dk = text; PG.dk = v; }
    else if (kind === "q") { PG.text.q[i] = text; PG.q[i] = v; }
    else { PG.text[kind][j][i] = text; PG[kind][j][i] = v; }
    delete PG.errors[key];
  } catch (e) {
    if (kind === "dk") PG.text.dk = text; else if (kind === "q") PG.text.q[i] = text; else PG.text[kind][j][i] = text;
    PG.errors[key] = t("pg_err_in", { where: pgName(kind, j, i), msg: e.message });
  }
}

export function pgLoad(texts) {
  PG.text = JSON.parse(JSON.stringify(texts));
  PG.errors = {};
  PG.q = [0, 0]; PG.K = texts.K.map(() => [0, 0]); PG.V = texts.V.map(() => [0, 0]); PG.dk = 2;
  texts.q.forEach((s, i) => pgRead("q", 0, i, s));
  for (const kind of ["K", "V"]) texts[kind].forEach((row, j) => row.forEach((s, i) => pgRead(kind, j, i, s)));
  pgRead("dk", 0, 0, texts.dk);
  PG.ref = null;
}

/** Remember the numbers before a change (a drag, an edit, a move), for the Δ column and the ghosts. */
export function pgSetRef(what) {
  const s = PG.steps && !PG.steps.error ? PG.steps : null;
  PG.ref = s && { q: PG.q.slice(), K: PG.K.map((k) => k.slice()), V: PG.V.map((v) => v.slice()), weights: s.weights.slice(), z: s.z.slice() };
  PG.what = what;
}

/** For the test hook (measure.js): the playground's numbers now, its last steps, whether a redraw is to come. */
export const pgSnapshot = () => ({ q: PG.q.slice(), K: PG.K.map((k) => k.slice()), V: PG.V.map((v) => v.slice()), d_k: PG.dk,
  text: JSON.parse(JSON.stringify(PG.text)) });
export const pgStepsShown = () => PG.steps;
export const pgBusy = () => PG.raf !== 0 || PG.drag !== null;  // a redraw is still to come

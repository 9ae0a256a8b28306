"use strict";
// The attention playground (a panel: see PANELS in app.js). One query q, 2–6 keys k_j with their
// values v_j, all in the plane, and a chosen d_k; computed here in the browser, step for step as
// qkv.analysis.attend does it, so it also works in the static export (no server):
//     q·k_j = q_1 k_j1 + q_2 k_j2,  s_j = q·k_j / √d_k,  a_j = e^{s_j − max s} / Σ_i e^{s_i − max s},
//     z = Σ_j a_j v_j   (a_j ≥ 0, Σ a_j = 1: z lies in the convex hull of the values)
// Numbers are shown as `qkv attend` shows them (its "display"): an exact form r·B when there is one
// (numbers.closed_form: r = p/q with q ≤ 64, B one of 1, √n, ln n, √n·ln m, π, e), else 6 digits.
// Speed: the DOM is built once per layout (number of keys, language); a drag or an edit only
// schedules one redraw per animation frame, which rewrites attributes and text nodes.
// Tests and benchmarks/playground_fps.py read window.qkv.playground (state, steps, frame counts).

Object.assign(I18N.en, {
  pg_title: "Attention playground: one query, a few keys, in the plane",
  pg_intro: "Drag q, a key k<sub>j</sub> or a value v<sub>j</sub>, or type their coordinates. Every step below is recomputed at once, in the page, the way <code>qkv attend</code> derives it, and shown in exact form (1/2, ln 2, √2) where the number has one.",
  pg_presets: "Presets",
  pg_preset_article: "The articles' example", pg_preset_dominant: "One key dominates",
  pg_preset_equal: "All keys equal", pg_preset_temperature: "Temperature",
  pg_about_article: "The worked example of the articles: the scores come out as ln 2, 0, 0, so e<sup>s</sup> is 2, 1, 1 and the weights are 1/2, 1/4, 1/4; z = (1, 1) sits inside the triangle of the three values.",
  pg_about_dominant: "k<sub>1</sub> points where q points and is long, so its score towers over the others: softmax hands it nearly all the weight and z lands almost on v<sub>1</sub>, close to a plain look-up.",
  pg_about_equal: "The keys are different points, but all lie on one line at right angles to q, so every q·k<sub>j</sub> is the same: each weight is 1/n and z is the plain average (the centroid) of the values.",
  pg_about_temperature: "Same q, K and V; only d<sub>k</sub> changes. Dividing the scores by √d<sub>k</sub> acts like a temperature: a small d<sub>k</sub> sharpens the weights toward the best-matching key, a large one flattens them toward 1/n. Move the d<sub>k</sub> slider, or compare the rows at the bottom.",
  pg_kplane: "Query and keys. The dashed lines drop each k<sub>j</sub> onto the direction of q: the farther along q, the larger q·k<sub>j</sub>.",
  pg_vplane: "Values, their convex hull (shaded) and z (✕); each spoke is as strong as its weight.",
  pg_key: "key", pg_value: "value", pg_add: "+ key", pg_del: "remove this key and its value",
  pg_dk_title: "the d_k in s = q·k / √d_k: any positive number",
  pg_move: "Move halfway to q", pg_move_title: "k_j ← k_j + (q − k_j)/2, and show before → after",
  pg_drag_tip: "Drag a point with the mouse: it snaps to steps of 0.05 (hold Shift for 0.0001).",
  pg_forms: "Coordinates and d<sub>k</sub> accept numbers (−1, 0.35, 1e-3), + − * / and brackets, powers 2^-1 or 2**-1, sqrt(2) or √2, ln(2) or ln 2, log(x) (natural) or log(x, b), exp(1), pi or π, e; a number right before a name multiplies it (2√3, 3 ln 2).",
  pg_th_dot: "q·k<sub>j</sub> = q<sub>1</sub>k<sub>j1</sub> + q<sub>2</sub>k<sub>j2</sub>",
  pg_th_s: "s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>k</sub>", pg_th_shift: "s<sub>j</sub> − max s",
  pg_th_exp: "e<sup>s<sub>j</sub></sup>", pg_th_exps: "e<sup>s<sub>j</sub> − max s</sup>", pg_th_a: "a<sub>j</sub>",
  pg_th_delta: "Δa<sub>j</sub>", pg_th_av: "a<sub>j</sub>v<sub>j</sub>",
  pg_delta_title: "the change of a_j since the last drag, edit or move began (the faint marks in the planes show where things were)",
  pg_stable: "softmax is computed in the stable form e<sup>s<sub>j</sub> − max s</sup> / Σ e<sup>s<sub>i</sub> − max s</sup>: the same weights, and no e<sup>s</sup> can overflow.",
  pg_hull: "z = {sum} = ({z}): the weights are ≥ 0 and add up to 1, so z is a convex combination of the values (the a<sub>j</sub> are its barycentric weights) and lies in their hull — {where}.",
  pg_inside: "checked on the drawing: inside", pg_edge: "checked on the drawing: on its boundary",
  pg_outside: "checked on the drawing: outside (this should never happen)",
  pg_change: "Before → after ({what}): a = ({a0}) → ({a1}); z = ({z0}) → ({z1}).",
  pg_nochange: "Drag a point, type a coordinate or press “Move halfway to q”: how each weight changes shows here and in the Δa column.",
  pg_temp_title: "The same q, K and V at other d<sub>k</sub>",
  pg_temp_caption: "√d<sub>k</sub> works as a temperature: the scores are divided by it before softmax, so a small d<sub>k</sub> sharpens the weights and a large one flattens them toward 1/n.",
  pg_now: "now",
  pg_err_empty: "empty number", pg_err_long: "the text is too long",
  pg_err_at: "cannot read “{text}”: unexpected “{tok}”", pg_err_end: "cannot read “{text}”: it stops too early",
  pg_err_name: "unknown name “{name}” (allowed: sqrt, √, ln, log, exp, pi, π, e)",
  pg_err_args: "{name}() takes {n} argument(s)", pg_err_finite: "“{text}” is not a finite real number",
  pg_err_dk: "d_k must be a positive number", pg_err_overflow: "q·k{j} passes the largest float: use smaller numbers",
  pg_err_in: "{where}: {msg} (the last number that could be read is used)",
});
Object.assign(I18N.zh, {
  pg_title: "注意力试验场：平面上的一个 Query 和几个 Key",
  pg_intro: "拖动 q、某个 Key k<sub>j</sub> 或 Value v<sub>j</sub>，或直接输入坐标。下面每一步都会立刻在页面里重新计算，做法与 <code>qkv attend</code> 相同；数值有精确形式（1/2、ln 2、√2）时就显示精确形式。",
  pg_presets: "预设",
  pg_preset_article: "文章的例子", pg_preset_dominant: "一个 Key 占主导",
  pg_preset_equal: "所有 Key 同分", pg_preset_temperature: "温度",
  pg_about_article: "文章里的手算例子：分数是 ln 2、0、0，于是 e<sup>s</sup> 为 2、1、1，权重为 1/2、1/4、1/4；z = (1, 1) 落在三个 Value 围成的三角形里。",
  pg_about_dominant: "k<sub>1</sub> 与 q 同向而且很长，分数远高于其他 Key：softmax 几乎把全部权重都给了它，z 几乎落在 v<sub>1</sub> 上，接近一次直接查表。",
  pg_about_equal: "这几个 Key 位置各不相同，却都在一条与 q 垂直的直线上，所以每个 q·k<sub>j</sub> 都一样：每个权重都是 1/n，z 就是各 Value 的平均（重心）。",
  pg_about_temperature: "q、K、V 不变，只改 d<sub>k</sub>。分数除以 √d<sub>k</sub> 就像温度：d<sub>k</sub> 小，权重更集中到最匹配的 Key；d<sub>k</sub> 大，权重趋向 1/n。拖动 d<sub>k</sub> 滑块，或比较最下面几行。",
  pg_kplane: "Query 与 Key。虚线把每个 k<sub>j</sub> 投影到 q 的方向上：沿 q 的方向越远，q·k<sub>j</sub> 越大。",
  pg_vplane: "Value、它们的凸包（阴影）和 z（✕）；每条连线的深浅对应其权重。",
  pg_key: "Key", pg_value: "Value", pg_add: "+ Key", pg_del: "删除这个 Key 及其 Value",
  pg_dk_title: "s = q·k / √d_k 中的 d_k：任意正数",
  pg_move: "向 q 移动一半", pg_move_title: "k_j ← k_j + (q − k_j)/2，并显示前后对比",
  pg_drag_tip: "用鼠标拖动点：坐标按 0.05 对齐（按住 Shift 则按 0.0001）。",
  pg_forms: "坐标和 d<sub>k</sub> 可以输入：数字（−1、0.35、1e-3）、+ − * / 与括号、乘方 2^-1 或 2**-1、sqrt(2) 或 √2、ln(2) 或 ln 2、log(x)（自然对数）或 log(x, b)、exp(1)、pi 或 π、e；数字紧接名字表示相乘（2√3、3 ln 2）。",
  pg_th_dot: "q·k<sub>j</sub> = q<sub>1</sub>k<sub>j1</sub> + q<sub>2</sub>k<sub>j2</sub>",
  pg_th_s: "s<sub>j</sub> = q·k<sub>j</sub> / √d<sub>k</sub>", pg_th_shift: "s<sub>j</sub> − max s",
  pg_th_exp: "e<sup>s<sub>j</sub></sup>", pg_th_exps: "e<sup>s<sub>j</sub> − max s</sup>", pg_th_a: "a<sub>j</sub>",
  pg_th_delta: "Δa<sub>j</sub>", pg_th_av: "a<sub>j</sub>v<sub>j</sub>",
  pg_delta_title: "从上次拖动、编辑或移动开始以来 a_j 的变化（平面上的淡色记号标出原来的位置）",
  pg_stable: "softmax 按稳定形式计算：e<sup>s<sub>j</sub> − max s</sup> / Σ e<sup>s<sub>i</sub> − max s</sup>，权重不变，而且任何 e<sup>s</sup> 都不会溢出。",
  pg_hull: "z = {sum} = ({z})：权重都 ≥ 0 且和为 1，所以 z 是各 Value 的凸组合（a<sub>j</sub> 就是它的重心坐标），位于它们的凸包内 —— {where}。",
  pg_inside: "按图验证：在内部", pg_edge: "按图验证：在边界上", pg_outside: "按图验证：在外面（不应出现）",
  pg_change: "前 → 后（{what}）：a = ({a0}) → ({a1})；z = ({z0}) → ({z1})。",
  pg_nochange: "拖动一个点、输入坐标或按“向 q 移动一半”：每个权重如何变化会显示在这里和 Δa 列。",
  pg_temp_title: "同样的 q、K、V，换成别的 d<sub>k</sub>",
  pg_temp_caption: "√d<sub>k</sub> 起到温度的作用：softmax 之前分数先除以它，所以 d<sub>k</sub> 小时权重更尖锐，d<sub>k</sub> 大时权重更平、趋向 1/n。",
  pg_now: "当前",
  pg_err_empty: "数字为空", pg_err_long: "文字太长",
  pg_err_at: "无法读取“{text}”：意外的“{tok}”", pg_err_end: "无法读取“{text}”：还没写完",
  pg_err_name: "未知的名字“{name}”（可用：sqrt、√、ln、log、exp、pi、π、e）",
  pg_err_args: "{name}() 需要 {n} 个参数", pg_err_finite: "“{text}”不是有限的实数",
  pg_err_dk: "d_k 必须是正数", pg_err_overflow: "q·k{j} 超出了浮点数的最大值：请用小一些的数",
  pg_err_in: "{where}：{msg}（仍使用上一个能读取的数）",
});

// ---------------------------------------------------------------------------------------------
// The computation (the same steps, in the same order, as qkv.analysis.attend)
// ---------------------------------------------------------------------------------------------

function pgSteps(q, K, V, dk) {
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
function pgWeights(q, K, dk) {
  const s = K.map((k) => (q[0] * k[0] + q[1] * k[1]) / Math.sqrt(dk)), m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m)), total = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / total);
}

// ---------------------------------------------------------------------------------------------
// State and presets. Each coordinate is the value of its text (what the input shows).
// ---------------------------------------------------------------------------------------------

const PG_PRESETS = {
  article: { q: ["√2", "0"], K: [["ln 2", "0"], ["0", "1"], ["0", "-1"]], V: [["0", "0"], ["4", "0"], ["0", "4"]], dk: "2" },
  dominant: { q: ["3", "0.5"], K: [["3", "0"], ["0", "1.5"], ["-1", "0.5"], ["0.5", "-2"]],
    V: [["4", "1"], ["0", "3"], ["-2", "-1"], ["1", "-3"]], dk: "2" },
  equal: { q: ["0", "1"], K: [["-2", "1"], ["-0.5", "1"], ["1", "1"], ["2.5", "1"]],
    V: [["0", "0"], ["3", "0"], ["3", "3"], ["0", "3"]], dk: "2" },
  temperature: { q: ["2", "1"], K: [["1", "0"], ["0", "1"], ["-1", "-1"]], V: [["0", "0"], ["4", "0"], ["2", "3"]], dk: "1" },
};
const PG_COLORS = ["#1d4ed8", "#15803d", "#9333ea", "#db2777", "#0e7490", "#a16207"];
const PG_TEMPS = [0.25, 1, 4, 16, 64];
const PG_W = 320, PG_H = 260;

const PG = {
  preset: "article", text: null, q: [0, 0], K: [], V: [], dk: 2, errors: {},
  steps: null, ref: null, what: "", drag: null, raf: 0, el: null,
  planes: { k: { x0: -1, y0: -1, sc: 40 }, v: { x0: -1, y0: -1, sc: 40 } },
};
window.qkv.playground = {
  frames: 0, times: [], ms: [],
  state: () => ({ q: PG.q.slice(), K: PG.K.map((k) => k.slice()), V: PG.V.map((v) => v.slice()), d_k: PG.dk,
    text: JSON.parse(JSON.stringify(PG.text)) }),
  steps: () => PG.steps, parse: (s) => pgParse(s), display: (x) => pgFmt(x),
  busy: () => PG.raf !== 0 || PG.drag !== null,  // a redraw is still to come
};

const pgN = () => PG.K.length;
const pgKey = (kind, j, i) => (kind === "q" ? `q.${i}` : kind === "dk" ? "dk" : `${kind}${j}.${i}`);
const pgName = (kind, j, i) => (kind === "dk" ? "d_k" : `${kind === "q" ? "q" : kind.toLowerCase() + (j + 1)} ${"xy"[i]}`);

/** Read one text into the state; a text that cannot be read keeps the last number and records why. */
function pgRead(kind, j, i, text) {
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

function pgLoad(texts) {
  PG.text = JSON.parse(JSON.stringify(texts));
  PG.errors = {};
  PG.q = [0, 0]; PG.K = texts.K.map(() => [0, 0]); PG.V = texts.V.map(() => [0, 0]); PG.dk = 2;
  texts.q.forEach((s, i) => pgRead("q", 0, i, s));
  for (const kind of ["K", "V"]) texts[kind].forEach((row, j) => row.forEach((s, i) => pgRead(kind, j, i, s)));
  pgRead("dk", 0, 0, texts.dk);
  PG.ref = null;
}

/** Remember the numbers before a change (a drag, an edit, a move), for the Δ column and the ghosts. */
function pgSetRef(what) {
  const s = PG.steps && !PG.steps.error ? PG.steps : null;
  PG.ref = s && { q: PG.q.slice(), K: PG.K.map((k) => k.slice()), V: PG.V.map((v) => v.slice()), weights: s.weights.slice(), z: s.z.slice() };
  PG.what = what;
}

// ---------------------------------------------------------------------------------------------
// Building the panel (once per layout) and its planes
// ---------------------------------------------------------------------------------------------

const pgSub = (s, j) => `${s}<sub>${j + 1}</sub>`;

function pgBuild() {
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
    `</div><p class="pg-about">${PG.preset ? t("pg_about_" + PG.preset) : ""}</p>` +
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
  for (const name of ["error", "change", "hull-cap", "range", "move-j", "sum-a"]) el[name] = box.querySelector(".pg-" + name);
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
function pgFit(force) {
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

function pgSchedule() {
  if (!PG.raf) PG.raf = requestAnimationFrame(() => { PG.raf = 0; pgDraw(); });
}

function pgSet(node, attr, value) { if (node.getAttribute(attr) !== value) node.setAttribute(attr, value); }
function pgText(node, text) { if (node.textContent !== text) node.textContent = text; }
function pgLine(node, p, a, b) {
  pgSet(node, "x1", pgX(p, a[0]).toFixed(1)); pgSet(node, "y1", pgY(p, a[1]).toFixed(1));
  pgSet(node, "x2", pgX(p, b[0]).toFixed(1)); pgSet(node, "y2", pgY(p, b[1]).toFixed(1));
}
const pgAt = (p, pt) => `translate(${pgX(p, pt[0]).toFixed(1)},${pgY(p, pt[1]).toFixed(1)})`;

function pgDraw() {
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
  const api = window.qkv.playground;
  api.frames++;
  api.times.push(performance.now());
  api.ms.push(performance.now() - t0);
  if (api.times.length > 5000) { api.times.splice(0, 2500); api.ms.splice(0, 2500); }
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

// ---------------------------------------------------------------------------------------------
// Changes: typing, dragging, moving a key toward q, presets, keys added or removed
// ---------------------------------------------------------------------------------------------

/** The text an input gets when the page moves a point: an exact form when the number has one. */
function pgWrite(kind, j, i, text) {
  pgRead(kind, j, i, text);
  const inp = PG.el.inputs[pgKey(kind, j, i)];
  if (inp && inp.value !== text) inp.value = text;
  if (inp) inp.classList.remove("bad");
}

function pgDragTo() {
  const d = PG.drag, p = PG.planes[d.kind === "V" ? "v" : "k"], r = d.rect;
  const grid = d.shift ? 1e4 : 20;  // snap to 0.05, or to 0.0001 with Shift
  const x = (d.at[0] - r.left) * PG_W / r.width / p.sc + p.x0, y = (PG_H - (d.at[1] - r.top) * PG_H / r.height) / p.sc + p.y0;
  [x, y].forEach((v, i) => pgWrite(d.kind, d.j, i, String(Math.round(v * grid) / grid + 0)));
  d.at = null;
}

function pgDragStart(e) {
  const g = e.target.closest(".pg-pt"), svg = e.target.closest("svg");
  if (!g || !svg || e.button !== 0) return;
  e.preventDefault();
  const kind = g.dataset.kind, j = +g.dataset.j;
  pgSetRef(kind === "q" ? "q" : `${kind === "K" ? "k" : "v"}${j + 1}`);
  PG.drag = { kind, j, id: e.pointerId, rect: svg.getBoundingClientRect(), at: null, shift: false };
  svg.setPointerCapture(e.pointerId);
  g.classList.add("dragging");
}

function pgDragMove(e) {
  if (!PG.drag || e.pointerId !== PG.drag.id) return;
  PG.drag.at = [e.clientX, e.clientY];
  PG.drag.shift = e.shiftKey;
  pgSchedule();
}

function pgDragEnd(e) {
  if (!PG.drag || e.pointerId !== PG.drag.id) return;
  if (PG.drag.at) pgDragTo();
  PG.drag = null;
  for (const g of PG.el.box.querySelectorAll(".pg-pt.dragging")) g.classList.remove("dragging");
  pgFit(false);
  pgSchedule();
}

function pgMoveToward() {
  const j = +PG.el["move-j"].value, k = PG.K[j];
  pgSetRef(`k${j + 1} → q`);
  [0, 1].forEach((i) => {
    const v = k[i] + (PG.q[i] - k[i]) / 2;
    pgWrite("K", j, i, pgClosed(v) ?? String(v));
  });
  pgFit(false);
  pgSchedule();
}

function pgPreset(name) {
  PG.preset = name;
  pgLoad(PG_PRESETS[name]);
  pgRebuild();
}

function pgRebuild() {
  const j = PG.el ? PG.el["move-j"].value : "0";
  pgBuild();
  PG.el["move-j"].value = +j < pgN() ? j : "0";
  pgSyncRange();
  pgDraw();
}

function pgSyncRange() { PG.el.range.value = String(clamp(Math.log2(PG.dk), -4, 8)); }

function pgAddKey() {
  const n = pgN(), a = 0.6 + 2.4 * n, at = (r, i) => String(Math.round(r * (i ? Math.sin(a) : Math.cos(a)) * 20) / 20 + 0);
  PG.text.K.push([at(1.5, 0), at(1.5, 1)]); PG.text.V.push([at(3, 0), at(3, 1)]);
  PG.K.push([0, 0]); PG.V.push([0, 0]);
  [0, 1].forEach((i) => { pgRead("K", n, i, PG.text.K[n][i]); pgRead("V", n, i, PG.text.V[n][i]); });
  PG.preset = null; PG.ref = null;
  pgRebuild();
}

function pgRemoveKey(j) {
  PG.text.K.splice(j, 1);
  PG.text.V.splice(j, 1);
  pgLoad(PG.text);  // read every text again: the keys after j move up by one
  PG.preset = null;
  pgRebuild();
}

function pgBind(box) {
  box.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b) return;
    if (b.dataset.preset) pgPreset(b.dataset.preset);
    else if (b.classList.contains("pg-add") && pgN() < 6) pgAddKey();
    else if (b.classList.contains("pg-del") && pgN() > 2) pgRemoveKey(+b.dataset.j);
    else if (b.classList.contains("pg-move")) pgMoveToward();
  });
  box.addEventListener("focusin", (e) => {
    if (e.target.classList.contains("pg-in") || e.target.classList.contains("pg-range")) {
      const inp = e.target;
      pgSetRef(inp.classList.contains("pg-range") ? "d_k" : pgName(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i));
    }
  });
  box.addEventListener("input", (e) => {
    const inp = e.target;
    if (inp.classList.contains("pg-range")) {
      pgWrite("dk", 0, 0, pgFmt(Math.pow(2, +inp.value)));
      PG.el.inputs.dk.classList.remove("bad");
    } else if (inp.classList.contains("pg-in")) {
      const key = pgKey(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i);
      pgRead(inp.dataset.kind, +inp.dataset.j, +inp.dataset.i, inp.value);
      inp.classList.toggle("bad", key in PG.errors);
      if (inp.dataset.kind === "dk") pgSyncRange(); else pgFit(false);
    } else return;
    pgSchedule();
  });
  box.addEventListener("pointerdown", pgDragStart);
  box.addEventListener("pointermove", pgDragMove);
  box.addEventListener("pointerup", pgDragEnd);
  box.addEventListener("pointercancel", pgDragEnd);
}

PANELS.push({
  name: "playground",
  init() {
    const box = document.getElementById("playground");
    if (!box) return;
    pgLoad(PG_PRESETS.article);
    pgBind(box);
    pgRebuild();
  },
  lang() {
    if (!PG.el) return;
    // messages are in the old language: read every text again
    const texts = JSON.parse(JSON.stringify(PG.text)), ref = PG.ref, what = PG.what;
    pgLoad(texts);
    PG.ref = ref; PG.what = what;
    pgRebuild();
  },
});

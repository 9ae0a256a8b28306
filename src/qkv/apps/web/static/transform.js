// transform panel (registered in panels.js): a matrix is a transformation of space.
//  1. the stretch of the chosen head's W_Q, W_K, W_V, W_O: their singular values, next to a random
//     (untrained) model of the same shape (POST api/transform, qkv.analysis.transform)
//  2. a cloud of word vectors before and after x·W_Q (or W_K, W_V), as two 2-D pictures (PCA)
//  3. a 2-D toy, computed here (it works in the static export too): points p (rows) move to p·M for a
//     2 × 2 matrix M the learner sets, and M = U Σ Vᵀ is shown as rotate, stretch, rotate (transform_toy.js).

import { S } from "./state.js";
import { $, esc, num } from "./util.js";
import { I18N, t } from "./i18n.js";
import { api } from "./api.js";
import { TOY_PRESETS, tfCanvas, tfRenderToy, tfSetSliders, toyBind } from "./transform_toy.js";
import { FONT } from "./paint.js";
import { formKeep, register } from "./panels.js";

Object.assign(I18N.en, {
  tf_title: "A matrix is a transformation of space",
  tf_intro: "A vector times a matrix is a new vector; one matrix moves every vector at once. Every matrix is <b>W = U Σ Vᵀ</b>: turn (U), stretch each direction by σ<sub>i</sub> (Σ), turn again (Vᵀ). The σ<sub>i</sub> are the singular values: how much the matrix stretches.",
  tf_spectra_title: "Layer {l}, head {h}: the stretch of each matrix",
  tf_spectra_caption: "Bars: the singular values σ<sub>1</sub> ≥ σ<sub>2</sub> ≥ … of the trained matrix; dots: a random, untrained model of the same shape (seed 0).",
  tf_col_matrix: "matrix", tf_col_shape: "shape", tf_col_s1: "σ₁ (largest)", tf_col_sr: "σᵣ (smallest)",
  tf_col_cond: "σ₁/σᵣ", tf_col_erank: "effective rank", tf_col_top4: "top-4 energy", tf_col_cos: "cos(W, U Vᵀ)",
  tf_col_rcond: "σ₁/σᵣ random",
  tf_all_sv: "all singular values of {m}",
  tf_cloud_title: "Word vectors before and after the map",
  tf_cloud_caption: "Each word alone as a text; x is what this head reads for it ({input}). Left: x, right: x·{w}; each picture is the top two principal components. Between/within: mean distance between group centres ÷ mean distance to the own centre, in the full space.",
  tf_proj: "map",
  tf_before: "before: x ({d} dimensions)",
  tf_after: "after: x·{w} ({d} dimensions)",
  tf_sep: "between/within {r} (in this picture {p}), nearest centre right for {a}",
  tf_kept: "share of the cloud's spread in the {d} directions {w} reads: {s} (random directions: {r})",
  tf_group_fruit: "fruit", tf_group_company: "company", tf_group_energy: "energy", tf_group_ambiguous: "fruit and company",
  tf_ambiguous: "Why the black words stand apart: the built-in corpus's sense sentences use each of them as a food (after 吃了, 洗了 …) and as a company (after 投资了, 加入了 …, followed by share prices and profits), and each word has one vector, trained by both, so they are in no group and can sit nearer the companies than the fruits.",
  tf_no_cloud: "No word cloud for this model: {why}",
  tf_static: "The stretch and the word cloud need the model: run <code>qkv serve</code>. The 2-D toy below works here.",
  tf_translate: "This panel reads a GPT's or an encoder's self-attention; a translation model is not shown here.",
  tf_loading: "computing…",
  tf_toy_title: "A 2-D toy: see a matrix move points",
  tf_toy_caption: "Points are rows: p ↦ p·M. Set M with the sliders (scale, then shear, then rotate) or type its four entries.",
  tf_angle: "rotate (°)", tf_sx: "scale x", tf_sy: "scale y", tf_shear: "shear",
  tf_entries: "M =",
  tf_svd: "M = U Σ Vᵀ: first turn by {a}°, then stretch by σ₁ = {s1} and σ₂ = {s2}, then {mirror}turn by {b}°.",
  tf_mirror: "mirror, then ",
  tf_det: "det M = {d}: areas are multiplied by {a}",
  tf_det_neg: " and the picture is mirrored",
  tf_det_zero: ": the plane is flattened onto a line (or a point)",
  tf_stage: "show",
  tf_stage_0: "p", tf_stage_1: "p·U", tf_stage_2: "p·U·Σ", tf_stage_3: "p·U·Σ·Vᵀ = p·M",
  tf_play: "play",
  tf_preset: "try",
  tf_p_id: "identity", tf_p_rot: "rotation", tf_p_stretch: "stretch", tf_p_shear: "shear", tf_p_mirror: "mirror", tf_p_flat: "flatten",
});
Object.assign(I18N.zh, {
  tf_title: "矩阵就是对空间的变换",
  tf_intro: "向量乘以矩阵得到一个新向量；同一个矩阵一次搬动所有向量。任何矩阵都是 <b>W = U Σ Vᵀ</b>：先转（U），再把每个方向拉伸 σ<sub>i</sub> 倍（Σ），再转（Vᵀ）。σ<sub>i</sub> 叫奇异值，就是矩阵的拉伸倍数。",
  tf_spectra_title: "层 {l} 头 {h}：每个矩阵的拉伸",
  tf_spectra_caption: "柱：训练后矩阵的奇异值 σ<sub>1</sub> ≥ σ<sub>2</sub> ≥ …；点：形状相同、未经训练的随机模型（种子 0）。",
  tf_col_matrix: "矩阵", tf_col_shape: "形状", tf_col_s1: "σ₁（最大）", tf_col_sr: "σᵣ（最小）",
  tf_col_cond: "σ₁/σᵣ", tf_col_erank: "有效秩", tf_col_top4: "前 4 个方向的能量", tf_col_cos: "cos(W, U Vᵀ)",
  tf_col_rcond: "随机模型的 σ₁/σᵣ",
  tf_all_sv: "{m} 的全部奇异值",
  tf_cloud_title: "词向量在变换前后",
  tf_cloud_caption: "每个词单独作为一段文本；x 是这个头为它读到的输入（{input}）。左：x，右：x·{w}；每幅图取前两个主成分。组间/组内：各组中心之间的平均距离 ÷ 到本组中心的平均距离，在完整空间里计算。",
  tf_proj: "变换",
  tf_before: "变换前：x（{d} 维）",
  tf_after: "变换后：x·{w}（{d} 维）",
  tf_sep: "组间/组内 {r}（只看这幅图 {p}），最近中心判对 {a}",
  tf_kept: "词云的离散程度落在 {w} 读取的 {d} 个方向里的比例：{s}（随机方向：{r}）",
  tf_group_fruit: "水果", tf_group_company: "公司", tf_group_energy: "能源", tf_group_ambiguous: "既是水果又是公司",
  tf_ambiguous: "黑色的词为什么单独放：内置语料的词义句把它们既当吃的用（跟在“吃了”“洗了”等后面），又当公司用（跟在“投资了”“加入了”等后面，后文讲股价和利润）；每个词只有一个向量，两种句子都在训练它，所以它们不归入任何一组，而且可能离公司比离水果更近。",
  tf_no_cloud: "这个模型画不出词云：{why}",
  tf_static: "拉伸和词云需要模型：请运行 <code>qkv serve</code>。下面的二维演示在这里也能用。",
  tf_translate: "这个面板读取 GPT 或编码器的自注意力；翻译模型不在这里显示。",
  tf_loading: "计算中…",
  tf_toy_title: "二维演示：看矩阵怎样搬动点",
  tf_toy_caption: "点是行向量：p ↦ p·M。用滑块设定 M（先缩放，再剪切，再旋转），或直接输入它的四个元素。",
  tf_angle: "旋转（°）", tf_sx: "x 方向缩放", tf_sy: "y 方向缩放", tf_shear: "剪切",
  tf_entries: "M =",
  tf_svd: "M = U Σ Vᵀ：先转 {a}°，再拉伸 σ₁ = {s1} 和 σ₂ = {s2}，然后{mirror}转 {b}°。",
  tf_mirror: "镜像、再",
  tf_det: "det M = {d}：面积乘以 {a}",
  tf_det_neg: "，并且图形被镜像翻转",
  tf_det_zero: "：平面被压扁成一条线（或一个点）",
  tf_stage: "显示",
  tf_stage_0: "p", tf_stage_1: "p·U", tf_stage_2: "p·U·Σ", tf_stage_3: "p·U·Σ·Vᵀ = p·M",
  tf_play: "播放",
  tf_preset: "试试",
  tf_p_id: "单位矩阵", tf_p_rot: "旋转", tf_p_stretch: "拉伸", tf_p_shear: "剪切", tf_p_mirror: "镜像", tf_p_flat: "压扁",
});

const TF = {
  key: null, doc: null, req: 0, error: null, proj: "q",
  COLORS: { fruit: "#d62728", company: "#1f77b4", energy: "#2ca02c", ambiguous: "#333" },
};

// ---- the panel ----------------------------------------------------------------------------------

function tfBuild() {
  const slider = (id, min, max, step) => `<label class="tf-slider"><span data-tfi="tf_${id}"></span>
    <input type="range" id="tf-${id}" min="${min}" max="${max}" step="${step}"><span class="num" id="tf-${id}-val"></span></label>`;
  $("#transform").innerHTML = `
    <h2 data-tfi="tf_title"></h2><p class="caption" data-tfi="tf_intro"></p>
    <div id="tf-model">
      <h3 id="tf-spectra-title"></h3><p class="caption" data-tfi="tf_spectra_caption"></p>
      <div id="tf-note" class="tf-note" hidden></div>
      <div id="tf-bars" class="tf-bars"></div><div id="tf-table"></div>
      <h3 data-tfi="tf_cloud_title"></h3>
      <label class="label"><span data-tfi="tf_proj"></span> <select id="tf-proj">
        <option value="q">x·W_Q</option><option value="k">x·W_K</option><option value="v">x·W_V</option></select></label>
      <p class="caption" id="tf-cloud-caption"></p>
      <div id="tf-cloud" class="tf-cloud"></div>
    </div>
    <h3 data-tfi="tf_toy_title"></h3><p class="caption" data-tfi="tf_toy_caption"></p>
    <div class="tf-toy">
      <div class="tf-controls">
        ${slider("angle", -180, 180, 1)}${slider("sx", -2, 3, 0.05)}${slider("sy", -2, 3, 0.05)}${slider("shear", -2, 2, 0.05)}
        <div class="tf-entries"><span data-tfi="tf_entries"></span>
          <span class="tf-matrix"><input type="number" step="0.1" id="tf-a"><input type="number" step="0.1" id="tf-b"><br>
          <input type="number" step="0.1" id="tf-c"><input type="number" step="0.1" id="tf-d"></span></div>
        <div class="tf-presets"><span class="label" data-tfi="tf_preset"></span>${Object.keys(TOY_PRESETS).map((p) =>
          `<button type="button" data-preset="${p}" data-tfi="tf_p_${p}"></button>`).join("")}</div>
        <div class="tf-stages"><span class="label" data-tfi="tf_stage"></span>${[0, 1, 2, 3].map((k) =>
          `<label><input type="radio" name="tf-stage" value="${k}"${k === 3 ? " checked" : ""}><span data-tfi="tf_stage_${k}"></span></label>`).join("")}
          <button type="button" id="tf-play" data-tfi="tf_play"></button></div>
        <div id="tf-svd" class="tf-svd"></div>
      </div>
      <canvas id="tf-toy" class="tf-toy-canvas"></canvas>
    </div>`;
}

function tfLang() {
  for (const el of document.querySelectorAll("#transform [data-tfi]")) el.innerHTML = t(el.dataset.tfi);
  tfRenderDoc(); tfRenderToy();
}

/** Fetch the chosen head's document when layer or head changed (live mode, GPT or encoder). */
async function tfLoad() {
  const key = `${S.layer}/${S.head}`;
  if (key === TF.key) return;
  TF.key = key;
  const req = ++TF.req;
  TF.error = null;
  $("#tf-note").hidden = false; $("#tf-note").innerHTML = t("tf_loading");
  try {
    const doc = await api("api/transform", { layer: S.layer, head: S.head });
    if (req !== TF.req) return;
    TF.doc = doc;
  } catch (e) {
    if (req !== TF.req) return;
    TF.doc = null; TF.error = e.message;  // kept: another layer or head asks again
  }
  tfRenderDoc();
}

function tfRenderDoc() {
  const note = $("#tf-note"), d = TF.doc;
  $("#tf-spectra-title").textContent = t("tf_spectra_title", { l: S.layer, h: S.head });
  if (S.mode === "static" || S.tr || TF.error) {
    note.hidden = false;
    note.innerHTML = S.mode === "static" ? t("tf_static") : S.tr ? t("tf_translate") : esc(TF.error);
    for (const id of ["#tf-bars", "#tf-table", "#tf-cloud"]) $(id).innerHTML = "";
    return;
  }
  if (!d) return;
  note.hidden = true;
  $("#tf-spectra-title").textContent = t("tf_spectra_title", { l: d.layer, h: d.head });
  $("#tf-spectra-title").dataset.shown = `${d.layer}/${d.head}`;
  $("#tf-bars").innerHTML = d.matrices.map((m) => `<figure data-matrix="${m}"><figcaption>${m}
    <span class="num">${d.trained[m].shape.join(" × ")}</span></figcaption><canvas></canvas></figure>`).join("");
  for (const m of d.matrices) tfBars($(`#tf-bars [data-matrix=${m}] canvas`), d.trained[m].singular_values, d.random[m].singular_values);
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const rows = [...d.matrices, "W_QK", "W_OV"].map((m) => { const a = d.trained[m], r = d.random[m]; return `<tr data-matrix="${m}">
    <th>${m}</th><td class="num" data-field="shape">${a.shape.join("×")}</td><td data-field="s1">${num(a.singular_values[0])}</td>
    <td data-field="sr">${num(a.singular_values[a.singular_values.length - 1])}</td><td data-field="cond">${num(a.condition)}</td>
    <td data-field="erank">${num(a.effective_rank)}</td><td class="num" data-field="top4">${pct(a.energy_top["4"])}</td>
    <td data-field="cos">${num(a.rotation_cos)}</td><td data-field="rcond">${num(r.condition)}</td></tr>`; }).join("");
  const head = ["matrix", "shape", "s1", "sr", "cond", "erank", "top4", "cos", "rcond"].map((c) => `<th>${t("tf_col_" + c)}</th>`).join("");
  $("#tf-table").innerHTML = `<table class="tf-table"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>` +
    d.matrices.map((m) => `<details data-matrix="${m}"><summary>${t("tf_all_sv", { m })}</summary>
      <p class="tf-sv">${d.trained[m].singular_values.map((s) => num(s)).join(" ")}</p></details>`).join("");
  tfRenderCloud();
}

function tfBars(cv, s, r) {
  const w = 230, h = 120, ctx = tfCanvas(cv, w, h), n = s.length, top = Math.max(...s, ...r) * 1.05 || 1;
  const bw = (w - 8) / n, y = (v) => h - 4 - (h - 10) * v / top;
  ctx.fillStyle = "#1d4ed8";
  s.forEach((v, i) => ctx.fillRect(4 + i * bw + 0.5, y(v), Math.max(1, bw - 1), h - 4 - y(v)));
  ctx.fillStyle = "#ea580c";
  r.forEach((v, i) => { ctx.beginPath(); ctx.arc(4 + (i + 0.5) * bw, y(v), 1.8, 0, 2 * Math.PI); ctx.fill(); });
}

function tfRenderCloud() {
  const d = TF.doc, el = $("#tf-cloud");
  if (!d) return;
  const w = { q: "W_Q", k: "W_K", v: "W_V" }[TF.proj];
  if (!d.cloud) { $("#tf-cloud-caption").innerHTML = ""; el.innerHTML = `<p class="tf-note">${t("tf_no_cloud", { why: esc(d.cloud_error) })}</p>`; return; }
  const c = d.cloud, after = c[TF.proj];
  $("#tf-cloud-caption").innerHTML = t("tf_cloud_caption", { input: `<code>${esc(c.input)}</code>`, w });
  const pct = (x) => `${(100 * x).toFixed(0)}%`;
  const sep = (side) => t("tf_sep", { r: num(side.separation.ratio), p: num(side.separation_2d.ratio), a: pct(side.separation.accuracy) });
  el.innerHTML = `<figure data-side="before"><figcaption>${t("tf_before", { d: c.d_model })}<br><span data-field="sep">${sep(c.before)}</span></figcaption><div class="tf-plot"></div></figure>
    <figure data-side="after"><figcaption>${t("tf_after", { w, d: c.d_head })}<br><span data-field="sep">${sep(after)}</span></figcaption><div class="tf-plot"></div></figure>
    <p class="tf-legend">${[...c.groups, "ambiguous"].map((g) => `<span><i style="background:${TF.COLORS[g]}"></i>${t("tf_group_" + g)}</span>`).join("")}</p>
    ${c.labels.includes("ambiguous") ? `<p class="caption" data-field="ambiguous">${t("tf_ambiguous")}</p>` : ""}
    <p class="caption" data-field="kept">${t("tf_kept", { d: c.d_head, w, s: pct(after.kept_share), r: pct(c.random_share) })}</p>`;
  $("#tf-cloud [data-side=before] .tf-plot").innerHTML = tfScatter(c.before.points, c.labels, c.words);
  $("#tf-cloud [data-side=after] .tf-plot").innerHTML = tfScatter(after.points, c.labels, c.words);
}

// The word cloud as SVG: a dot per word and its label as a <text>, placed where it overlaps no other
// label, no other dot and stays inside the picture (the first free spot on rings around the dot, else
// the least crowded one; a label moved away from its dot gets a thin line back to it).
const CLOUD_W = 320, CLOUD_H = 250, CLOUD_PAD = 24, CLOUD_SIZE = 11;
const CLOUD_AROUND = [[1, -1, "start"], [1, 1, "start"], [-1, -1, "end"], [-1, 1, "end"], [0, -1.2, "middle"], [0, 1.3, "middle"],
  [1.2, 0, "start"], [-1.2, 0, "end"]];
const CLOUD_RINGS = [5, 9, 14, 20, 27, 35];
let cloudMeasure = null;

/** [width, ascent, descent] in px of `word` at the cloud's font, the box the browser gives its <text>
 *  (a canvas measures it: no layout needed). */
function cloudMetrics(word) {
  if (!cloudMeasure) cloudMeasure = document.createElement("canvas").getContext("2d");
  cloudMeasure.font = `${CLOUD_SIZE}px ${FONT}`;
  const m = cloudMeasure.measureText(word);
  return [m.width, m.fontBoundingBoxAscent ?? CLOUD_SIZE * 1.16, m.fontBoundingBoxDescent ?? CLOUD_SIZE * 0.29];
}

/** Label boxes [x0, y0, x1, y1] for dots at `pts` ([x, y] in the picture), with x, y, anchor for each. */
export function placeCloudLabels(pts, words, w = CLOUD_W, h = CLOUD_H) {
  const over = (a, b) => Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const dots = pts.map(([x, y]) => [x - 4.5, y - 4.5, x + 4.5, y + 4.5]);
  const placed = [];
  return pts.map(([x, y], i) => {
    const [w0, asc, desc] = cloudMetrics(words[i]), tw = w0 + 1;
    let best = null;
    for (const r of CLOUD_RINGS) {
      for (const [sx, sy, anchor] of CLOUD_AROUND) {
        const lx = x + sx * r, base = y + sy * r + (sy > 0 ? asc : sy === 0 ? asc / 2 - desc / 2 : -desc);
        const x0 = anchor === "start" ? lx : anchor === "end" ? lx - tw : lx - tw / 2;
        const box = [x0, base - asc, x0 + tw, base + desc];
        const out = tw * (asc + desc) - over(box, [0, 0, w, h]);
        const cost = placed.reduce((a, b) => a + over(box, b), 0) + dots.reduce((a, b, j) => a + (j === i ? 0 : over(box, b)), 0) + out;
        if (!best || cost < best.cost) best = { cost, x: lx, y: base, anchor, box, r };
        if (cost <= 0) break;
      }
      if (best.cost <= 0) break;
    }
    placed.push(best.box);
    return best;
  });
}

/** The SVG of one cloud picture: P the 2-D points, labels their groups, words their words. */
function tfScatter(P, labels, words) {
  const w = CLOUD_W, h = CLOUD_H, pad = CLOUD_PAD;
  const xs = P.map((p) => p[0]), ys = P.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = (x) => pad + (w - 2 * pad) * (x - x0) / ((x1 - x0) || 1), sy = (y) => h - pad - (h - 2 * pad) * (y - y0) / ((y1 - y0) || 1);
  const pts = P.map(([x, y]) => [sx(x), sy(y)]), spots = placeCloudLabels(pts, words, w, h);
  const f = (v) => v.toFixed(1);
  let dots = "", text = "";
  pts.forEach(([x, y], i) => {
    const colour = TF.COLORS[labels[i]] || "#777", s = spots[i];
    dots += `<circle cx="${f(x)}" cy="${f(y)}" r="${labels[i] === "ambiguous" ? 3 : 4}" fill="${colour}"/>`;
    if (s.r >= 14) dots += `<line x1="${f(x)}" y1="${f(y)}" x2="${f(s.anchor === "end" ? s.box[2] : s.anchor === "start" ? s.box[0] : s.x)}" y2="${f((s.box[1] + s.box[3]) / 2)}" class="tf-lead"/>`;
    text += `<text class="tf-word" x="${f(s.x)}" y="${f(s.y)}" text-anchor="${s.anchor}" data-word="${esc(words[i])}">${esc(words[i])}</text>`;
  });
  return `<svg class="tf-scatter" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" style="font: ${CLOUD_SIZE}px ${esc(FONT)}">` +
    `<rect x="0.5" y="0.5" width="${w - 1}" height="${h - 1}" class="tf-frame"/>${dots}${text}</svg>`;
}

function tfBind() {
  toyBind();
  $("#tf-proj").addEventListener("change", (e) => { TF.proj = e.target.value; tfRenderCloud(); });
}

register({
  name: "transform",
  lazy: true,  // asleep while off-screen (panels.js: eachPanel)
  init() { tfBuild(); tfBind(); tfSetSliders({}); tfLang(); },
  // the address keeps the projection shown (address.js): set, then redrawn by its listener
  keep: formKeep({ proj: "#tf-proj" }),
  render(what) {  // cheap unless the layer or head changed (tfLoad compares them first)
    if (S.mode !== "static" && !S.tr) tfLoad(); else if (what === "init" || what === "text") tfRenderDoc();
  },
  lang() { tfLang(); },
});

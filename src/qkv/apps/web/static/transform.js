"use strict";
// transform panel (see PANELS in app.js): a matrix is a transformation of space.
//  1. the stretch of the chosen head's W_Q, W_K, W_V, W_O: their singular values, next to a random
//     (untrained) model of the same shape (POST api/transform, qkv.analysis.transform)
//  2. a cloud of word vectors before and after x·W_Q (or W_K, W_V), as two 2-D pictures (PCA)
//  3. a 2-D toy, computed here (it works in the static export too): points p (rows) move to p·M for a
//     2 × 2 matrix M the learner sets, and M = U Σ Vᵀ is shown as rotate, stretch, rotate.

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
  tf_spectra_title: "第 {l} 层第 {h} 个头：每个矩阵的拉伸",
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
  M: [[1, 0], [0, 1]], stage: 3, frame: null,
  sliders: { angle: 0, sx: 1, sy: 1, shear: 0 },
  COLORS: { fruit: "#d62728", company: "#1f77b4", energy: "#2ca02c", ambiguous: "#333" },
  PRESETS: { id: [0, 1, 1, 0], rot: [30, 1, 1, 0], stretch: [0, 2, 0.5, 0], shear: [0, 1, 1, 1], mirror: [0, -1, 1, 0], flat: [0, 1, 0, 0] },
};

// ---- 2 × 2 algebra (rows are points: p' = p M) --------------------------------------------------

const tfMul = (A, B) => [[A[0][0] * B[0][0] + A[0][1] * B[1][0], A[0][0] * B[0][1] + A[0][1] * B[1][1]],
                         [A[1][0] * B[0][0] + A[1][1] * B[1][0], A[1][0] * B[0][1] + A[1][1] * B[1][1]]];
/** The matrix that turns a row vector counterclockwise by `deg` degrees: (1, 0) ↦ (cos, sin). */
const tfRot = (deg) => { const a = deg * Math.PI / 180, c = Math.cos(a), s = Math.sin(a); return [[c, s], [-s, c]]; };
/** Scale, then shear (x += k·y), then rotate. */
function tfFromSliders({ angle, sx, sy, shear }) {
  return tfMul(tfMul([[sx, 0], [0, sy]], [[1, 0], [shear, 1]]), tfRot(angle));
}
/** Where a row vector (1, 0) goes under a rotation R, in degrees counterclockwise. */
const tfAngle = (R) => Math.atan2(R[0][1], R[0][0]) * 180 / Math.PI;

/** M = U Σ Vᵀ in closed form: U a rotation, σ₁ ≥ σ₂ ≥ 0, Vᵀ a rotation, or a mirror then a rotation
 *  when det M < 0. With Rot(α) = [[cos α, −sin α], [sin α, cos α]]: M = Rot(φ) diag(σ₁, s) Rot(θ). */
function tfSvd(M) {
  const [[a, b], [c, d]] = M;
  const E = (a + d) / 2, F = (a - d) / 2, G = (c + b) / 2, H = (c - b) / 2;
  const Q = Math.hypot(E, H), R = Math.hypot(F, G);
  const a1 = Math.atan2(G, F), a2 = Math.atan2(H, E);
  const theta = (a2 - a1) / 2, phi = (a2 + a1) / 2, s2 = Q - R;
  const rot = (x) => [[Math.cos(x), -Math.sin(x)], [Math.sin(x), Math.cos(x)]];
  const m = a * d - b * c < 0 ? -1 : 1;  // det M = σ₁·s: a mirror exactly when det < 0
  const U = rot(phi), Vt = tfMul([[1, 0], [0, m]], rot(theta));
  return { U, s: [Q + R, Math.abs(s2)], Vt, mirror: m < 0, det: a * d - b * c };
}

// ---- the panel ----------------------------------------------------------------------------------

function tfCanvas(cv, w, h) {
  const r = window.devicePixelRatio || 1;
  cv.width = Math.round(w * r); cv.height = Math.round(h * r);
  cv.style.width = w + "px"; cv.style.height = h + "px";
  const ctx = cv.getContext("2d");
  ctx.setTransform(r, 0, 0, r, 0, 0);
  ctx.font = `11px ${typeof FONT === "string" ? FONT : "sans-serif"}`;
  return ctx;
}

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
        <div class="tf-presets"><span class="label" data-tfi="tf_preset"></span>${Object.keys(TF.PRESETS).map((p) =>
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
  el.innerHTML = `<figure data-side="before"><figcaption>${t("tf_before", { d: c.d_model })}<br><span data-field="sep">${sep(c.before)}</span></figcaption><canvas></canvas></figure>
    <figure data-side="after"><figcaption>${t("tf_after", { w, d: c.d_head })}<br><span data-field="sep">${sep(after)}</span></figcaption><canvas></canvas></figure>
    <p class="tf-legend">${[...c.groups, "ambiguous"].map((g) => `<span><i style="background:${TF.COLORS[g]}"></i>${t("tf_group_" + g)}</span>`).join("")}</p>
    <p class="caption" data-field="kept">${t("tf_kept", { d: c.d_head, w, s: pct(after.kept_share), r: pct(c.random_share) })}</p>`;
  tfScatter($("#tf-cloud [data-side=before] canvas"), c.before.points, c.labels, c.words);
  tfScatter($("#tf-cloud [data-side=after] canvas"), after.points, c.labels, c.words);
}

function tfScatter(cv, P, labels, words) {
  const w = 300, h = 240, ctx = tfCanvas(cv, w, h), pad = 26;
  const xs = P.map((p) => p[0]), ys = P.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = (x) => pad + (w - 2 * pad) * (x - x0) / ((x1 - x0) || 1), sy = (y) => h - pad - (h - 2 * pad) * (y - y0) / ((y1 - y0) || 1);
  ctx.strokeStyle = "#e2e5ec"; ctx.strokeRect(0.5, 0.5, w - 1, h - 1);
  P.forEach(([x, y], i) => {
    ctx.fillStyle = TF.COLORS[labels[i]] || "#777";
    ctx.beginPath(); ctx.arc(sx(x), sy(y), labels[i] === "ambiguous" ? 3 : 4, 0, 2 * Math.PI); ctx.fill();
    ctx.fillText(words[i], sx(x) + 5, sy(y) - 4);
  });
}

// ---- the toy ------------------------------------------------------------------------------------

function tfSetSliders(v) {
  Object.assign(TF.sliders, v);
  for (const k of ["angle", "sx", "sy", "shear"]) $(`#tf-${k}`).value = TF.sliders[k];
  TF.M = tfFromSliders(TF.sliders);
  tfShowEntries();
}
function tfShowEntries() {
  const [[a, b], [c, d]] = TF.M;
  Object.entries({ a, b, c, d }).forEach(([k, x]) => { $(`#tf-${k}`).value = +x.toFixed(4); });
}

/** The matrix applied at stage `k` + fraction f of the next factor (0: none; 3: all of U Σ Vᵀ). */
function tfStageMatrix(svd, k) {
  const whole = Math.floor(k), f = k - whole;
  const angU = tfAngle(svd.U), Rv = tfMul([[1, 0], [0, svd.mirror ? -1 : 1]], svd.Vt), angV = tfAngle(Rv);
  const factor = [(g) => tfRot(g * angU), (g) => [[1 + g * (svd.s[0] - 1), 0], [0, 1 + g * (svd.s[1] - 1)]],
                  (g) => tfMul([[1, 0], [0, svd.mirror ? 1 - 2 * g : 1]], tfRot(g * angV))];
  let P = [[1, 0], [0, 1]];
  for (let i = 0; i < 3; i++) if (i < whole) P = tfMul(P, factor[i](1)); else if (i === whole) P = tfMul(P, factor[i](f));
  return P;
}

function tfRenderToy() {
  const svd = tfSvd(TF.M);
  for (const k of ["angle", "sx", "sy", "shear"]) $(`#tf-${k}-val`).textContent = (+TF.sliders[k]).toFixed(k === "angle" ? 0 : 2);
  const mat = (A, id) => `<span class="tf-m" id="${id}">[${A.map((r) => r.map((x) => num(x)).join(" ")).join("; ")}]</span>`;
  const angV = tfAngle(tfMul([[1, 0], [0, svd.mirror ? -1 : 1]], svd.Vt));
  const det = svd.det, flat = Math.abs(det) < 1e-9;
  $("#tf-svd").innerHTML = `<div>M = ${mat(TF.M, "tf-M")}</div>
    <div>U = ${mat(svd.U, "tf-U")} Σ = <span id="tf-S">diag(${num(svd.s[0])}, ${num(svd.s[1])})</span> Vᵀ = ${mat(svd.Vt, "tf-Vt")}</div>
    <div>${t("tf_svd", { a: num(tfAngle(svd.U)), s1: num(svd.s[0]), s2: num(svd.s[1]), mirror: svd.mirror ? t("tf_mirror") : "", b: num(angV) })}</div>
    <div id="tf-det">${t("tf_det", { d: num(det), a: num(Math.abs(det)) })}${flat ? t("tf_det_zero") : det < 0 ? t("tf_det_neg") : ""}</div>`;
  tfDrawToy(tfStageMatrix(svd, TF.stage), svd);
}

function tfDrawToy(P, svd) {
  const cv = $("#tf-toy"), size = 340, ctx = tfCanvas(cv, size, size), R = 3.2, k = size / (2 * R);
  const X = (p) => size / 2 + p[0] * k, Y = (p) => size / 2 - p[1] * k;
  const map = (p) => [p[0] * P[0][0] + p[1] * P[1][0], p[0] * P[0][1] + p[1] * P[1][1]];
  const path = (pts, close) => { ctx.beginPath(); pts.forEach((p, i) => (i ? ctx.lineTo(X(p), Y(p)) : ctx.moveTo(X(p), Y(p)))); if (close) ctx.closePath(); };
  const grid = (f, color) => {
    ctx.strokeStyle = color; ctx.lineWidth = 1;
    for (let i = -3; i <= 3; i++) { path([f([i, -3]), f([i, 3])]); ctx.stroke(); path([f([-3, i]), f([3, i])]); ctx.stroke(); }
  };
  const circle = Array.from({ length: 65 }, (_, i) => [Math.cos(i * Math.PI / 32), Math.sin(i * Math.PI / 32)]);
  const house = [[0, 0], [1, 0], [1, 1], [0.5, 1.6], [0, 1]], door = [[0.35, 0], [0.35, 0.5], [0.65, 0.5], [0.65, 0]];
  grid((p) => p, "#eef0f4");
  ctx.setLineDash([4, 3]); ctx.strokeStyle = "#9aa3b2"; path(circle); ctx.stroke(); path(house, true); ctx.stroke(); ctx.setLineDash([]);
  grid(map, "rgba(29, 78, 216, 0.25)");
  ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = 2; path(circle.map(map)); ctx.stroke();
  ctx.fillStyle = "rgba(234, 88, 12, 0.25)"; ctx.strokeStyle = "#ea580c"; path(house.map(map), true); ctx.fill(); ctx.stroke();
  path(door.map(map)); ctx.stroke();
  const arrow = (p, color, label) => { ctx.strokeStyle = ctx.fillStyle = color; ctx.lineWidth = 2; path([[0, 0], p]); ctx.stroke(); ctx.fillText(label, X(p) + 4, Y(p) - 4); };
  arrow(map([1, 0]), "#b91c1c", "e₁·M"); arrow(map([0, 1]), "#15803d", "e₂·M");
}

function tfBind() {
  for (const k of ["angle", "sx", "sy", "shear"])
    $(`#tf-${k}`).addEventListener("input", (e) => { tfSetSliders({ [k]: +e.target.value }); tfRenderToy(); });
  for (const k of ["a", "b", "c", "d"])
    $(`#tf-${k}`).addEventListener("input", () => {
      const v = ["a", "b", "c", "d"].map((n) => parseFloat($(`#tf-${n}`).value));
      if (v.every(Number.isFinite)) { TF.M = [[v[0], v[1]], [v[2], v[3]]]; tfRenderToy(); }
    });
  $("#transform .tf-presets").addEventListener("click", (e) => {
    const b = e.target.closest("[data-preset]");
    if (!b) return;
    const [angle, sx, sy, shear] = TF.PRESETS[b.dataset.preset];
    tfSetSliders({ angle, sx, sy, shear }); tfRenderToy();
  });
  $("#transform .tf-stages").addEventListener("change", (e) => { TF.stage = +e.target.value; tfRenderToy(); });
  $("#tf-play").addEventListener("click", () => {
    cancelAnimationFrame(TF.frame);
    const start = performance.now(), svd = tfSvd(TF.M);
    const step = (now) => {
      const k = Math.min(3, (now - start) / 1000);  // one second per factor
      tfDrawToy(tfStageMatrix(svd, k), svd);
      if (k < 3) TF.frame = requestAnimationFrame(step); else { TF.stage = 3; document.querySelector("#transform [name=tf-stage][value='3']").checked = true; }
    };
    TF.frame = requestAnimationFrame(step);
  });
  $("#tf-proj").addEventListener("change", (e) => { TF.proj = e.target.value; tfRenderCloud(); });
}

PANELS.push({
  name: "transform",
  lazy: true,  // asleep while off-screen (app.js: eachPanel)
  init() { tfBuild(); tfBind(); tfSetSliders({}); tfLang(); },
  render(what) {  // cheap unless the layer or head changed (tfLoad compares them first)
    if (S.mode !== "static" && !S.tr) tfLoad(); else if (what === "init" || what === "text") tfRenderDoc();
  },
  lang() { tfLang(); },
});

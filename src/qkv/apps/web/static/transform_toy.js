// The transform panel's 2-D toy, computed here (it works in the static export too): points p (rows)
// move to p·M for a 2 × 2 matrix M the learner sets, and M = U Σ Vᵀ is shown as rotate, stretch, rotate.

import { $, num } from "./util.js";
import { t } from "./i18n.js";
import { FONT } from "./paint.js";

const TOY = { M: [[1, 0], [0, 1]], stage: 3, frame: null, sliders: { angle: 0, sx: 1, sy: 1, shear: 0 } };
// the presets: [rotate (°), scale x, scale y, shear]
export const TOY_PRESETS = { id: [0, 1, 1, 0], rot: [30, 1, 1, 0], stretch: [0, 2, 0.5, 0], shear: [0, 1, 1, 1], mirror: [0, -1, 1, 0], flat: [0, 1, 0, 0] };

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

export function tfCanvas(cv, w, h) {
  const r = window.devicePixelRatio || 1;
  cv.width = Math.round(w * r); cv.height = Math.round(h * r);
  cv.style.width = w + "px"; cv.style.height = h + "px";
  const ctx = cv.getContext("2d");
  ctx.setTransform(r, 0, 0, r, 0, 0);
  ctx.font = `11px ${FONT}`;
  return ctx;
}

// ---- the toy ------------------------------------------------------------------------------------
export function tfSetSliders(v) {
  Object.assign(TOY.sliders, v);
  for (const k of ["angle", "sx", "sy", "shear"]) $(`#tf-${k}`).value = TOY.sliders[k];
  TOY.M = tfFromSliders(TOY.sliders);
  tfShowEntries();
}
function tfShowEntries() {
  const [[a, b], [c, d]] = TOY.M;
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

export function tfRenderToy() {
  const svd = tfSvd(TOY.M);
  for (const k of ["angle", "sx", "sy", "shear"]) $(`#tf-${k}-val`).textContent = (+TOY.sliders[k]).toFixed(k === "angle" ? 0 : 2);
  const mat = (A, id) => `<span class="tf-m" id="${id}">[${A.map((r) => r.map((x) => num(x)).join(" ")).join("; ")}]</span>`;
  const angV = tfAngle(tfMul([[1, 0], [0, svd.mirror ? -1 : 1]], svd.Vt));
  const det = svd.det, flat = Math.abs(det) < 1e-9;
  $("#tf-svd").innerHTML = `<div>M = ${mat(TOY.M, "tf-M")}</div>
    <div>U = ${mat(svd.U, "tf-U")} Σ = <span id="tf-S">diag(${num(svd.s[0])}, ${num(svd.s[1])})</span> Vᵀ = ${mat(svd.Vt, "tf-Vt")}</div>
    <div>${t("tf_svd", { a: num(tfAngle(svd.U)), s1: num(svd.s[0]), s2: num(svd.s[1]), mirror: svd.mirror ? t("tf_mirror") : "", b: num(angV) })}</div>
    <div id="tf-det">${t("tf_det", { d: num(det), a: num(Math.abs(det)) })}${flat ? t("tf_det_zero") : det < 0 ? t("tf_det_neg") : ""}</div>`;
  tfDrawToy(tfStageMatrix(svd, TOY.stage), svd);
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

/** The toy's controls: sliders, the four entries, presets, the stages and the play button. */
export function toyBind() {
  for (const k of ["angle", "sx", "sy", "shear"])
    $(`#tf-${k}`).addEventListener("input", (e) => { tfSetSliders({ [k]: +e.target.value }); tfRenderToy(); });
  for (const k of ["a", "b", "c", "d"])
    $(`#tf-${k}`).addEventListener("input", () => {
      const v = ["a", "b", "c", "d"].map((n) => parseFloat($(`#tf-${n}`).value));
      if (v.every(Number.isFinite)) { TOY.M = [[v[0], v[1]], [v[2], v[3]]]; tfRenderToy(); }
    });
  $("#transform .tf-presets").addEventListener("click", (e) => {
    const b = e.target.closest("[data-preset]");
    if (!b) return;
    const [angle, sx, sy, shear] = TOY_PRESETS[b.dataset.preset];
    tfSetSliders({ angle, sx, sy, shear }); tfRenderToy();
  });
  $("#transform .tf-stages").addEventListener("change", (e) => { TOY.stage = +e.target.value; tfRenderToy(); });
  $("#tf-play").addEventListener("click", () => {
    cancelAnimationFrame(TOY.frame);
    const start = performance.now(), svd = tfSvd(TOY.M);
    const step = (now) => {
      const k = Math.min(3, (now - start) / 1000);  // one second per factor
      tfDrawToy(tfStageMatrix(svd, k), svd);
      if (k < 3) TOY.frame = requestAnimationFrame(step); else { TOY.stage = 3; document.querySelector("#transform [name=tf-stage][value='3']").checked = true; }
    };
    TOY.frame = requestAnimationFrame(step);
  });
}

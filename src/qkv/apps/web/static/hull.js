// Why z lies inside the hull: the visible values in 2-D, their convex hull, and z inside it.

import { S, at3, at4, atK, visibleKeys } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { t } from "./i18n.js";

/** Andrew's monotone chain: the hull's corners counter-clockwise (collinear points dropped).
 *  Returns 1 point for one distinct point, 2 for points on a line. */
export function convexHull(pts) {
  const p = pts.slice().sort((u, v) => u[0] - v[0] || u[1] - v[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list) => {
    const out = [];
    for (const q of list) {
      while (out.length >= 2 && cross(out[out.length - 2], out[out.length - 1], q) <= 1e-12) out.pop();
      out.push(q);
    }
    out.pop();
    return out;
  };
  if (p.length < 2) return p;
  const hull = half(p).concat(half(p.slice().reverse()));
  if (hull.length === 0) return [p[0]];  // every point the same
  return hull;
}

export function renderHull() {
  const { layer: l, head: h, token: i } = S, A = S.A;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  const pts = vis.map((j) => [A.v_2d[atK(l, h, j) * 2], A.v_2d[atK(l, h, j) * 2 + 1]]);
  const zo = at3(l, h, i) * 2, z = [A.z_2d[zo], A.z_2d[zo + 1]];
  if (![...pts.flat(), ...z].every(Number.isFinite)) {  // a diverged model: no picture to draw (errors.js says why)
    $("#hull").innerHTML = "";
    $("#hull-caption").textContent = t("hull_not_finite");
    return;
  }
  const W = 420, Hh = 320, pad = 34;
  // one scale for both axes, so the geometry is not distorted; y grows upwards
  const xs = pts.map((p) => p[0]).concat(z[0]), ys = pts.map((p) => p[1]).concat(z[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sc = Math.min((W - 2 * pad) / Math.max(x1 - x0, 1e-9), (Hh - 2 * pad) / Math.max(y1 - y0, 1e-9));
  const cx = (W - sc * (x1 - x0)) / 2, cy = (Hh - sc * (y1 - y0)) / 2;
  const X = (x) => (cx + (x - x0) * sc).toFixed(1), Y = (y) => (Hh - cy - (y - y0) * sc).toFixed(1);

  const hull = convexHull(pts);
  let svg = `<svg viewBox="0 0 ${W} ${Hh}" role="img" aria-label="${esc(t("hull_title"))}">`;
  if (hull.length >= 3) svg += `<polygon class="hull" points="${hull.map((p) => X(p[0]) + "," + Y(p[1])).join(" ")}"/>`;
  else if (hull.length === 2) svg += `<line class="hull-line" x1="${X(hull[0][0])}" y1="${Y(hull[0][1])}" x2="${X(hull[1][0])}" y2="${Y(hull[1][1])}"/>`;
  // spokes from z to each value, as strong as its weight
  pts.forEach((p, n) => {
    const a = A.pattern[o4 + vis[n]];
    if (a >= 0.01) svg += `<line class="spoke" x1="${X(z[0])}" y1="${Y(z[1])}" x2="${X(p[0])}" y2="${Y(p[1])}" stroke-opacity="${(0.1 + 0.7 * a).toFixed(2)}"/>`;
  });
  // with many keys, label only the query itself and the 12 heaviest (every point has a tooltip)
  const heavy = new Set(vis.slice().sort((u, v) => A.pattern[o4 + v] - A.pattern[o4 + u]).slice(0, 12));
  pts.forEach((p, n) => {
    const j = vis[n], a = A.pattern[o4 + j], r = (2.5 + 14 * Math.sqrt(a)).toFixed(1);
    const self = j === i && S.P.self, label = vis.length <= 16 || heavy.has(j) || self;
    svg += `<g class="pt${self ? " self" : ""}"><title>${esc(t("hull_point", { j, tok: S.P.k[j], a: fmt(a) }))}</title>` +
      `<circle cx="${X(p[0])}" cy="${Y(p[1])}" r="${r}" fill-opacity="${(0.25 + 0.6 * Math.sqrt(a)).toFixed(2)}"/>` +
      (label ? `<text x="${(+X(p[0]) + +r + 3).toFixed(1)}" y="${(+Y(p[1]) + 4).toFixed(1)}">${esc(S.P.k[j])}</text>` : "") + "</g>";
  });
  const zx = +X(z[0]), zy = +Y(z[1]);
  svg += `<g class="z"><title>${esc(t("hull_z"))}</title><path d="M${zx - 6},${zy - 6}L${zx + 6},${zy + 6}M${zx - 6},${zy + 6}L${zx + 6},${zy - 6}"/>` +
    `<text x="${zx + 8}" y="${zy - 7}">z</text></g></svg>`;
  $("#hull").innerHTML = svg;
  const kept = A.kept_2d[l * S.H + h];
  $("#hull-caption").innerHTML = (S.tr && S.part === "cross" ? t("hull_cross") + " " : "") +
    t("hull_caption", { kept: (100 * kept).toFixed(1) });
}

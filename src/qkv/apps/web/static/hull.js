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

const LABEL_PX = 12;  // #hull .pt text's font size, in the figure's units
/** A label's width: a full-width (CJK) character is about 1 em, any other about 0.6 em. */
const labelWidth = (text) => [...text].reduce((w, c) => w + (c.codePointAt(0) > 0x2e80 ? 1 : 0.6) * LABEL_PX, 0);

/** Where each point's label goes: heaviest first, right of the point, else left, above or below, the
 *  first spot inside the W x H figure that overlaps no label placed before it nor a `taken` box; a label
 *  with no such spot is left out (its point keeps its tooltip). Map n -> {x, y, anchor}. */
export function placeLabels(points, W, H, taken = []) {
  const boxes = taken.slice(), out = new Map();
  const free = (b) => b.x0 >= 0 && b.x1 <= W && b.y0 >= 0 && b.y1 <= H &&
    boxes.every((o) => b.x1 <= o.x0 || b.x0 >= o.x1 || b.y1 <= o.y0 || b.y0 >= o.y1);
  const up = 1.1 * LABEL_PX, down = 0.4 * LABEL_PX;  // a text line's box around its baseline
  for (const q of points.slice().sort((u, v) => (v.self - u.self) || (v.a - u.a))) {
    const w = labelWidth(S.P.k[q.j]);
    const spots = [
      { x: q.x + q.r + 3, y: q.y + 4, anchor: "start", x0: q.x + q.r + 3 },
      { x: q.x - q.r - 3, y: q.y + 4, anchor: "end", x0: q.x - q.r - 3 - w },
      { x: q.x, y: q.y - q.r - down - 1, anchor: "middle", x0: q.x - w / 2 },
      { x: q.x, y: q.y + q.r + up + 1, anchor: "middle", x0: q.x - w / 2 },
    ];
    for (const sp of spots) {
      const b = { x0: sp.x0, y0: sp.y - up, x1: sp.x0 + w, y1: sp.y + down };
      if (!free(b)) continue;
      boxes.push(b); out.set(q.n, sp);
      break;
    }
  }
  return out;
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
  // with many keys, label only the query itself and the 12 heaviest (every point has a tooltip); the labels
  // are placed heaviest first where they overlap no other label (placeLabels), else left out
  const heavy = new Set(vis.slice().sort((u, v) => A.pattern[o4 + v] - A.pattern[o4 + u]).slice(0, 12));
  const zx = +X(z[0]), zy = +Y(z[1]);
  const want = vis.map((j, n) => ({ n, j, a: A.pattern[o4 + j], x: +X(pts[n][0]), y: +Y(pts[n][1]), r: 2.5 + 14 * Math.sqrt(A.pattern[o4 + j]),
    self: j === i && S.P.self })).filter((q) => vis.length <= 16 || heavy.has(q.j) || q.self);
  const placed = placeLabels(want, W, Hh, [{ x0: zx - 7, y0: zy - 22, x1: zx + 20, y1: zy + 7 }]);
  pts.forEach((p, n) => {
    const j = vis[n], a = A.pattern[o4 + j], r = (2.5 + 14 * Math.sqrt(a)).toFixed(1);
    const self = j === i && S.P.self, at = placed.get(n);
    svg += `<g class="pt${self ? " self" : ""}"><title>${esc(t("hull_point", { j, tok: S.P.k[j], a: fmt(a) }))}</title>` +
      `<circle cx="${X(p[0])}" cy="${Y(p[1])}" r="${r}" fill-opacity="${(0.25 + 0.6 * Math.sqrt(a)).toFixed(2)}"/>` +
      (at ? `<text x="${at.x.toFixed(1)}" y="${at.y.toFixed(1)}" text-anchor="${at.anchor}">${esc(S.P.k[j])}</text>` : "") + "</g>";
  });
  svg += `<g class="z"><title>${esc(t("hull_z"))}</title><path d="M${zx - 6},${zy - 6}L${zx + 6},${zy + 6}M${zx - 6},${zy + 6}L${zx + 6},${zy - 6}"/>` +
    `<text x="${zx + 8}" y="${zy - 7}">z</text></g></svg>`;
  $("#hull").innerHTML = svg;
  const kept = A.kept_2d[l * S.H + h];
  $("#hull-caption").innerHTML = (S.tr && S.part === "cross" ? t("hull_cross") + " " : "") +
    t("hull_caption", { kept: (100 * kept).toFixed(1) });
}

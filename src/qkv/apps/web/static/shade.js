// Shading for the intervention panels' tables (lens, attribution, patch): a probability on one blue ramp,
// a signed number on a diverging scale (blue > 0, red < 0, white at 0), each with a text colour that
// stays readable on it. The styles are inline: a cell's colour is its number.

const BLUE = [37, 99, 235], RED = [220, 38, 38], INK = "#1f2937";

function mix(end, f) {
  const c = end.map((e) => Math.round(255 + (e - 255) * f));
  return `background:rgb(${c.join(",")});color:${f > 0.55 ? "#fff" : INK}`;
}

/** A probability p in [0, 1]: white to blue. */
export function rampStyle(p) {
  return mix(BLUE, Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : 0);
}

/** A signed number already divided by its scale (x in [−1, 1], clamped): blue above 0, red below. */
export function divergeStyle(x) {
  if (!Number.isFinite(x)) return `background:#eef0f4;color:${INK}`;
  return mix(x >= 0 ? BLUE : RED, Math.min(1, Math.abs(x)));
}

/** The largest |x| of a list of numbers (1e-12 at least, so that it can divide). */
export const absMax = (xs) => xs.reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 1e-12);

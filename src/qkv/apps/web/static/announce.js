// What the page did, told to whoever listens. The page's code announces ("redraw": a redraw's
// script has run; "redraw-complete": every card holds its numbers; "doc": a new view; "pg-frame": a
// playground redraw; "side": the side-by-side panel drew); measure.js listens and keeps the timings
// and the test hook the browser tests and the benchmarks read. Nothing the page draws listens.

const LISTENERS = new Map();

/** Call fn(detail) on every announcement of `what`. */
export function listen(what, fn) {
  if (!LISTENERS.has(what)) LISTENERS.set(what, []);
  LISTENERS.get(what).push(fn);
}

export function announce(what, detail) {
  const fns = LISTENERS.get(what);
  if (fns) for (const fn of fns) fn(detail);
}

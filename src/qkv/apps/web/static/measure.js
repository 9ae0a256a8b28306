// Measurement, outside the page's drawing code: the timings the browser tests and the benchmarks
// (benchmarks/explorer_redraw.py, benchmarks/playground_fps.py) read, and the one test hook object,
// window.qkv. The page only announces what it did (announce.js); this module listens. Its fields:
//   state {layer, head, token, lang, part}, mode   the choice shown, as of the last redraw
//   view            the last view document
//   timings         one entry per redraw: {what, ms, paint_ms, done_ms} (see below)
//   playground      {frames, times, ms: each playground redraw's end and script time; state(),
//                    steps(), parse(text), display(x), busy(): the playground's numbers, as attend's}
//   side            the side-by-side panel's last drawing {layer, head, a, b, diff, scale, next}
//   panels()        each panel's {name, lazy, awake}
// body[data-renders] counts the redraws, once every card holds the new numbers.

import { S } from "./state.js";
import { listen } from "./announce.js";
import { panelStates } from "./panels.js";
import { pgFmt, pgParse } from "./exact.js";
import { pgBusy, pgSnapshot, pgStepsShown } from "./pg_state.js";

const qkv = {
  state: { layer: 0, head: 0, token: 0, lang: "en", part: null }, timings: [], view: null, mode: "live",
  playground: {
    frames: 0, times: [], ms: [],
    state: pgSnapshot, steps: pgStepsShown, parse: (s) => pgParse(s), display: (x) => pgFmt(x), busy: pgBusy,
  },
  side: undefined,
  panels: panelStates,
};
window.qkv = qkv;  // the test hook: read by the tests and benchmarks only, never by the page

// ms: the redraw's script, from the user's event (t0); paint_ms: until the frame that shows it has
// been painted (layout and paint included), read in a task queued from the next animation frame;
// done_ms: until the cards outside the window, redrawn in a task after that frame, have been
// painted too (the frame after). Without such cards done_ms = paint_ms.
const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn, 0));
const open = new Map();  // redraw id -> {entry, t0, deferred}

listen("redraw", ({ id, what, t0 }) => {
  Object.assign(qkv.state, { layer: S.layer, head: S.head, token: S.token, lang: S.lang, part: S.part });
  qkv.mode = S.mode;
  const entry = { what, ms: performance.now() - t0, paint_ms: null, done_ms: null };
  qkv.timings.push(entry);
  const job = { entry, t0, deferred: null };
  open.set(id, job);
  afterPaint(() => {
    entry.paint_ms = performance.now() - t0;
    if (job.deferred === false) { entry.done_ms = entry.paint_ms; open.delete(id); }
  });
});

listen("redraw-complete", ({ id, deferred }) => {
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
  const job = open.get(id);
  if (!job) return;
  job.deferred = deferred;
  if (!deferred) {
    if (job.entry.paint_ms !== null) { job.entry.done_ms = job.entry.paint_ms; open.delete(id); }
    return;
  }
  afterPaint(() => { job.entry.done_ms = performance.now() - job.t0; open.delete(id); });
});

listen("doc", (doc) => { qkv.view = doc; });

listen("pg-frame", ({ t0 }) => {
  const pg = qkv.playground, now = performance.now();
  pg.frames++;
  pg.times.push(now);
  pg.ms.push(now - t0);
  if (pg.times.length > 5000) { pg.times.splice(0, 2500); pg.ms.splice(0, 2500); }
});

listen("side", (d) => { qkv.side = { ...d, diff: d.diff ? Array.from(d.diff) : null }; });

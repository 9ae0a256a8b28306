// The document shown: a new view (or a translation's part) made current in S, and the query, layer
// and head it opens on. Nothing here draws (render.js and actions.js do).

import { S, at4 } from "./state.js";
import { clamp } from "./util.js";
import { decode, decodePart, partOf } from "./decode.js";

/** Make the current part (S.part; a GPT has one) the one shown: decode its arrays once, size S. */
export function usePart() {
  const doc = S.doc, p = partOf(doc, S.tr ? S.part : null), key = S.tr ? S.part : "";
  if (!S.cache[key]) S.cache[key] = decodePart(doc, p, S.shared);
  S.P = p; S.A = S.cache[key];
  S.T = p.q.length; S.Tk = p.k.length; S.L = p.L;
  S.layer = clamp(S.layer, 0, S.L - 1); S.head = clamp(S.head, 0, S.H - 1); S.token = clamp(S.token, 0, S.T - 1);
}

/** `doc` (a view or a translation-view) becomes S.doc, on the part, layer, head and token it opens on. */
export function setDoc(doc) {
  S.doc = doc; S.tr = doc.kind === "translation-view"; S.cache = {}; S.shared = {};
  if (S.tr) {
    for (const name of Object.keys(doc.arrays)) S.shared[name] = decode(doc.arrays[name]);  // the next words
    if (!S.part || !Object.hasOwn(doc.parts, S.part)) S.part = "cross";  // own keys only: ?part=__proto__ is no part
  } else {
    S.part = null;
  }
  S.H = doc.model.n_heads; S.k = doc.first;
  usePart();
  if (S.tr && !S.opened) {  // the first translation shown: the last decoder layer's sharpest head, as qkv explain
    S.opened = true; S.layer = S.L - 1; S.head = sharpestHead(S.layer);
  }
  S.token = defaultToken(doc);
}

/** The head of layer l whose rows have the smallest mean entropy (the one that reads fewest keys). */
export function sharpestHead(l) {
  let best = 0, least = Infinity;
  for (let h = 0; h < S.H; h++) {
    let bits = 0;
    for (let i = 0; i < S.T; i++) for (let j = 0; j < S.Tk; j++) {
      const a = S.A.pattern[at4(l, h, i, j)];
      if (a > 0) bits -= a * Math.log2(a);
    }
    if (bits < least) { least = bits; best = h; }
  }
  return best;
}

/** The query to open on: the last token, or the last that is not a special one ([CLS], [SEP]);
 *  a translation's: the last target step that writes a word (the server's rule), or the last source word. */
export function defaultToken(doc) {
  if (S.tr) return S.P.queries === "source" ? S.T - 1 : clamp(doc.default_token, 0, S.T - 1);
  const special = new Set(doc.special || []);
  for (let i = doc.tokens.length - 1; i >= 0; i--) if (!special.has(i)) return i;
  return doc.tokens.length - 1;
}

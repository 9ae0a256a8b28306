// The page's state: one object, S, that every module reads and the few that change it import.
// One "view" document (qkv.analysis.view) holds every number the page shows; its arrays are decoded
// once into typed arrays (S.A), and a change of layer, head or query token only redraws from them.
// A translation model's "translation-view" holds three attentions ("parts": cross, decoder,
// encoder), each with its own queries and keys: S.P is the one shown, with T queries (rows) and Tk
// keys (columns); for a GPT Tk = T.

export const S = {
  lang: "en", mode: "live",        // the page's language; "live" (qkv serve) or "static" (an export)
  info: null, examples: [],        // from /api/model
  side: null,                      // its two sentences for the side-by-side panel ({a, b}), or null
  doc: null, A: null,              // the current view document and its decoded arrays
  T: 0, L: 0, H: 0, k: 0,
  layer: 0, head: 0, token: 0,
  tr: false, part: null,           // a translation document, and which of its attentions is shown
  P: null, Tk: 0, cache: {}, shared: {},  // the attention shown: its labels, decoded arrays per part
  compare: null, added: null, stopped: null, req: 0,
  typed: "",                      // the text the current document was read from, as typed (actions.js)
  typedLast: false,                // the current document came from typing alone (a pause), not Enter or a click
  labelW: 40,                      // widest token label in px (measured once per document)
  hideSpace: false, pending: 0, opened: false,
  nonFinite: null,  // the last answer's {count, first} of NaN or infinite numbers (errors.js), or null
};

/** The model document: /api/model's, or the view's own (a static export without one). */
export const model = () => S.info || (S.doc && S.doc.model) || null;

/** What the model can do, as its document says (qkv.core.models.family): the page never reads its
 *  architecture's name. With no document yet, a decoder is assumed (nothing is drawn anyway). */
export const predictsNext = () => { const m = model(); return !m || m.has_lm_head !== false; };
export const generates = () => { const m = model(); return !m || m.generates !== false; };
export const translates = () => { const m = model(); return !!m && m.translates === true; };
export const modelDesign = () => { const m = model(); return (m && m.design) || "decoder"; };

// [L,H,T,Tk] / [L,H,T] per query / [L,H,Tk] per key / [L,T] offsets into the arrays shown
export const at4 = (l, h, i, j) => ((l * S.H + h) * S.T + i) * S.Tk + j;
export const at3 = (l, h, i) => (l * S.H + h) * S.T + i;
export const atK = (l, h, j) => (l * S.H + h) * S.Tk + j;
export const at2 = (l, i) => l * S.T + i;

/** The keys query i can see in the current head: those whose score is not −∞. */
export function visibleKeys(i) {
  const sc = S.A.scores, base = at4(S.layer, S.head, i, 0), out = [];
  for (let j = 0; j < S.Tk; j++) if (sc[base + j] !== -Infinity) out.push(j);
  return out;
}

// Decoding the server's documents: packed arrays (base64, little-endian) into typed arrays, a
// translation model's parts (cross, decoder, encoder attention) into the one attention the page shows.
// A view can also come as one binary body (qkv.analysis.packing.binary: a JSON header, then the
// arrays' bytes): readBinary gives the same document, each array's bytes kept as they came.

const MAGIC = "QKV1";

/** A binary body (an ArrayBuffer) as its document. Each packed array keeps its bytes, a view into the
 *  body (non-enumerable "bytes", which decode reads without copying); its "data" is their base64 when
 *  read, so that the document still writes itself out as the JSON one (JSON.stringify, an export). */
export function readBinary(buf) {
  const head = new DataView(buf, 0, 8);
  if (String.fromCharCode(...new Uint8Array(buf, 0, 4)) !== MAGIC) throw new Error("not a qkv binary document");
  const n = head.getUint32(4, true), start = Math.ceil((8 + n) / 8) * 8;
  return JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, n)), (key, v) => {
    if (v === null || typeof v !== "object" || !v.at || !v.dtype) return v;
    const bytes = new Uint8Array(buf, start + v.at[0], v.at[1]);
    delete v.at;
    Object.defineProperty(v, "bytes", { value: bytes });
    Object.defineProperty(v, "data", { enumerable: true, get: () => toBase64(bytes) });
    return v;
  });
}

function toBase64(bytes) {
  if (bytes.toBase64) return bytes.toBase64();
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** One packed array {data, dtype, shape, layout} (or one read by readBinary) as a Float32Array or an Int32Array. */
export function decode(p) {
  let bytes;
  if (p.bytes) {
    bytes = p.bytes;
  } else if (Uint8Array.fromBase64) {
    bytes = Uint8Array.fromBase64(p.data);
  } else {
    const bin = atob(p.data);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  }
  const Typed = p.dtype === "int32" ? Int32Array : Float32Array;
  const flat = new Typed(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return p.layout === "lower" ? expandLower(flat, p.shape) : flat;
}

/** "lower" layout: each T×T matrix sent as its lower triangle, row by row; above it is 0. */
export function expandLower(flat, shape) {
  const T = shape[shape.length - 1], n = shape.reduce((a, b) => a * b, 1) / (T * T);
  const out = new flat.constructor(n * T * T);
  let src = 0;
  for (let m = 0; m < n; m++) {
    for (let i = 0; i < T; i++) {
      const row = (m * T + i) * T;
      out.set(flat.subarray(src, src + i + 1), row);
      src += i + 1;
    }
  }
  return out;
}

/** The scaled scores s_ij = q_i·k_j / √d_head, −∞ where the causal mask hides key j from query i.
 *  The model divides in float32 by float32(√d_head); one correctly rounded division, repeated here
 *  exactly (a double quotient of two float32 numbers rounds to the same float32).
 *  T queries and Tk keys (cross-attention: Tk source words; otherwise Tk = T). Gemma: `cap` soft-caps
 *  them, s = cap·tanh(s / cap) (to float32's rounding, not bit for bit), and `windows[L]`, a layer's
 *  sliding window, hides the keys j <= i − window as well. */
export function scaledScores(dots, L, H, T, scale, causal, Tk = T, cap = null, windows = null) {
  const out = new Float32Array(dots.length), s = Math.fround(scale), f = Math.fround;
  for (let lh = 0; lh < L * H; lh++) {
    const w = windows ? windows[Math.floor(lh / H)] : null;
    for (let i = 0; i < T; i++) {
      const row = (lh * T + i) * Tk;
      for (let j = 0; j < Tk; j++) {
        const hidden = (causal && j > i) || (w && j <= i - w);
        const scaled = dots[row + j] / s;
        out[row + j] = hidden ? -Infinity : cap ? f(f(Math.tanh(f(f(scaled) / cap))) * cap) : scaled;
      }
    }
  }
  return out;
}

/** The attention `part` of `doc` (null: a GPT's or an encoder's own), with its query and key labels.
 *  `self`: queries and keys are the same positions of one sequence. */
export function partOf(doc, part) {
  if (part === null) return { arrays: doc.arrays, L: doc.model.n_layers, causal: doc.model.causal, q: doc.tokens, k: doc.tokens,
    qIds: doc.ids, self: true, queries: "text" };
  const p = doc.parts[part], src = p.queries === "source";
  return { arrays: p.arrays, L: p.n_layers, causal: p.causal, q: src ? doc.source.tokens : doc.target.written,
    k: p.keys === "source" ? doc.source.tokens : doc.target.tokens, qIds: src ? doc.source.ids : doc.target.written_ids,
    self: p.queries === p.keys, queries: p.queries };
}

/** Every array of part `p` decoded, with `shared` (arrays of the whole document) and the scaled scores. */
export function decodePart(doc, p, shared) {
  const A = {};
  for (const name of Object.keys(p.arrays)) A[name] = decode(p.arrays[name]);
  Object.assign(A, shared);
  A.scores = scaledScores(A.dots, p.L, doc.model.n_heads, p.q.length, doc.scale, p.causal, p.k.length,
    doc.soft_cap ?? null, doc.windows ?? null);
  return A;
}

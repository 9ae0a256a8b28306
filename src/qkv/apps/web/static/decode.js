// Decoding the server's documents: packed arrays (base64, little-endian) into typed arrays, a
// translation model's parts (cross, decoder, encoder attention) into the one attention the page shows.

/** One packed array {data, dtype, shape, layout} as a Float32Array or an Int32Array. */
export function decode(p) {
  let bytes;
  if (Uint8Array.fromBase64) {
    bytes = Uint8Array.fromBase64(p.data);
  } else {
    const bin = atob(p.data);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  }
  const flat = p.dtype === "int32" ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
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

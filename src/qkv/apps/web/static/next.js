// The next token: the top 10 at the chosen position, and the token that actually follows. A new text
// opens the card on a position worth reading (worthReading: not one where the model only predicts a
// line break or punctuation); once the learner chooses a token, the card follows the chosen token.

import { S, model, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { t } from "./i18n.js";

/** The byte a token shown as <0xE6> stands for (a byte fallback's or SentencePiece's byte token), or null. */
export function byteOf(tok) {
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(tok);
  return m ? parseInt(m[1], 16) : null;
}

/** What a byte is in UTF-8 (as qkv.presentation.byte_tokens.byte_role): a whole ASCII character, a
 *  continuation, the lead of a 2-, 3- or 4-byte character, or a byte UTF-8 never holds. */
export function byteRole(b) {
  if (b < 0x80) return "ascii";
  if (b < 0xc0) return "cont";
  if (b >= 0xc2 && b < 0xe0) return "lead2";
  if (b >= 0xe0 && b < 0xf0) return "lead3";
  return b >= 0xf0 && b < 0xf5 ? "lead4" : "bad";
}

/** A candidate's label: the token, and for a byte token a mark that it is one (its role on hover). */
function candidate(tok) {
  const b = byteOf(tok);
  if (b === null) return `<span class="tok">${esc(tok)}</span>`;
  return `<span class="tok byte" title="${esc(t("byte_role_" + byteRole(b)))}">${esc(tok)}<small> ${t("byte_mark")}</small></span>`;
}

/** The line under the bars when byte tokens are candidates: what each is, and why bytes are candidates at all. */
function bytesLine(toks) {
  const bytes = [...new Set(toks.filter((tok) => byteOf(tok) !== null))];
  if (!bytes.length) return "";
  const zh = S.lang === "zh", byRole = new Map();  // role -> its byte tokens, in the order shown
  for (const tok of bytes) byRole.set(byteRole(byteOf(tok)), [...(byRole.get(byteRole(byteOf(tok))) || []), tok]);
  const roles = [...byRole].map(([role, toks]) => toks.map((tok) => `<span class="piece">${esc(tok)}</span>`).join(" ") +
    (zh ? "：" : ": ") + t("byte_role_" + role)).join(zh ? "；" : "; ");
  return `<p id="next-bytes" class="why">${t("next_bytes_why", { roles, tok: `<span class="piece">${esc(bytes[0])}</span>` })}</p>`;
}

/** A bar's length in % of the longest: none for a NaN (a diverged model), which has no length. */
const share = (p, pmax) => (Number.isFinite(p / pmax) ? (100 * p / pmax).toFixed(1) : "0");

// a top prediction that only closes the line: a line break or end of text (as the vocabulary writes them),
// whitespace, punctuation or symbols, a special token (<...>, [SEP]) or a byte token
const DULL = /^(?:\\[nrt]|[\s\p{P}\p{S}\u2400-\u243f\u010a\u0120]|<[^<>]*>|\[[A-Z]+\])+$/u;
export const DULL_P = 0.8;  // ... predicted with more than this probability
let follow = null;  // the document on which the learner chose a token: the card shows S.token there

/** The learner chose a token: the card follows it until the next document. */
export function followToken() { follow = S.doc; }

/** The position a new text opens on: the last one (not a special token) whose top prediction is not
 *  DULL with p > DULL_P; with none such, the last. {i, skipped: the dull positions after it}. */
export function worthReading() {
  const A = S.A, K = A.next_probs.length / S.T, special = new Set(S.doc.special || []), skipped = [];
  let last = -1;
  for (let i = S.T - 1; i >= 0; i--) {
    if (special.has(i)) continue;
    if (last < 0) last = i;
    const tok = S.doc.vocab[String(A.next_ids[i * K])] ?? "";
    if (!(A.next_probs[i * K] > DULL_P && DULL.test(tok))) return { i, skipped };
    skipped.push(i);
  }
  return { i: Math.max(last, 0), skipped: [] };
}

/** Where the card stands, and the line that says why. */
function nextPosition() {
  if (S.tr || follow === S.doc) return { i: S.token, why: "" };
  const { i, skipped } = worthReading(), K = S.A.next_probs.length / S.T;
  const what = skipped.map((j) => t("pl_next_skip", { j, tok: esc(S.doc.tokens[j]),
    top: esc(S.doc.vocab[String(S.A.next_ids[j * K])] ?? ""), p: fmt(S.A.next_probs[j * K]) })).join(t("pl_sep"));
  return { i, why: `<p id="next-why" class="caption" data-pos="${i}">${t(skipped.length ? "pl_next_rule" : "pl_next_rule_last", { i, p: DULL_P, what })}</p>` };
}

export function renderNext() {
  if (!predictsNext() || !S.A.next_probs) return renderNoNext();
  if (S.tr && S.P.queries === "source") return renderNoNext("next_source");
  $(".next-card").classList.remove("encoder");
  const { i, why } = nextPosition(), A = S.A, doc = S.doc, K = A.next_probs.length / S.T;
  const actual = S.tr ? doc.target.written_ids[i] : i + 1 < S.T ? doc.ids[i + 1] : null;
  const pmax = Math.max(A.next_probs[i * K], 1e-12);
  let html = `<p class="caption">${t("next_caption")}</p>${why}<div class="bars">`;
  const shown = [];
  for (let r = 0; r < K; r++) {
    const id = A.next_ids[i * K + r], p = A.next_probs[i * K + r], tok = doc.vocab[String(id)] ?? `#${id}`;
    const hit = id === actual;
    shown.push(tok);
    html += `<div class="bar${hit ? " actual" : ""}" data-rank="${r + 1}" data-id="${id}" data-prob="${p}">` +
      `<span class="rank">${r + 1}</span>${candidate(tok)}` +
      `<span class="track"><span class="fill" style="width:${share(p, pmax)}%"></span></span>` +
      `<span class="prob num">${fmt(p)}</span></div>`;
  }
  html += "</div>" + bytesLine(shown);
  if (actual !== null) {
    html += `<p id="next-actual" class="actual-line">${t(S.tr ? "next_actual_tr" : "next_actual", { tok: esc(S.tr ? doc.target.written[i] : doc.tokens[i + 1]),
      p: `<span class="num" data-field="actual_prob">${fmt(A.actual_prob[i])}</span>`,
      r: `<span class="num" data-field="actual_rank">${A.actual_rank[i]}</span>` })}</p>`;
  } else {
    html += `<p id="next-actual" class="actual-line">${t("next_last")}</p>`;
  }
  $("#next-title").textContent = S.tr ? t("next_title_tr", { tok: doc.target.tokens[i], i }) : t("next_title", { tok: doc.tokens[i], i });
  $("#next").innerHTML = html;
  $("#next").dataset.pos = String(i);
}

/** An encoder (or a translation model's encoder part): no next-token distribution, and the page says
 *  why instead of showing bars. */
function renderNoNext(why = "next_none") {
  const m = model();
  $(".next-card").classList.add("encoder");
  $("#next-title").textContent = t("next_none_title");
  $("#next").innerHTML = `<p id="next-none" class="why">${t(why, { d: m.d_model })}</p>`;
}

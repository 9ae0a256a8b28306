// The text's tokens: the buttons that choose the query, the ␣ toggle that hides whitespace tokens,
// and the note naming the pieces the model never learned as words.

import { S, model } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";

/** Token buttons. A WordPiece piece that continues the word before it (shown ⁀piece) is drawn
 *  joined to that token (class "cont", the one before "joined"); [CLS] and [SEP] are "special". */
export function renderTokenButtons() {
  const cont = new Set(S.doc.continues || []), special = new Set(S.doc.special || []);
  $("#tokens").innerHTML = S.P.q.map((tok, i) => {
    const cls = ["token", cont.has(i) ? "cont" : "", cont.has(i + 1) ? "joined" : "", special.has(i) ? "special" : "",
      isSpace(tok) ? "space" : ""];
    return `<button type="button" class="${cls.filter(Boolean).join(" ")}" data-pos="${i}" ` +
      `title="${esc(tokenTitle(i))}">${esc(tok)}</button>`;
  }).join("");  // the position is drawn by CSS (::before), outside textContent
}

/** The token buttons' tooltips, in the current language. */
export function titleTokens() {
  for (const b of document.querySelectorAll("#tokens .token")) b.title = tokenTitle(+b.dataset.pos);
}

/** Whether a token, as shown, is only whitespace: ␣ for spaces, \n, \t, \r. */
export const isSpace = (tok) => /^(?:\u2423|\\[nrt]|\s)+$/.test(tok);

/** The positions the token row and the heatmap show among `labels`: all of them, or, with the ␣
 *  toggle on, those that are not whitespace (all again when nothing else is left). */
export function shownIdx(labels) {
  const all = labels.map((_, n) => n);
  if (!S.hideSpace) return all;
  const kept = all.filter((n) => !isSpace(labels[n]));
  return kept.length ? kept : all;
}

/** The ␣ toggle: offered only when the model has whitespace tokens (model.whitespace_tokens; for a
 *  document without that field, when this text holds one). */
export function renderSpaceBox() {
  const m = model() || {};
  const has = !S.tr && (m.whitespace_tokens ?? (S.doc ? S.doc.tokens.some(isSpace) : false));
  $("#space-box").hidden = !has;
  if (!has) S.hideSpace = false;
  $("#hide-space").checked = !!S.hideSpace;
  document.body.dataset.hideSpace = S.hideSpace ? "1" : "0";
}

/** The token a tokenizer writes for what its vocabulary cannot spell (WordPiece's [UNK]): /api/model's
 *  unknown_token; a document without the field (a static export) assumes [UNK] for WordPiece. */
export function unknownToken() {
  const m = model() || {};
  return m.unknown_token !== undefined ? m.unknown_token : m.tokenizer === "wordpiece" ? "[UNK]" : null;
}

/** The note under the text box for pieces the model never learned as words (doc.unknown, from a
 *  word tokenizer with a fallback: read as characters or bytes), with the nearest known words; the
 *  characters a pretrained vocabulary cannot spell at all ("how": "unspelled": left out of the ids); and,
 *  for a tokenizer that writes an unknown token instead (MiniLM's WordPiece on Chinese), how many
 *  tokens are that one token, which tells the model nothing of the characters it stands for. */
export function renderUnknown() {
  const el = $("#unknown"), list = (S.doc && !S.tr && S.doc.unknown) || [];
  const unk = unknownToken(), n = unk && S.doc && !S.tr ? S.P.q.filter((tok) => tok === unk).length : 0;
  el.hidden = !list.length && !n;
  el.dataset.unk = String(n);
  const sep = S.lang === "zh" ? "、" : ", ";
  const lines = n ? [t("unk_note", { n, unk: `<span class="piece">${esc(unk)}</span>` })] : [];
  el.innerHTML = lines.concat(list.map((u) => u.how === "unspelled" ? t("unknown_unspelled", {
    text: `<b>${esc(JSON.stringify(u.text))}</b>` }) : t((u.nearest || []).length ? "unknown_line" : "unknown_far", {
    text: `<b>${esc(u.text)}</b>`, pieces: u.pieces.map((p) => `<span class="piece">${esc(p)}</span>`).join(" · "),
    how: t(u.how === "bytes" ? "unknown_bytes" : "unknown_chars"),
    nearest: (u.nearest || []).map(esc).join(sep) }))).join("<br>");
}

/** A token button's tooltip: its position and id; a translation's target step: what it reads and writes. */
function tokenTitle(i) {
  if (S.tr && S.P.queries === "target")
    return t("step_title", { i, r: S.doc.target.tokens[i], w: S.doc.target.written[i] });
  return t("token_title", { i, id: S.P.qIds[i] });
}

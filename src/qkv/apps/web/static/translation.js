// A translation model: the source and its translation, above the query tokens.

import { S } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";

export function renderTranslation() {
  const el = $("#translation");
  el.hidden = !S.tr;
  if (!S.tr) return;
  const d = S.doc;
  el.innerHTML = t(d.translated ? "translation_line" : "translation_given", { text: `<b id="translation-text">${marked(d)}</b>` }) +
    (d.finished ? "" : " " + t("translation_cut")) +
    // a word written while the model was choosing between several: the translation is a guess
    (d.left_out && d.left_out.length ? ` <span id="translation-left-out">${t("translation_left_out", { marks: d.left_out.map((m) => t("translation_mark", { mark: esc(m) })).join(" ") })}</span>` : "") +
    (d.unsure ? ` <span id="translation-unsure" class="unsure">${t("translation_unsure", { word: esc(d.weakest), p: d.confidence.toFixed(2), below: d.unsure_below })}</span>` : "") +
    honesty(d.honesty);
}

// The translation's words, those no source word yields (qkv.analysis.invented_words) marked.
function marked(d) {
  const h = d.honesty, at = new Set(h && h.checked ? h.invented : []);
  return d.translation.split(" ").map((w, i) => at.has(i)
    ? `<mark class="invented" title="${esc(t("translation_invented_tip", { word: w }))}">${esc(w)}</mark>` : esc(w)).join(" ");
}

// What the mark found, what it cannot judge, and its rule, said under the translation.
function honesty(h) {
  if (!h || !h.checked) return "";
  const quote = (w) => t("translation_quote", { word: esc(w) });
  const found = h.words.length
    ? `<span class="invented-note">${t("translation_invented", { n: h.words.length, words: h.words.map(quote).join(t("translation_comma")) })}</span>`
    : t("translation_invented_none");
  const unknown = h.unglossed.length ? " " + t("translation_unglossed", { words: h.unglossed.map(quote).join(t("translation_comma")) }) : "";
  return `<div id="translation-honesty">${found}${unknown} <span class="rule">${t("translation_rule")}</span></div>`;
}

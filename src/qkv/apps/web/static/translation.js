// A translation model: the source and its translation, above the query tokens.

import { S } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";

export function renderTranslation() {
  const el = $("#translation");
  el.hidden = !S.tr;
  if (!S.tr) return;
  const d = S.doc;
  el.innerHTML = t(d.translated ? "translation_line" : "translation_given", { text: `<b id="translation-text">${esc(d.translation)}</b>` }) +
    (d.finished ? "" : " " + t("translation_cut")) +
    // a word written while the model was choosing between several: the translation is a guess
    (d.left_out && d.left_out.length ? ` <span id="translation-left-out">${t("translation_left_out", { marks: d.left_out.map((m) => t("translation_mark", { mark: esc(m) })).join(" ") })}</span>` : "") +
    (d.unsure ? ` <span id="translation-unsure" class="unsure">${t("translation_unsure", { word: esc(d.weakest), p: d.confidence.toFixed(2), below: d.unsure_below })}</span>` : "");
}

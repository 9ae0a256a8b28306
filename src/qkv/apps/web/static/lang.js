// The page's language: the one it opens in, and a switch that rewrites every label.

import { S } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";
import { markStale, renderNonFinite } from "./errors.js";
import { eachPanel } from "./panels.js";
import { fillSelects } from "./choice.js";
import { titleThumbs } from "./thumbs.js";
import { renderUnknown, titleTokens } from "./tokens.js";
import { renderTranslation } from "./translation.js";
import { renderModelLine } from "./model_line.js";
import { renderAdded, renderGenAvailable } from "./generate.js";

/** ?lang= in the address, else the language a static export was written in (qkv explain --html
 *  --lang), else the browser's. */
export function initialLang(data) {
  const q = new URLSearchParams(location.search).get("lang");
  if (q === "zh" || q === "en") return q;
  if (data && (data.lang === "zh" || data.lang === "en")) return data.lang;
  return (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

/** Every label, title and placeholder in S.lang; then the panels'. */
export function applyLang() {
  document.documentElement.lang = S.lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.innerHTML = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of document.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  $("#lang").textContent = t("lang_button");
  renderModelLine();
  renderGenAvailable();
  renderAdded();
  renderNonFinite();
  if (S.doc) {
    titleTokens();
    titleThumbs();
    if (S.tr) { fillSelects(); renderTranslation(); }
    renderUnknown();
    if (document.body.dataset.stale === "1") markStale(S.doc.text);
  }
  eachPanel("lang");
}

// The model's document (/api/model): the line at the top of the page (its shape, which model it
// is and where it was loaded from), the hint under the text box, the example sentences.

import { S, model, modelDesign } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";

const KIND = { decoder: "kind_decoder", encoder: "kind_encoder", "encoder-decoder": "kind_translation" };  // the design's words

export function renderModelLine() {
  const m = model();
  if (!m) return;
  const translation = modelDesign() === "encoder-decoder";
  $("#model-line").textContent = t(translation ? "model_line_tr" : "model_line", { L: m.n_layers, H: m.n_heads, dm: m.d_model,
    dh: m.d_head, nctx: m.n_ctx, tok: t("tok_" + m.tokenizer), params: Number(m.parameters).toLocaleString("en-US"),
    norm: t("norm_" + m.norm), Le: m.n_encoder_layers }) + (m.name ? ` · ${modelName(m.name)}` : "");
  const nospace = m.tokenizer === "word" && m.space_tokens === false;  // spaces only separate the words
  $("#hint").textContent = t(translation ? "hint_translate" : nospace ? "hint_word_nospace" : "hint_" + m.tokenizer);
  $("#compare").hidden = translation;  // a translation model is shown across its two sentences instead
  renderLoadedFrom(m);
}

/** A model's name as the page writes it: the one that ships inside qkv is "bundled" in the page's language. */
const modelName = (name) => (name === "bundled" ? t("model_bundled") : name);

/** Which model the page shows, what kind it is, its size and where it was loaded from (model.loaded_from). */
function renderLoadedFrom(m) {
  const src = m.loaded_from || {};
  const size = m.weights_bytes ? t("source_size", { mb: (m.weights_bytes / 1e6).toFixed(1) }) : "";
  $("#model-source").textContent = t("model_source", {
    title: src.title || modelName(src.name || m.name || "?"),
    kind: t(KIND[modelDesign()]),
    params: Number(m.parameters).toLocaleString("en-US"), size,
    from: src.path ? t("source_path", { path: src.path }) : src.name === "bundled" ? t("source_bundled") : "" });
  $("#model-source").title = src.path || "";
}

/** /api/model's answer {kind, model, examples, compare} (or a bare model object) becomes S.info. */
export function setModel(m) {
  const info = m && m.model ? m.model : m;
  S.info = info || null;
  S.examples = (m && m.examples) || [];
  S.side = (m && m.side) || null;
  $("#examples").innerHTML = S.examples.map((ex, n) =>
    `<button type="button" class="example" data-n="${n}">${esc(ex)}</button>`).join("");
  const c = m && m.compare;
  if (c) { $("#compare-a").value = c.a || ""; $("#compare-b").value = c.b || ""; $("#compare-word").value = c.word || ""; }
}

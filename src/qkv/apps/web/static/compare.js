// One word, two contexts: the word's vector in two sentences compared stage by stage (api/compare).

import { S } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showErrorIn } from "./errors.js";

/** A stage as the page names it: "embed", "L0 in", "L3 out" (analysis.representations.stages) in the
 *  page's language; the label itself stays in data-stage. */
export function stageLabel(label) {
  const m = /^L(\d+) (in|out)$/.exec(label);
  return label === "embed" ? t("stage_embed") : m ? t("stage_" + m[2], { l: m[1] }) : label;
}

export function renderCompare() {
  const box = $("#compare-result"), c = S.compare;
  if (!c) { box.innerHTML = S.mode === "static" ? `<p class="caption">${t("compare_none")}</p>` : ""; return; }
  const cont = (tk) => tk.startsWith("\u2040");  // ⁀piece: a WordPiece continuation, joined to the token before
  const sent = (name, s) => `<div class="csent"><b>${name}</b> ${s.tokens.map((tk, n) =>
    `<span class="ctok${n === s.pos ? " hit" : ""}${cont(tk) ? " cont" : ""}">${esc(tk)}</span>`).join("")}</div>`;
  const where = { w: esc(c.word), pa: c.a.pos, pb: c.b.pos };  // the word's position in each: a confound when they differ
  let html = sent("A", c.a) + sent("B", c.b) + (c.same_position === false ? `<p id="compare-pos" class="note cpos-differ">${t("compare_pos_differ", where)}</p>`
    : `<p id="compare-pos" class="cpos">${t("compare_pos_same", where)}</p>`);
  const control = c.stages.some((st) => st.cosine_pos != null);  // the position-controlled cosine (null: no reference)
  html += `<div class="crows${control ? " two" : ""}"><div class="crow chead"><span></span><span>${t("compare_raw")}</span>` +
    (control ? `<span>${t("compare_centred")}</span>` : "") + "</div>";
  const cell = (x, attr) => {
    const none = x === null || x === undefined;  // a zero vector: the angle has no value
    const w = none ? "0" : (100 * Math.min(1, Math.abs(x))).toFixed(1);
    return `<span class="cval" ${attr}><span class="cbar${x < 0 ? " neg" : ""}" style="width:${w}%"></span><span class="num">${none ? "—" : fmt(x)}</span></span>`;
  };
  for (const st of c.stages) {
    html += `<div class="crow"><span class="clabel" title="${esc(st.name || "")}">${esc(stageLabel(st.label))}</span>` + cell(st.cosine, `data-stage="${esc(st.label)}" data-cosine="${st.cosine}"`) +
      (control ? cell(st.cosine_pos, `data-stage-pos="${esc(st.label)}" data-cosine-pos="${st.cosine_pos}"`) : "") + "</div>";
  }
  const pos = S.info && ["learned", "sinusoidal"].includes(S.info.pos);  // is a position vector added at "L0 in"?
  const ctl = c.control || {};
  html += `</div><p class="caption">${t(!control ? "compare_caption_raw" : pos ? "compare_caption" : "compare_caption_nopos", { ...where, n: ctl.sentences, ref: ctl.reference === "qkv corpus" ? t("compare_corpus") : esc(ctl.reference || "") })}` +
    (control ? "" : " " + t("compare_nocontrol", { why: esc(ctl.why || "") })) + "</p>";
  box.innerHTML = html;
  box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
}

export async function runCompare() {
  const body = { a: $("#compare-a").value, b: $("#compare-b").value, word: $("#compare-word").value };
  busy(true);
  try {
    S.compare = await api("api/compare", body);
    showErrorIn("#compare", "");
    renderCompare();
  } catch (e) {
    showErrorIn("#compare", e.message);  // inside the compare card, scrolled into view
  } finally {
    busy(false);
  }
}

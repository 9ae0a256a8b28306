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
  const pred = predictionHtml(c);
  box.innerHTML = pred ? `<div class="cmain">${html}</div><div class="cside">${pred}</div>` : html;
  box.classList.toggle("two", !!pred);
  box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
}

/** The sense groups typed in the form ("味道 看起来 / 股价 利润"): a list of word lists, or undefined (the corpus's). */
function typedSenses() {
  const box = $("#compare-senses"), text = box ? box.value.trim() : "";
  if (!text) return undefined;
  return text.split(/[/／|｜]/).map((g) => g.trim().split(/\s+/).filter(Boolean).map((w) => w.slice(0, 40)).slice(0, 8)).filter((g) => g.length).slice(0, 4);
}

/** What the model's own prediction says after the word, in each sentence (analysis.sense_prediction), and
 *  a note where the word is the first token of a sentence (a causal model sees nothing before it). */
function predictionHtml(c) {
  const pr = c.prediction;
  if (!pr) return "";
  let html = "";
  for (const [k, name] of [[0, "A"], [1, "B"]]) {
    if (pr.causal && pr.first && pr.first[k]) html += `<p class="note cfirst" data-side="${name}">${t("pl_cmp_first", { s: name, w: esc(c.word) })}</p>`;
  }
  if (!pr.available) return html;
  const gname = (g) => `<span class="tok">${esc(g.words.join(" ")) || "—"}</span>`;  // the model's own words
  html += `<div id="compare-pred" class="cpred"><h3>${t("pl_cmp_pred_title", { w: esc(c.word) })}</h3>`;
  for (const [side, name] of [["a", "A"], ["b", "B"]]) {
    const s = pr[side];
    const step = s.step ? t("pl_cmp_step", { tok: `<span class="tok">${esc(s.step.token)}</span>`, p: fmt(s.step.p) }) : "";
    const top = s.top.map((x) => `<span class="tok">${esc(x.token)}</span> <span class="num">${fmt(x.p)}</span>`).join(t("pl_comma"));
    let verdict = "";
    if (s.groups.length >= 2 && s.leans !== null && s.leans !== undefined) {
      const groups = s.groups.map((g, n) => `<span class="cgroup${n === s.leans ? " lean" : ""}" data-group="${n}" data-p="${g.p}">[${gname(g)}] <span class="num">${fmt(g.p)}</span></span>`).join(" · ");
      verdict = t("pl_cmp_leans", { groups, lean: gname(s.groups[s.leans]), r: s.ratio === null ? "∞" : s.ratio.toFixed(s.ratio < 10 ? 1 : 0) });
    }
    html += `<p class="cpred-side" data-side="${name}" data-leans="${s.leans ?? ""}"><b>${name}</b> ${step}${t("pl_cmp_top", { top })} ${verdict}</p>`;
  }
  const groups = pr.a.groups.length >= 2;
  html += `<p class="caption">${t(groups ? "pl_cmp_pred_caption" : "pl_cmp_pred_nogroups", { p: pr.step_p })}</p></div>`;
  return html;
}

export async function runCompare() {
  const body = { a: $("#compare-a").value, b: $("#compare-b").value, word: $("#compare-word").value };
  const senses = typedSenses();
  if (senses) body.senses = senses;
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

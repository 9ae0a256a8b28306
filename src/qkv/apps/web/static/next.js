// The next token: the top 10 at the chosen position, and the token that actually follows.

import { S, model, predictsNext } from "./state.js";
import { $, esc, fmt } from "./util.js";
import { t } from "./i18n.js";

/** A bar's length in % of the longest: none for a NaN (a diverged model), which has no length. */
const share = (p, pmax) => (Number.isFinite(p / pmax) ? (100 * p / pmax).toFixed(1) : "0");

export function renderNext() {
  if (!predictsNext() || !S.A.next_probs) return renderNoNext();
  if (S.tr && S.P.queries === "source") return renderNoNext("next_source");
  $(".next-card").classList.remove("encoder");
  const i = S.token, A = S.A, doc = S.doc, K = A.next_probs.length / S.T;
  const actual = S.tr ? doc.target.written_ids[i] : i + 1 < S.T ? doc.ids[i + 1] : null;
  const pmax = Math.max(A.next_probs[i * K], 1e-12);
  let html = `<p class="caption">${t("next_caption")}</p><div class="bars">`;
  for (let r = 0; r < K; r++) {
    const id = A.next_ids[i * K + r], p = A.next_probs[i * K + r], tok = doc.vocab[String(id)] ?? `#${id}`;
    const hit = id === actual;
    html += `<div class="bar${hit ? " actual" : ""}" data-rank="${r + 1}" data-id="${id}" data-prob="${p}">` +
      `<span class="rank">${r + 1}</span><span class="tok">${esc(tok)}</span>` +
      `<span class="track"><span class="fill" style="width:${share(p, pmax)}%"></span></span>` +
      `<span class="prob num">${fmt(p)}</span></div>`;
  }
  html += "</div>";
  if (actual !== null) {
    html += `<p id="next-actual" class="actual-line">${t(S.tr ? "next_actual_tr" : "next_actual", { tok: esc(S.tr ? doc.target.written[i] : doc.tokens[i + 1]),
      p: `<span class="num" data-field="actual_prob">${fmt(A.actual_prob[i])}</span>`,
      r: `<span class="num" data-field="actual_rank">${A.actual_rank[i]}</span>` })}</p>`;
  } else {
    html += `<p id="next-actual" class="actual-line">${t("next_last")}</p>`;
  }
  $("#next-title").textContent = S.tr ? t("next_title_tr", { tok: doc.target.tokens[i], i }) : t("next_title", { tok: doc.tokens[i], i });
  $("#next").innerHTML = html;
}

/** An encoder (or a translation model's encoder part): no next-token distribution, and the page says
 *  why instead of showing bars. */
function renderNoNext(why = "next_none") {
  const m = model();
  $(".next-card").classList.add("encoder");
  $("#next-title").textContent = t("next_none_title");
  $("#next").innerHTML = `<p id="next-none" class="why">${t(why, { d: m.d_model })}</p>`;
}

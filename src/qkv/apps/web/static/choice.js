// The controls that choose what is shown: the part (a translation model's attentions), layer and
// head selects, and the marks on the chosen token and head thumbnail.

import { S } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";

export const PARTS = ["cross", "decoder", "encoder"];

export function fillSelects() {
  const opts = (n) => Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join("");
  if ($("#layer").options.length !== S.L) $("#layer").innerHTML = opts(S.L);
  if ($("#head").options.length !== S.H) $("#head").innerHTML = opts(S.H);
  $("#part-box").hidden = !S.tr;
  if (S.tr) $("#part").innerHTML = PARTS.map((p) => `<option value="${p}">${esc(t("part_" + p))}</option>`).join("");
}

/** Selects, token buttons and head thumbnails show the current choice. */
export function markChosen() {
  $("#layer").value = String(S.layer);
  $("#head").value = String(S.head);
  if (S.tr) $("#part").value = S.part;
  for (const b of document.querySelectorAll("#tokens .token.chosen")) b.classList.remove("chosen");
  const b = document.querySelector(`#tokens .token[data-pos="${S.token}"]`);
  if (b) b.classList.add("chosen");
  for (const c of document.querySelectorAll("#heads canvas.on")) c.classList.remove("on");
  const c = document.querySelector(`#heads canvas[data-layer="${S.layer}"][data-head="${S.head}"]`);
  if (c) c.classList.add("on");
}

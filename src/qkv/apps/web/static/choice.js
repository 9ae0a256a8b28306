// The controls that choose what is shown: the part (a translation model's attentions), layer and
// head selects, and the marks on the chosen token and head thumbnail.

import { S } from "./state.js";
import { $, esc } from "./util.js";
import { t } from "./i18n.js";
import { revealThumb } from "./thumbs.js";

export const PARTS = ["cross", "decoder", "encoder"];
let marked = "";  // the head whose thumbnail was last marked: a new one is scrolled into the grid's view
// a phone stacks the cards: the heads card, far below the heatmap there, would leave the layer and
// head selects a screen away from what they change, so on a narrow screen they move into the heatmap card
const NARROW = "(max-width: 720px)";

/** The part, layer and head selects where the learner looks: above the heatmap on a phone (NARROW),
 *  in the heads card otherwise; kept there as the window changes width. */
export function placeSelects() {
  const box = document.querySelector(".selects"), q = window.matchMedia ? window.matchMedia(NARROW) : null;
  if (!box) return;
  const place = () => {
    if (q && q.matches) $("#heatmap-title").after(box); else $("#heads").before(box);
    box.dataset.place = q && q.matches ? "heatmap" : "heads";
  };
  place();
  if (q && q.addEventListener) q.addEventListener("change", place);
}

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
  if (c && `${S.layer}/${S.head}` !== marked) revealThumb(c);
  marked = `${S.layer}/${S.head}`;
}

// The tooltip that follows the mouse over a heatmap.

import { $ } from "./util.js";

/** Show `html` beside the pointer of event `e`; null hides the tooltip. */
export function showTip(e, html) {
  const tip = $("#tip");
  if (!html) { tip.hidden = true; return; }
  tip.innerHTML = html; tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
  tip.style.top = (e.clientY + 14) + "px";
}

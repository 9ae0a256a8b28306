// Generate: continue the text (api/generate), then analyse what was written. An encoder cannot
// generate and a translation model translates instead: the form is disabled and says why.

import { S, generates, translates } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";
import { api, busy } from "./api.js";
import { showErrorIn } from "./errors.js";
import { analyze, cancelTyping } from "./actions.js";

/** The number in input `id`, or null when empty and `optional`; throws a translated error. */
function readNumber(id, label, optional, integer) {
  const raw = $(id).value.trim();
  if (raw === "" && optional) return null;
  const x = Number(raw);
  if (raw === "" || !Number.isFinite(x) || (integer && !Number.isInteger(x))) throw new Error(t("bad_number", { name: label }));
  return x;
}

export async function runGenerate() {
  const t0 = performance.now();
  cancelTyping();  // the text typed is what is continued: no analysis of it is to come meanwhile
  let body;
  try {
    body = {
      text: $("#text").value,
      max_new_tokens: readNumber("#max-new", t("max_new"), false, true),
      temperature: readNumber("#temperature", t("temperature"), false, false),
      top_k: readNumber("#top-k", "top-k", true, true),
      top_p: readNumber("#top-p", "top-p", true, false),
      seed: readNumber("#seed", t("seed"), true, true),
    };
  } catch (e) { showErrorIn("#gen", e.message); return; }
  showErrorIn("#gen", "");
  busy(true);
  try {
    const res = await api("api/generate", body);
    S.added = res.added; S.stopped = res.stopped || null;
    renderAdded();
    $("#text").value = body.text + res.added;  // what the learner typed, then what the model wrote
    await analyze({ ids: res.ids }, t0, "text", false, true);  // the generated tokens themselves: re-tokenizing the text may differ
  } catch (e) {
    showErrorIn("#gen", e.message);
  } finally {
    busy(false);
  }
}

export function renderAdded() {
  const el = $("#gen-added");
  el.hidden = S.added === null;
  if (S.added !== null) el.textContent = t("gen_added", { text: S.added });
  const stop = $("#gen-stopped"), st = S.stopped;  // fewer tokens than asked: the model's end of text, or n_ctx
  stop.hidden = !st;
  if (st) stop.textContent = t(st.end ? "gen_end" : "gen_stopped", { made: st.made, asked: st.asked, n: st.n_ctx });
}

/** The form is off for a model that does not generate, with the reason: it translates, or it is an encoder. */
export function renderGenAvailable() {
  const off = !generates();
  $("#gen-none").hidden = !off;
  if (translates()) { $("#gen-none").dataset.i18n = "gen_translate"; $("#gen-none").innerHTML = t("gen_translate"); }
  if (off) for (const el of document.querySelectorAll("#gen input, #generate")) el.disabled = true;
}

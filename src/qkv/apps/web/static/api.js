// The server's JSON API (same origin, relative URLs), and the count of requests in flight. Every
// request says the page's language (Accept-Language), so that a refusal comes back in it.

import { S } from "./state.js";
import { t } from "./i18n.js";
import { noteNonFinite } from "./errors.js";

/** GET `path` (no body) or POST `body` as JSON; the answer, or an Error with the server's message
 *  (in the page's language: server.py says its errors in the request's Accept-Language). */
export async function api(path, body) {
  let res;
  const lang = { "Accept-Language": S.lang === "zh" ? "zh" : "en" };
  try {
    res = await fetch(path, body === undefined ? { headers: lang } : {
      method: "POST", headers: { "Content-Type": "application/json", ...lang }, body: JSON.stringify(body) });
  } catch (e) {
    throw new Error(t("net_error", { msg: e.message }));
  }
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok || data === null) throw new Error((data && data.error) || `HTTP ${res.status}`);
  if (!Array.isArray(data)) noteNonFinite(data);
  return data;
}

/** Count requests in flight; body[data-busy] is "1" while any is. */
export function busy(on) {
  S.pending = Math.max(0, (S.pending || 0) + (on ? 1 : -1));
  document.body.dataset.busy = S.pending ? "1" : "0";
}

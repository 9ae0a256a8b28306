// The server's JSON API (same origin, relative URLs), and the count of requests in flight.

import { S } from "./state.js";
import { t } from "./i18n.js";
import { noteNonFinite } from "./errors.js";

/** GET `path` (no body) or POST `body` as JSON; the answer, or an Error with the server's message. */
export async function api(path, body) {
  let res;
  try {
    res = await fetch(path, body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
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

// The server's JSON API (same origin, relative URLs), and the count of requests in flight. Every
// request says the page's language (Accept-Language), so that a refusal comes back in it.

import { S } from "./state.js";
import { t } from "./i18n.js";
import { noteNonFinite } from "./errors.js";
import { readBinary } from "./decode.js";

const BINARY = "application/octet-stream";  // /api/view answers one binary body when asked (decode.js reads it)

/** GET `path` (no body) or POST `body` as JSON; the answer, or an Error with the server's message
 *  (in the page's language: server.py says its errors in the request's Accept-Language). An answer
 *  may be binary (a view document: decode.js's readBinary); errors are always JSON. */
export async function api(path, body) {
  let res;
  const headers = { "Accept-Language": S.lang === "zh" ? "zh" : "en", Accept: `${BINARY}, application/json` };
  try {
    res = await fetch(path, body === undefined ? { headers } : {
      method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
  } catch (e) {
    throw new Error(t("net_error", { msg: e.message }));
  }
  let data = null;
  const bin = res.ok && (res.headers.get("Content-Type") || "").startsWith(BINARY);
  try { data = bin ? readBinary(await res.arrayBuffer()) : await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok || data === null) throw new Error((data && data.error) || `HTTP ${res.status}`);
  if (!Array.isArray(data)) noteNonFinite(data);
  return data;
}

/** Count requests in flight; body[data-busy] is "1" while any is. */
export function busy(on) {
  S.pending = Math.max(0, (S.pending || 0) + (on ? 1 : -1));
  document.body.dataset.busy = S.pending ? "1" : "0";
}

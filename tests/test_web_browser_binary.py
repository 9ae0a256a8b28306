"""The page reads /api/view's binary answer (qkv.analysis.packing.binary; static/decode.js readBinary) to
the same numbers as the JSON document: every array it decodes equals Python's bit for bit, and the
document still writes itself out as the JSON one (what an export embeds)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from browser_fixtures import browser, page, require_chromium  # noqa: F401
from browser_util import act, api, from_module, load_page

from qkv.apps.web.view import unpack_view

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.subprocess]

TEXT = "我 昨天 吃了 苹果"

# in the page: the view of `text` asked both ways, each decoded by decode.js; what differs (Object.is:
# NaN equals NaN, 0 and -0 differ), and the binary document written out as JSON
BOTH_WAYS = """async ([m, text]) => {
  const ask = (accept) => fetch("api/view", { method: "POST", body: JSON.stringify({ text }),
    headers: { "Content-Type": "application/json", Accept: accept } });
  const b = await ask("application/octet-stream"), j = await ask("application/json");
  const type = b.headers.get("Content-Type");
  const bin = m.readBinary(await b.arrayBuffer()), doc = await j.json();
  const differ = [];
  for (const name of Object.keys(doc.arrays)) {
    const x = m.decode(bin.arrays[name]), y = m.decode(doc.arrays[name]);
    if (x.constructor !== y.constructor || x.length !== y.length || x.some((v, i) => !Object.is(v, y[i])))
      differ.push(name);
  }
  return { type, differ, written: JSON.stringify(bin) };
}"""


def test_binary_and_json_views_decode_to_the_same_arrays(page, server):  # noqa: F811
    load_page(page, server + "?lang=en")
    got = from_module(page, "decode.js", f"(m, text) => ({BOTH_WAYS})([m, text])", TEXT)
    assert got["type"] == "application/octet-stream"
    assert got["differ"] == []
    assert json.loads(got["written"]) == api(server, "api/view", {"text": TEXT})  # base64 again, as JSON has it


def test_the_pages_arrays_are_pythons(page, server):  # noqa: F811
    load_page(page, server + "?lang=en")
    page.fill("#text", TEXT)
    act(page, lambda: page.click("#analyze"))
    want = unpack_view(api(server, "api/view", {"text": TEXT}))
    names = sorted(want)
    got = from_module(page, "state.js", "(m, names) => names.map((n) => Array.from(m.S.A[n]))", names)
    for name, values in zip(names, got):
        np.testing.assert_array_equal(np.asarray(values, dtype=want[name].dtype), want[name].ravel(), err_msg=name)
    assert page.errors == []

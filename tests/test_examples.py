"""The example notebooks (examples/*.ipynb): they are what scripts/make_examples.py writes, the zh and en
notebook of a topic run the same code, every notebook runs top to bottom in a real Jupyter kernel
(nbclient, ipykernel's python3, importing qkv from this checkout) with no failing cell, its qkv.show
output fetches nothing from the network, and the executed notebook's HTML (nbconvert) opens in Chromium
with the explorer inside it drawing the heatmap of the text, layer, head and token the notebook asked
for, with the tokens and weights qkv computes in Python.

Each notebook is executed once per test session and shared by its tests (a file under pytest's base
temporary folder, which the xdist workers share, guarded by a lock). Two cells are added around the
notebook for the run only: one before it that records every qkv.show call, and one after it that
prints, for each, the tokens and the attention row qkv computes for it in Python; both are removed again
before the notebook is checked or converted.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

import qkv  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))
CELL_TIMEOUT = 240  # seconds one cell may take (a notebook is meant to run in under 2 minutes on a laptop)
MARK = "# qkv-examples-test"

# Added before the notebook: every qkv.show call is recorded, and passed on to qkv.show with all its arguments
RECORD = f"""{MARK}
import qkv as _qkv
_shown = []
_show = _qkv.show
def _recording_show(model, tokenizer, text, layer=None, head=None, token=None, **kwargs):
    _shown.append((model, tokenizer, text, layer, head, token))
    return _show(model, tokenizer, text, layer=layer, head=head, token=token, **kwargs)
_qkv.show = _recording_show
"""
# Added after it: what qkv computes in Python for each shown view (its tokens, and the chosen row of A)
EXPECT = f"""{MARK}
import json as _json, torch as _torch
from qkv.analysis.inputs import read_text as _read_text
_views = []
for _m, _tok, _text, _L, _h, _t in _shown:
    _, _ids = _read_text(_tok, _text, _m.cfg.n_ctx)
    _, _tr = _m.run_with_trace(_torch.tensor([_ids]))
    _t = None if _t is None else _t % len(_ids)
    _row = None if None in (_L, _h, _t) else _tr["pattern", _L][0, _h, _t].tolist()
    _views.append({{"tokens": [_tok.display(i) for i in _ids], "layer": _L, "head": _h, "token": _t, "row": _row}})
print("QKV-VIEWS " + _json.dumps(_views))
"""


def _script():
    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "scripts" / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_env() -> dict:
    """The kernel's environment: qkv from this checkout, few threads (the test machine is shared)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    env.pop("QKV_LANG", None)  # each notebook sets its language itself
    return env


def execute(name: str) -> tuple[dict, float]:
    """Run examples/`name` in a fresh python3 kernel; (the executed notebook as JSON, seconds)."""
    from nbclient import NotebookClient

    nb = nbformat.read(EXAMPLES / name, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORD))
    nb.cells.append(nbformat.v4.new_code_cell(EXPECT))
    # The widgets' state is not saved into the notebook, as JupyterLab saves one by default: nbconvert then
    # shows qkv.show's text/html (the explorer in an iframe, offline). With the state saved it shows the
    # widget view instead, which needs @jupyter-widgets/html-manager from a CDN (nbconvert's template).
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(EXAMPLES)}},
    )
    start = time.perf_counter()
    client.execute(env=kernel_env(), cwd=str(EXAMPLES))
    return nb, time.perf_counter() - start


def executed(name: str, base: Path) -> tuple[nbformat.NotebookNode, list[dict], float]:
    """(the executed notebook without the added cells, the views qkv.show was asked for, seconds), run
    once per session: the first test to ask runs it, the others read it."""
    from filelock import FileLock

    folder = base / "examples-executed"
    folder.mkdir(exist_ok=True)
    done = folder / f"{name}.json"
    with FileLock(str(folder / f"{name}.lock")):
        if not done.exists():
            nb, seconds = execute(name)
            done.write_text(json.dumps({"nb": nb, "seconds": seconds}), encoding="utf-8")
    saved = json.loads(done.read_text(encoding="utf-8"))
    nb = nbformat.from_dict(saved["nb"])
    added = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(MARK)]
    printed = "".join(o.get("text", "") for o in added[-1].outputs if o.output_type == "stream")
    views = json.loads(printed.split("QKV-VIEWS ", 1)[1])
    nb.cells = [c for c in nb.cells if c not in added]
    return nb, views, saved["seconds"]


@pytest.fixture()
def run(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    base = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the folder all workers share
    return lambda name: executed(name, base)


def show_outputs(nb) -> list[dict]:
    """The outputs of the cells that call qkv.show."""
    return [o for c in nb.cells if c.cell_type == "code" and "qkv.show(" in c.source for o in c.outputs]


# a URL the browser would fetch: src=, a <link>'s href=, url(), an import, fetch() or XMLHttpRequest of http(s):// or //
FETCH = re.compile(
    r"""(?:\bsrc|\bdata|<link\b[^>]*\bhref)\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|url\(\s*["']?\s*(?:https?:)?//|\bimport\b[^;\n]{0,200}?["'](?:https?:)?//|\bfetch\(\s*["'](?:https?:)?//"""
    r"""|@import\s+["']?(?:https?:)?//""",
    re.I,
)


def fetches(text: str) -> list[str]:
    """The network fetches `text` would make as HTML or a script (also inside an iframe's srcdoc)."""
    return [m.group(0) for t in (text, html.unescape(text)) for m in FETCH.finditer(t)]


# ------------------------------------------------------------------ fast: the files themselves


def test_the_committed_notebooks_are_what_the_script_writes():
    written = _script().rendered()
    assert sorted(p.name for p in written) == NOTEBOOKS and len(NOTEBOOKS) == 12
    stale = [p.name for p, text in written.items() if p.read_text(encoding="utf-8") != text]
    assert stale == [], "run python scripts/make_examples.py"


def test_the_notebooks_show_is_qkvs():
    # every notebook ends on qkv.show and the run wraps it (RECORD): without it the notebooks cannot run
    assert callable(qkv.show) and "name" in qkv.show.__code__.co_varnames


def test_zh_and_en_run_the_same_code_and_carry_no_outputs():
    for zh in (n for n in NOTEBOOKS if n.endswith(".zh.ipynb")):
        a = nbformat.read(EXAMPLES / zh, as_version=4)
        b = nbformat.read(EXAMPLES / zh.replace(".zh.", ".en."), as_version=4)
        assert [c.cell_type for c in a.cells] == [c.cell_type for c in b.cells]
        for x, y in zip(a.cells, b.cells):
            if x.cell_type == "code":
                assert x.source.replace('set_lang("zh")', 'set_lang("en")') == y.source
                assert x.outputs == [] and x.execution_count is None
            else:  # the Chinese text is Chinese, the English one is not
                assert re.search(r"[\u4e00-\u9fff]{4}", x.source) and x.source != y.source
        codes = [c.source for c in a.cells if c.cell_type == "code"]
        assert sum('qkv.set_lang("zh")' in s for s in codes) == 1 and "qkv.show(" in codes[-1], zh


# ------------------------------------------------------------------ slow: each notebook in a real kernel


@pytest.mark.slow
@pytest.mark.subprocess  # the kernel is a process of its own
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_runs_top_to_bottom(run, name):
    nb, views, seconds = run(name)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code")
    assert len(views) == 1 and views[0]["tokens"], "each notebook ends on one qkv.show view"
    print(f"{name}: {seconds:.1f} s")


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_its_show_output_fetches_nothing_from_the_network(run, name):
    nb, _, _ = run(name)
    outputs = show_outputs(nb)
    pages = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert pages and all("qkv-data" in html.unescape(p) for p in pages), "the page, its data inside"
    texts = [json.dumps(o.get("data", {})) for o in outputs] + [json.dumps(nb.metadata.get("widgets", {}))]
    assert [f for t in texts for f in fetches(t)] == []


def test_the_fetch_check_sees_a_fetch():
    assert fetches('<script src="https://cdn.example/x.js"></script>')
    assert fetches('<iframe srcdoc="&lt;link rel=&quot;stylesheet&quot; href=&quot;//cdn.example/a.css&quot;&gt;">')
    assert fetches('import x from "https://esm.sh/x";') and fetches("fetch('http://a/b')")
    assert fetches("a { background: url(https://x/y.png) }")
    assert not fetches('<a href="https://qkv.dev">x</a> <script type="module">import { a } from "./a.js";</script>')


@pytest.mark.slow  # loads the bundled model and runs it four times
def test_notebook_03_states_the_leaks_the_library_measures():
    # its text quotes order_pair's numbers on the tour's pair (positions on and off, per layer): they must be the ones
    # the bundled model gives, as the tour shows them
    from qkv.analysis.no_positions import order_pair

    model, tokenizer = qkv.load()
    leak = order_pair(model, tokenizer, "我 打了 你 ，", "你 打了 我 ，")["leak"]
    quoted = [f"{x:.2g}" for x in [leak["on"][0]] + leak["off"][1:] + leak["on"][1:]]  # in the order the text says them
    assert f"{leak['off'][0]:.2g}" == "0"
    cells = dict(_script().topics())["03_positions"]
    texts = [t for c in cells if c[0] == "md" and "0.12" in c[1] for t in c[1:]]
    assert len(texts) == 2
    for text in texts:
        found = re.findall(r"\d\.\d+", text)
        assert found == quoted, (found, quoted)

"""The page's ES modules and the bundle the static export inlines (qkv.apps.web.bundle).

Every module of static/ keeps the restricted syntax the bundle can copy exactly, each is reached from
main.js and served, and the bundler refuses what it could not keep exact. That the bundle runs as the
modules do is shown in a browser (test_web_browser_bundle.py, and every test of the export).
"""

from __future__ import annotations

import re
from importlib import resources

import pytest

from qkv.apps.web import bundle
from qkv.apps.web.export import page_html
from qkv.apps.web.server import ASSETS, CSP, SCRIPTS

STATIC = resources.files("qkv.apps.web") / "static"
# static/'s scripts that are not modules of the page: qkv.show's front end (anywidget loads it, never the page)
NOT_THE_PAGE = ("widget.js",)
FILES = sorted(p.name for p in STATIC.iterdir() if p.name.endswith(".js") and p.name not in NOT_THE_PAGE)


@pytest.mark.parametrize("name", FILES)
def test_every_module_keeps_the_syntax_the_bundle_copies_exactly(name):
    mod = bundle.parse(name, bundle.read(name))
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", mod.body, flags=re.S)  # the comments left out
    assert "use strict" not in code  # a module is strict already
    globals_set = re.findall(r"\bwindow\.([\w$]+)\s*=(?!=)|\b(globalThis)\b|\b(self)\.", code)
    assert globals_set == ([("qkv", "", "")] if name == "measure.js" else []), name  # the test hook, only there
    if name != "measure.js":  # and nothing else reads it
        assert not re.search(r"\bqkv\.", code), name


def test_main_reaches_every_module_and_the_server_serves_exactly_them():
    assert sorted(SCRIPTS) == FILES  # no module left out, none served that the page does not load
    order = list(SCRIPTS)
    for mod in bundle.modules():
        for file, _ in mod.imports:
            assert order.index(file) < order.index(mod.name), (file, mod.name)  # imports first
    assert order[-1] == bundle.ENTRY
    assert all(ASSETS[name] == "text/javascript; charset=utf-8" for name in SCRIPTS)  # a module needs a JS type
    index = bundle.read("index.html")
    assert re.findall(r"<script[^>]*>", index) == [f'<script type="module" src="assets/{bundle.ENTRY}">']


def test_the_page_asks_what_the_model_can_do_never_its_architecture():
    for name in FILES:
        text = bundle.read(name)
        assert not re.search(r"\barch\b|seq2seq|\.source\b(?!\.)", text.replace("doc.source", "")), name
        assert "has_lm_head" not in text or name == "state.js", name  # read in one place: predictsNext()


def test_the_served_policy_still_forbids_every_script_from_elsewhere():
    assert "script-src 'self';" in CSP and "default-src 'none'" in CSP
    assert "unsafe-inline" not in CSP.split("script-src")[1].split(";")[0]


def modules(files: dict[str, str]):
    return lambda name: files[name] if name in files else (_ for _ in ()).throw(FileNotFoundError(name))


def test_the_order_is_the_browsers_depth_first_post_order():
    files = {
        "main.js": 'import { b } from "./b.js";\nimport "./a.js";\nimport { c } from "./c.js";\n',
        "a.js": 'import { c } from "./c.js";\nexport const a = c + 1;\n',
        "b.js": "export function b() {}\n",
        "c.js": "export const c = 1;\n",
    }
    assert bundle.order("main.js", modules(files)) == ("b.js", "c.js", "a.js", "main.js")


def test_the_bundle_gives_each_module_its_scope_and_its_imports():
    files = {
        "main.js": 'import { one as uno, two } from "./m.js";\nconst x = uno + two();\n',
        "m.js": "const x = 1;  // the same name in another module\nexport const one = x;\nexport function two() {}\n",
    }
    text = bundle.bundle("main.js", modules(files))
    assert "const { one: uno, two } = __module_m;" in text and "return { one, two };" in text
    assert text.index("__module_m = (") < text.index("__module_main = (")
    assert "export" not in text.replace("exported", "")


@pytest.mark.parametrize(
    "text, why",
    [
        ("export default 1;\n", "an export that is not"),
        ("export let x = 1;\n", "an export that is not"),
        ("export { x };\n", "an export that is not"),
        ('export * from "./b.js";\n', "an export that is not"),
        ('import * as b from "./b.js";\n', "an import that is not"),
        ('import b from "./b.js";\n', "an import that is not"),
        ('import { b } from "b.js";\n', "an import that is not"),
        ('import { b } from "../b.js";\n', "an import that is not"),
        ('  import { b } from "./b.js";\n', "an import that is not"),
        ('const m = import("./b.js");\n', "a dynamic import"),
        ("const u = import.meta.url;\n", "import.meta"),
        ("await 1;\n", "a top-level await"),
        ("const __module_x = 1;\n", "the bundle's own"),
        ("export function f() {}\nf = null;\n", "the exported f is assigned to"),
        ("export function f() {}\nf += 1;\n", "the exported f is assigned to"),
        ("  export const x = 1;\n", "an export that is not"),
    ],
)
def test_what_the_bundle_could_not_keep_exact_is_refused(text, why):
    with pytest.raises(bundle.BundleError, match=why):
        bundle.parse("a.js", text)


def test_cycles_missing_files_and_missing_names_are_named():
    cycle = {"main.js": 'import "./a.js";\n', "a.js": 'import "./b.js";\n', "b.js": 'import "./a.js";\n'}
    with pytest.raises(bundle.BundleError, match=r"cycle: a\.js -> b\.js -> a\.js"):
        bundle.order("main.js", modules(cycle))
    with pytest.raises(bundle.BundleError, match="main.js imports gone.js, which does not exist"):
        bundle.order("main.js", modules({"main.js": 'import "./gone.js";\n'}))
    names = {"main.js": 'import { nope } from "./a.js";\n', "a.js": "export const yes = 1;\n"}
    with pytest.raises(bundle.BundleError, match="main.js imports nope from a.js"):
        bundle.order("main.js", modules(names))


def test_the_export_holds_the_bundle_and_no_script_it_would_fetch():
    html = page_html({"kind": "none"})
    assert re.findall(r"<script[^>]*>", html) == [
        '<script id="qkv-data" type="application/json">',
        '<script type="module">',
    ]
    # no address under assets/ (a path inside a word, as src/qkv/assets/translate in the tour's text, is no fetch)
    assert not re.search(r"(?<![\w/])assets/", html) and bundle.bundle().replace("</script", "<\\/script") in html
    for name in SCRIPTS:
        assert f"// ---- {name}\n" in html


@pytest.mark.parametrize("name", FILES)
def test_every_name_a_module_imports_it_uses(name):
    mod = bundle.parse(name, bundle.read(name))
    code = re.sub(r"(?:^|(?<=\s))//[^\n]*|/\*.*?\*/", "", mod.body, flags=re.S).replace("...", " ")  # no comments
    for _, names in mod.imports:
        for _, local in names:
            used = r"\$\(" if local == "$" else rf"(?<![\w$.]){re.escape(local)}(?![\w$])"
            assert re.search(used, code), f"{name} imports {local} and never uses it"

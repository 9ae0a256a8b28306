"""The page's ES modules as one inline module script, for the static export (`qkv explain --html`).

The served page loads static/main.js as a module (`<script type="module">`) and the browser follows
its imports. A file opened from disk cannot: Chromium refuses module scripts from file://, and an
inline module cannot import another inline one. So the export inlines one module script holding
every module, each in its own function scope, every module after the ones it imports (the order in
which a browser evaluates them: depth first, imports in source order, a module after its imports):

    const __module_state = (() => { ...state.js, "export " removed...; return { S, model }; })();
    const __module_i18n = (() => {
      const { S } = __module_state;
      ...i18n.js...; return { I18N, t };
    })();

That is the same program only for the restricted syntax every module of the page keeps, which
`parse` checks (and a test runs it on every file of static/):

    import { a, b as c } from "./name.js";     named imports of sibling modules, at the top level
    import "./name.js";                         a module run for what it does (a panel registering)
    export const NAME = ... | export function NAME | export async function NAME | export class NAME

one binding per `export const`, at the start of a line; nothing else that starts with `import` or
`export`: no default, namespace or re-export, no `export let` or `var` (an importer would get a copy,
not the live binding), no dynamic import(), no import.meta, no top-level await, no import cycle. An
exported function is never assigned to, so the copy an importer gets is the binding's only value,
as with ES module linking. No npm tool is involved: this is the whole bundler.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

ENTRY = "main.js"  # the module static/index.html loads
PREFIX = "__module_"  # the bundle's names for the modules' scopes: no module may use it

_NAME = r"[A-Za-z_$][\w$]*"
_FILE = r"[a-z][a-z0-9_]*\.js"
IMPORT = re.compile(
    rf'^import[ \t]*(?:\{{(?P<names>[^{{}}]*)\}}[ \t]*from[ \t]*)?"\./(?P<file>{_FILE})";[ \t]*(?://.*)?$', re.M
)
EXPORT = re.compile(rf"^export (?P<kind>const|function|async function|class) (?P<name>{_NAME})", re.M)
_IMPORTED = re.compile(rf"^\s*(?P<name>{_NAME})(?:\s+as\s+(?P<local>{_NAME}))?\s*$")
_FORBIDDEN = [
    (re.compile(r"^[ \t]*import\b", re.M), 'an import that is not `import { ... } from "./name.js";`'),
    (re.compile(r"^[ \t]*export\b", re.M), "an export that is not `export const|function|async function|class NAME`"),
    (re.compile(r"\bimport\s*\("), "a dynamic import()"),
    (re.compile(r"\bimport\s*\.\s*meta\b"), "import.meta"),
    (re.compile(r"^await\b", re.M), "a top-level await"),
    (re.compile(rf"\b{PREFIX}"), f"a name starting with {PREFIX} (the bundle's own)"),
]


class BundleError(ValueError):
    """A module of the page outside the syntax the bundle can keep exact (the message names it)."""


@dataclass(frozen=True)
class Module:
    name: str  # its file name under static/: "state.js"
    imports: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (file, ((exported, local), ...)) in order
    exports: tuple[str, ...]  # the names it exports
    body: str  # its text without the import lines and the `export ` keywords


def read(name: str) -> str:
    """A file of static/ (the page's assets)."""
    return (resources.files("qkv.apps.web") / "static" / name).read_text(encoding="utf-8")


def parse(name: str, text: str) -> Module:
    """The module `name`'s imports, exports and body; BundleError where it leaves the restricted syntax."""
    imports = []
    for m in IMPORT.finditer(text):
        names = []
        for part in (m["names"] or "").split(","):
            if not part.strip():
                continue
            one = _IMPORTED.match(part)
            if not one:
                raise BundleError(f"{name}: cannot read the imported name {part.strip()!r}")
            names.append((one["name"], one["local"] or one["name"]))
        if m["names"] is not None and not names:
            raise BundleError(f"{name}: an import of no name from {m['file']}")
        imports.append((m["file"], tuple(names)))
    body = IMPORT.sub("", text)
    exports = [m["name"] for m in EXPORT.finditer(body)]
    functions = [m["name"] for m in EXPORT.finditer(body) if m["kind"] != "const"]
    body = EXPORT.sub(lambda m: f"{m['kind']} {m['name']}", body)
    for pattern, what in _FORBIDDEN:
        hit = pattern.search(body)
        if hit:
            line = body.count("\n", 0, hit.start()) + 1
            raise BundleError(f"{name}: {what} (line {line} without its imports)")
    if len(set(exports)) != len(exports):
        raise BundleError(f"{name}: a name exported twice")
    for fn in functions:  # an importer holds a copy of the binding: it must never change
        if re.search(rf"(?<![\w$.]){re.escape(fn)}\s*(?:[-+*/%&|^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=(?![=>])", body):
            raise BundleError(f"{name}: the exported {fn} is assigned to")
    return Module(name, tuple(imports), tuple(exports), body)


def modules(entry: str = ENTRY, source: Callable[[str], str] = read) -> list[Module]:
    """Every module `entry` reaches, each after the modules it imports (as a browser evaluates them);
    BundleError on a cycle, a missing file, or a name imported that its module does not export."""
    done: dict[str, Module] = {}
    path: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in path:
            raise BundleError("an import cycle: " + " -> ".join(path[path.index(name) :] + [name]))
        path.append(name)
        try:
            text = source(name)
        except FileNotFoundError:
            by = path[-2] if len(path) > 1 else "the page"
            raise BundleError(f"{by} imports {name}, which does not exist") from None
        mod = parse(name, text)
        for file, _names in mod.imports:
            visit(file)
        for file, names in mod.imports:
            missing = [n for n, _ in names if n not in done[file].exports]
            if missing:
                raise BundleError(f"{name} imports {', '.join(missing)} from {file}, which does not export it")
        path.pop()
        done[name] = mod

    visit(entry)
    return list(done.values())


def order(entry: str = ENTRY, source: Callable[[str], str] = read) -> tuple[str, ...]:
    """The file names of the modules `entry` reaches, each after those it imports."""
    return tuple(m.name for m in modules(entry, source))


def _scope(name: str) -> str:
    return PREFIX + re.sub(r"\W", "_", name.removesuffix(".js"))


def bundle(entry: str = ENTRY, source: Callable[[str], str] = read) -> str:
    """One module script with every module of the page, each in its own scope (see the docstring)."""
    out = [f"// qkv explorer: the modules of static/, bundled by qkv.apps.web.bundle from {entry}"]
    for mod in modules(entry, source):
        lines = [f"// ---- {mod.name}", f"const {_scope(mod.name)} = (() => {{"]
        for file, names in mod.imports:
            if names:
                pairs = ", ".join(n if n == local else f"{n}: {local}" for n, local in names)
                lines.append(f"const {{ {pairs} }} = {_scope(file)};")
        lines.append(mod.body.strip("\n"))
        lines.append(f"return {{ {', '.join(mod.exports)} }};" if mod.exports else "return {};")
        lines.append("})();")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n"

"""The package's layers: core ← analysis ← presentation ← apps, imports only downward, and no cycles;
inside core, its sub-packages in the order of CORE, each importing only itself and those before it.

Every module's imports are read with `ast` (those inside functions too), resolved to the modules
they name, and checked: a module may import its own layer and the layers below it, never one above,
and never the top-level package `qkv` (the facade that gathers the public names sits above every
layer). The import graph between modules must have no cycle. `python -m pytest tests/test_layers.py -q`
shows it; a failure names each offending import with its file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import qkv

ROOT = Path(qkv.__file__).parent
LAYERS = ("core", "analysis", "presentation", "lessons", "apps")
FACADE = len(LAYERS)  # qkv/__init__.py and qkv/__main__.py
# core's sub-packages, lowest first: what crosses qkv's edge (files, documents, refusals), where it runs,
# text, the declarations, seeing (taps, hooks, trace), the model classes, decoding, other people's models,
# training
CORE = ("io", "machine", "text", "spec", "see", "model", "decode", "hub", "train")


def module_name(path: Path) -> str:
    parts = ("qkv", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else FACADE


def sub_package(module: str) -> int:
    """The rank of a core module's sub-package in CORE (a module outside core: -1)."""
    parts = module.split(".")
    return CORE.index(parts[2]) if parts[:2] == ["qkv", "core"] and len(parts) > 2 else -1


def imports(module: str) -> list[tuple[str, int]]:
    """(imported qkv module, line) for every import statement of `module`, wherever it stands."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "qkv"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "qkv":
                continue
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{source}.{alias.name}"
                found.append((sub if sub in MODULES else source, node.lineno))
    return found


def test_every_module_is_in_a_layer():
    stray = [m for m in MODULES if layer(m) == FACADE and m not in ("qkv", "qkv.__main__")]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"
    for name in LAYERS:
        assert any(layer(m) == LAYERS.index(name) for m in MODULES), f"layer {name} is empty"


def test_imports_only_go_down():
    wrong = []
    for module in MODULES:
        for target, line in imports(module):
            if target not in MODULES:
                wrong.append(f"{MODULES[module]}:{line} imports {target}, which does not exist")
            elif target == "qkv" and module not in ("qkv", "qkv.__main__"):
                wrong.append(
                    f"{MODULES[module]}:{line} imports the top-level package qkv (import from its layer instead)"
                )
            elif layer(target) > layer(module):
                wrong.append(
                    f"{MODULES[module]}:{line} ({LAYERS[layer(module)]}) imports {target} "
                    f"({LAYERS[layer(target)] if layer(target) < FACADE else 'the facade'})"
                )
    assert not wrong, "\n".join(wrong)


def test_core_is_sub_packages_only():
    loose = sorted(p.name for p in (ROOT / "core").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules in core's root (put each in the sub-package of its concept): {loose}"
    folders = sorted(p.name for p in (ROOT / "core").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(CORE), f"core's sub-packages {folders} are not those of CORE {CORE}"


def test_core_sub_packages_import_only_those_before_them():
    wrong = []
    for module in MODULES:
        here = sub_package(module)
        if here < 0:
            continue
        for target, line in imports(module):
            if sub_package(target) > here:
                wrong.append(
                    f"{MODULES[module]}:{line} (core.{CORE[here]}) imports {target} (core.{CORE[sub_package(target)]})"
                )
    assert not wrong, "\n".join(wrong)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycles():
    graph = {m: {t for t, _ in imports(m) if t in MODULES and t != m} for m in MODULES}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_checks_can_fail():
    """The cycle finder finds a cycle, and the layer rule sees an upward import."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert (
        layer("qkv.core.see.trace")
        < layer("qkv.analysis.patch")
        < layer("qkv.presentation.derivation")
        < layer("qkv.apps.cli")
    )
    assert sub_package("qkv.core.io.files") < sub_package("qkv.core.see.trace") < sub_package("qkv.core.train.loop")
    assert sub_package("qkv.analysis.patch") == -1
    assert ("qkv.core.see.tap", 3) not in imports("qkv.core.see.trace") and any(
        t == "qkv.core.see.tap" for t, _ in imports("qkv.core.see.trace")
    )


@pytest.mark.parametrize("name", LAYERS)
def test_layer_folders_have_a_docstring_saying_what_they_hold(name):
    doc = ast.get_docstring(ast.parse((ROOT / name / "__init__.py").read_text(encoding="utf-8")))
    assert doc and name in doc.split("\n")[0].lower()

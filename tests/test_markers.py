"""The suite's tiers hold: `make test-fast` (-m "not slow and not browser and not subprocess") runs
no browser and starts no process of its own. Read from the test modules' source with ast."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
SPAWNS = {"run", "Popen", "check_output", "check_call", "call"}  # subprocess.<these>


def _marks(decorators) -> set[str]:
    """The pytest.mark.NAME names among decorators (or a pytestmark list)."""
    out = set()
    for d in decorators:
        node = d.func if isinstance(d, ast.Call) else d
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "pytest.mark":
            out.add(node.attr)
    return out


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            value = node.value
            return _marks(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    return set()


def _calls(fn: ast.FunctionDef) -> set[str]:
    """The names this function calls (f(...), mod.f(...): "f"), and its parameters (fixtures it takes)."""
    called = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "") for n in ast.walk(fn)
              if isinstance(n, ast.Call)}  # fmt: skip
    return called | {a.arg for a in fn.args.args}


def _direct(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in SPAWNS
        and ast.unparse(n.func.value) == "subprocess"
        for n in ast.walk(fn)
    )


def _spawners() -> set[str]:
    """Every helper and fixture of the test folder that starts a process, directly or through another."""
    functions = [
        fn
        for path in sorted(TESTS.glob("*.py"))
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("test_")
    ]
    found = {fn.name for fn in functions if _direct(fn)}
    while True:  # what calls a spawner (or takes a spawning fixture) spawns too
        more = {fn.name for fn in functions if fn.name not in found and _calls(fn) & found}
        if not more:
            return found
        found |= more


def _spawns(fn: ast.FunctionDef, spawners: set[str] = frozenset()) -> bool:
    return _direct(fn) or bool(_calls(fn) & spawners)


def _modules():
    for path in sorted(TESTS.glob("test_*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_every_module_that_drives_chromium_is_marked_browser():
    for path, tree in _modules():
        imports = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if "browser_fixtures" in imports:
            assert "browser" in _module_marks(tree), f"{path.name} drives Chromium: pytestmark = pytest.mark.browser"


def test_every_test_that_starts_a_process_is_marked_subprocess():
    """Directly (subprocess.run, Popen), through a helper (start_server) or a fixture (server)."""
    spawners, unmarked = _spawners(), []
    assert {"start_server", "server", "bundled_export"} <= spawners  # the walk finds them
    for path, tree in _modules():
        module = _module_marks(tree)
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_") and _spawns(fn, spawners):
                if "subprocess" not in module | _marks(fn.decorator_list):
                    unmarked.append(f"{path.name}::{fn.name}")
    assert not unmarked, f"start a process but are not marked subprocess: {unmarked}"


def test_the_checks_above_can_fail():
    tree = ast.parse("import subprocess\ndef test_x():\n    subprocess.run(['true'])\n")
    fn = tree.body[1]
    assert _spawns(fn) and not _marks(fn.decorator_list) and not _module_marks(tree)
    marked = ast.parse("import pytest\npytestmark = [pytest.mark.slow, pytest.mark.subprocess]\n")
    assert _module_marks(marked) == {"slow", "subprocess"}


@pytest.mark.parametrize("name", ["browser", "slow", "subprocess"])
def test_the_markers_are_declared(name, pytestconfig):
    assert any(line.startswith(f"{name}:") for line in pytestconfig.getini("markers"))

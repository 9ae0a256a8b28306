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


def _spawns(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in SPAWNS
        and ast.unparse(n.func.value) == "subprocess"
        for n in ast.walk(fn)
    )


def _modules():
    for path in sorted(TESTS.glob("test_*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_every_module_that_drives_chromium_is_marked_browser():
    for path, tree in _modules():
        imports = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if "browser_fixtures" in imports:
            assert "browser" in _module_marks(tree), f"{path.name} drives Chromium: pytestmark = pytest.mark.browser"


def test_every_test_that_starts_a_process_is_marked_subprocess():
    unmarked = []
    for path, tree in _modules():
        module = _module_marks(tree)
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_") and _spawns(fn):
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

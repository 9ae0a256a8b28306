"""The package's functions stay short enough to read at once: none is over MAX_LINES lines unless the
comment line right above it (or above its decorators) starts with "# long:" and says why, and at most
MAX_LONG functions have such a reason. `python -m pytest tests/test_code_shape.py -q` names each one."""

from __future__ import annotations

import ast
from pathlib import Path

import qkv

ROOT = Path(qkv.__file__).parent
MAX_LINES = 60
MAX_LONG = 5


def long_functions(source: str) -> list[tuple[str, int, int, bool]]:
    """(name, line, length, has a written reason) of every function of `source` over MAX_LINES lines."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_LINES:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                above = lines[first - 2].strip() if first >= 2 else ""
                out.append((node.name, node.lineno, length, above.startswith("# long:")))
    return out


def test_no_function_is_long_without_a_reason():
    found = {path: long_functions(path.read_text(encoding="utf-8")) for path in sorted(ROOT.rglob("*.py"))}
    unexplained = [
        f"{p.relative_to(ROOT)}:{line} {name} ({n} lines)"
        for p, fs in found.items()
        for name, line, n, why in fs
        if not why
    ]
    assert unexplained == [], "functions over 60 lines without a '# long:' reason above them"
    explained = [name for fs in found.values() for name, *_, why in fs if why]
    assert len(explained) <= MAX_LONG, f"more than {MAX_LONG} long functions, even with reasons: {explained}"


def test_the_check_sees_a_long_function_and_its_reason():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    bare = f"def f():\n{body}"
    assert long_functions(bare) == [("f", 1, MAX_LINES + 1, False)]
    assert long_functions(f"# long: one table, read top to bottom\n@staticmethod\n{bare}")[0][3]
    assert long_functions("def g():\n    return 1\n") == []

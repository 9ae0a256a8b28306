"""The message catalogue: both languages say the same things, with the same fields, under the same keys,
and every key the source asks for exists, with the fields the source fills in."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import string
from pathlib import Path

import pytest

from qkv.presentation import i18n
from qkv.presentation.i18n import check_lang, t


def areas(lang: str) -> set[str]:
    """Every area of a language's catalogue: modules under messages/<lang>/ (dotted for subfolders), and
    "lessons.<name>" for every folder of qkv/lessons that holds a <lang>.py."""
    root = importlib.import_module(f"qkv.presentation.messages.{lang}")
    prefix = root.__name__ + "."  # the full name, so that walk_packages can import and enter sub-folders
    found = {info.name.removeprefix(prefix) for info in pkgutil.walk_packages(root.__path__, prefix) if not info.ispkg}
    lessons = SRC / "lessons"
    return found | {
        f"lessons.{folder.name}" for folder in sorted(lessons.iterdir()) if (folder / f"{lang}.py").is_file()
    }


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_have_the_same_areas_keys_and_fields():
    assert areas("en") == areas("zh")
    assert {"explain", "attend", "figures.hull", "figures.attention"} <= areas("en")  # sub-folders are read too
    for area in sorted(areas("en")):
        en, zh = i18n.catalogue("en", area), i18n.catalogue("zh", area)
        assert en.keys() == zh.keys(), (area, en.keys() ^ zh.keys())
        for key in en:
            assert fields(en[key]) == fields(zh[key]), f"{area}.{key}"
            assert en[key].strip() and zh[key].strip(), f"{area}.{key} is empty"


def test_lookup_fills_fields_and_names_what_is_missing():
    assert t("attend.title", "en", dk="2") == "Attention for one query, step by step (d_k = 2)"
    assert "d_k = 2" in t("attend.title", "zh", dk="2") and t("attend.title", "zh", dk="2") != t(
        "attend.title", "en", dk="2"
    )
    assert t("attend.exp", "en") == i18n.catalogue("en", "attend")["exp"]  # no fields: the text as it is, braces kept
    with pytest.raises(KeyError, match="attend.nothing"):
        t("attend.nothing", "en")
    with pytest.raises(KeyError, match="nowhere"):
        t("nowhere.title", "zh")
    with pytest.raises(ValueError, match="fr"):
        check_lang("fr")
    with pytest.raises(ValueError, match="fr"):
        t("attend.title", "fr", dk="2")


def test_a_translator_fixes_language_and_area():
    say = i18n.translator("zh", "explain")
    assert say("step4") == t("explain.step4", "zh")


# ------------------------------------------------------------------ every key used in the source exists

SRC = Path(__file__).resolve().parents[1] / "src" / "qkv"


def _strings(node) -> list[str] | None:
    """The literal strings an argument can be: "a", or "a" if c else "b"; None when not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        a, b = _strings(node.body), _strings(node.orelse)
        return a + b if a is not None and b is not None else None
    return None


def used_keys(source: str) -> list[tuple[str, set[str] | None, int]]:
    """(key, keyword names or None when **fields are passed, line) for each literal key the source looks up:
    t("area.name", lang, ...) and say("name", ...) after say = translator(lang, "area"), with t and
    translator imported from the catalogue (qkv.presentation.i18n)."""
    tree = ast.parse(source)
    imported = {
        a.asname or a.name: a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "i18n"
        for a in node.names
    }

    def area(call) -> str | None:  # translator(lang, "area") -> "area"
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and imported.get(call.func.id) == "translator"
            and len(call.args) == 2
            and isinstance(call.args[1], ast.Constant)
        ):
            return call.args[1].value
        return None

    found = set()
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)))]:
        says = {
            target.id: area(node.value)
            for node in ast.walk(scope)
            if isinstance(node, ast.Assign) and area(node.value)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for call in (n for n in ast.walk(scope) if isinstance(n, ast.Call) and n.args):
            func = call.func
            if isinstance(func, ast.Name) and imported.get(func.id) == "t":
                prefix = ""
            elif isinstance(func, ast.Name) and func.id in says:
                prefix = says[func.id] + "."
            elif area(func):
                prefix = area(func) + "."
            else:
                continue
            names = {k.arg for k in call.keywords}
            for name in _strings(call.args[0]) or []:
                found.add((prefix + name, None if None in names else frozenset(names), call.lineno))
    return sorted(found, key=lambda x: (x[2], x[0]))


def missing(source: str) -> list[str]:
    """What is wrong with the keys a source uses: unknown keys, and fields given that differ from the message's."""
    problems = []
    for key, given, line in used_keys(source):
        area, _, name = key.rpartition(".")
        for lang in ("en", "zh"):
            try:
                text = i18n.catalogue(lang, area)[name] if area else {}[name]
            except KeyError:
                problems.append(f"line {line}: no message {key!r} in {lang}")
                continue
            if given and set(given) != fields(text):  # a call without fields gets the text as it is
                problems.append(
                    f"line {line}: {key} is given {sorted(given)} but takes {sorted(fields(text))} in {lang}"
                )
    return problems


@pytest.mark.slow
def test_every_key_the_source_uses_exists_with_its_fields():
    files = sorted(SRC.rglob("*.py"))
    uses = {path: used_keys(path.read_text(encoding="utf-8")) for path in files}
    problems = [f"{path.relative_to(SRC)}, {p}" for path in files for p in missing(path.read_text(encoding="utf-8"))]
    assert problems == []
    keys = {key for found in uses.values() for key, _, _ in found}
    for area in (
        "explain",
        "attend",
        "figures.attention",
        "figures.position",
        "figures.embedding",
        "figures.training",
        "figures.hull",
    ):  # the scan sees every area these modules use
        assert any(k.startswith(area + ".") for k in keys), area
    assert "figures.position.fast" in keys and "figures.position.slow" in keys  # both branches of an if-else


def test_the_key_scan_catches_a_wrong_key_or_field():
    source = """
from qkv.presentation.i18n import t, translator
def draw(lang):
    say = translator(lang, "figures.attention")
    say("head", head=1); say("nothing"); say("layer", level=2)
    t("title_head", lang); t("figures.hull.z", lang); t("attend.stable", lang, **{"m": 1})
"""
    assert [key for key, _, _ in used_keys(source)] == [
        "figures.attention.head",
        "figures.attention.layer",
        "figures.attention.nothing",
        "attend.stable",
        "figures.hull.z",
        "title_head",
    ]
    assert missing(source) == [
        "line 5: figures.attention.layer is given ['level'] but takes ['layer'] in en",
        "line 5: figures.attention.layer is given ['level'] but takes ['layer'] in zh",
        "line 5: no message 'figures.attention.nothing' in en",
        "line 5: no message 'figures.attention.nothing' in zh",
        "line 6: no message 'title_head' in en",
        "line 6: no message 'title_head' in zh",
    ]


# ------------------------------------------------------------------ the lessons name every key in full


def built_keys(source: str) -> list[int]:
    """The lines where a key is built rather than written out: say(...), t(...) or translator(lang, ...)
    given a key or an area that is not a literal string (f"label_{c}", "group_" + g, a variable)."""
    lines = []
    for call in ast.walk(ast.parse(source)):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        if call.func.id in ("say", "t") and call.args:
            key = call.args[0]
        elif call.func.id == "translator" and len(call.args) == 2:
            key = call.args[1]
        else:
            continue
        if _strings(key) is None:
            lines.append(call.lineno)
    return sorted(lines)


def test_every_lesson_message_is_asked_for_by_its_literal_key():
    """A lesson's words and its messages are joined by names a reader can search for: every key of every
    "lessons.*" area is found by the scan above, written out where it is said, and no lesson module builds
    a key or an area from parts."""
    from test_errors_catalogue import refusal_keys  # phrase("lessons.x.y") and TextError.of("lessons.x.y")

    sources = [path.read_text(encoding="utf-8") for path in SRC.rglob("*.py")]
    used = {key for source in sources for key, _, _ in [*used_keys(source), *refusal_keys(source)]}
    lesson_areas = sorted(a for a in areas("en") if a.startswith("lessons."))
    assert {"lessons.heads", "lessons.transform", "lessons.align", "lessons.real_apple", "lessons.common"} <= set(
        lesson_areas
    )
    unused = [f"{area}.{k}" for area in lesson_areas for k in i18n.catalogue("en", area) if f"{area}.{k}" not in used]
    assert unused == []
    built = {
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted((SRC / "lessons").rglob("*.py"))
        for line in built_keys(path.read_text(encoding="utf-8"))
    }
    assert built == set()


def test_the_built_key_check_catches_a_key_made_of_parts():
    source = """
from qkv.presentation.i18n import t, translator
AREA = "lessons.heads"
def text(n, lang, c, key):
    say = translator(lang, "lessons.heads")
    say("label_cue"); say("a" if n else "b"); t("lessons.heads.title", lang)
    say(f"label_{c}"); say("group_" + c); say(key); t(f"lessons.{c}.title", lang); translator(lang, AREA)
"""
    assert built_keys(source) == [7, 7, 7, 7, 7]

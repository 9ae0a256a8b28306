"""The demo's report folder and the lesson command's listing."""

from __future__ import annotations

import json

import pytest

from qkv import lessons
from qkv.apps.cli import main
from qkv.core.hub.bundled import default_ckpt
from qkv.lessons.common.report import write_report
from qkv.lessons.common.result import LessonResult
from qkv.presentation.i18n import t


def test_report_has_every_lesson_its_numbers_and_figures(tmp_path):
    fig = tmp_path / "a.png"
    fig.write_bytes(b"\x89PNG fake")
    results = [
        LessonResult("convex", "凸组合 <b>", "z = (1, 1)", "inside: 1/1", {"distance": 0.0}, [fig], "zh"),
        LessonResult("order", "Order", "text", "accuracy 0.98", {"acc": 0.98}, [], "en"),
    ]
    index = write_report(results, tmp_path, "zh", model="bundled", seconds={"convex": 1.5})
    page = index.read_text(encoding="utf-8")
    assert '<section id="convex">' in page and '<section id="order">' in page
    assert "凸组合 &lt;b&gt;" in page and '<img src="a.png"' in page and "inside: 1/1" in page
    assert "http" not in page  # nothing to fetch: the page works offline
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Order" in md and "![a](a.png)" in md
    # the headings come from the catalogue, in the report's language
    for lang in ("zh", "en"):
        page = write_report(results, tmp_path / lang, lang).read_text(encoding="utf-8")
        md = (tmp_path / lang / "report.md").read_text(encoding="utf-8")
        title, intro = t("lessons.common.report_title", lang), t("lessons.common.report_intro", lang)
        assert f"<h1>{title}</h1>" in page and intro in page and md.startswith(f"# {title}\n") and intro in md
    assert t("lessons.common.report_title", "zh") != t("lessons.common.report_title", "en")
    with pytest.raises(ValueError, match="fr"):
        write_report(results, tmp_path / "fr", "fr")
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data["seconds"] == {"convex": 1.5} and data["lessons"][1]["numbers"] == {"acc": 0.98}


def test_bundled_model_ships_and_loads():
    ckpt = default_ckpt()
    size = sum(p.stat().st_size for p in ckpt.iterdir())
    assert size <= 8_000_000  # the limit for the bundled GPT
    from qkv import load

    model, tokenizer = load(ckpt)
    ids = tokenizer.encode("我 投资了 苹果")  # words of the corpus, no whitespace tokens
    assert tokenizer.kind == "word" and [tokenizer.display(i) for i in ids] == ["我", "投资了", "苹果"]


def test_lesson_list_and_unknown_lesson(capsys):
    assert main(["lesson", "--list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.strip().splitlines()] == list(lessons.ALL_LESSONS)
    assert lessons.titles("zh")["order"] in main_output(capsys, ["lesson", "--list", "--lang", "zh"])
    assert main(["lesson", "nope"]) == 1
    assert "unknown lesson" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown lesson"):
        lessons.run("nope")
    with pytest.raises(ValueError, match="unknown lesson"):
        lessons.title("nope")


def main_output(capsys, argv) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [["demo", "--quick", "--report", "{file}"], ["lesson", "convex", "--out", "{file}"]])
def test_a_file_where_a_folder_goes_is_a_one_line_error_and_stays(tmp_path, capsys, argv):
    """Checked before anything runs (the demo would otherwise train for minutes first); the file is kept."""
    file = tmp_path / "taken.png"
    file.write_bytes(b"mine")
    assert main([a.format(file=file) for a in argv]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("qkv: error:") and "is a file, not a folder" in err and "\n" not in err
    assert file.read_bytes() == b"mine"

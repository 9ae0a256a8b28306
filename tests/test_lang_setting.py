"""One language for all of qkv (issue 32, "English where a Chinese reader reads"): qkv.set_lang / QKV_LANG
is read by every display (notebook reprs, figures, lessons, the training loop's progress) and every
command, a lang= argument or --lang still wins; and where a Chinese reader met English — the check
report of `qkv trace --check`, the activations' names, the hull figure's PC axes, `qkv demo`'s lesson
lines, `--html`'s "wrote" line, the page's header and layer/head labels — they now read Chinese."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from cli_util import run_ok

import qkv
from qkv.core.io.refusal import phrase, said
from qkv.presentation import hook_words, i18n

HAN = re.compile(r"[\u4e00-\u9fff]")
SENTENCE = "我 投资了 苹果 ，"
STATIC = Path(qkv.__file__).resolve().parent / "apps" / "web" / "static"


@pytest.fixture(autouse=True)
def no_language_chosen(monkeypatch):
    """Each test starts with no language chosen (QKV_LANG unset, set_lang cleared) and leaves none."""
    monkeypatch.delenv("QKV_LANG", raising=False)
    qkv.set_lang(None)
    yield
    qkv.set_lang(None)


@pytest.fixture(scope="module")
def bundled():
    from qkv.core.hub.bundled import default_ckpt

    return qkv.load(default_ckpt())


def test_set_lang_then_qkv_lang_then_english_and_an_explicit_lang_wins(monkeypatch):
    assert qkv.get_lang() == "en"
    monkeypatch.setenv("QKV_LANG", "zh_CN.UTF-8")
    assert qkv.get_lang() == "zh" and i18n.lang_of(None) == "zh" and i18n.lang_of("en") == "en"
    qkv.set_lang("en")  # the program's own choice beats the environment's
    assert qkv.get_lang() == "en"
    qkv.set_lang(None)
    assert qkv.get_lang() == "zh"
    with pytest.raises(ValueError, match="unknown language"):
        qkv.set_lang("fr")
    with i18n.speaking("en"):  # a command's --lang, for the time it runs
        assert qkv.get_lang() == "en"
    assert qkv.get_lang() == "zh"


def test_the_cli_reads_its_language_from_the_same_place():
    from qkv.apps.cli import lang as language

    assert language.from_env is i18n.from_env and language.ENV == i18n.ENV == "QKV_LANG"
    assert language.decide(None, {}) == "en" and language.decide(None, {"QKV_LANG": "zh"}) == "zh"
    qkv.set_lang("zh")
    assert language.decide(None, {}) == "zh" and language.decide("en", {}) == "en"


def test_the_notebook_displays_follow_set_lang():
    """attend's Derivation and explain's Explanation show themselves (Jupyter's _repr_markdown_) in the
    language chosen when they are shown; lang= given when they were made still wins."""
    d = qkv.attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4")
    pinned = qkv.attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4", lang="en")
    assert not HAN.search(d._repr_markdown_())
    qkv.set_lang("zh")
    assert HAN.search(d._repr_markdown_()) and "逐步" in d.to_text()
    assert not HAN.search(pinned._repr_markdown_()) and not HAN.search(d.to_text("en"))


def test_an_explanation_follows_qkv_lang(monkeypatch, bundled):
    model, tokenizer = bundled
    ex = qkv.explain(model, tokenizer, SENTENCE, layer=0, head=0)
    english = ex._repr_markdown_()
    monkeypatch.setenv("QKV_LANG", "zh")
    chinese = ex._repr_markdown_()
    assert "Layer" in english or "layer" in english
    assert len(HAN.findall(chinese)) > 3 * len(HAN.findall(english)) and ex.to_json()["lang"] == "zh"


def test_a_check_report_in_a_notebook_follows_set_lang(bundled):
    """qkv.check(trace) shown in a notebook: the report in the language qkv speaks; str() stays English."""
    import torch

    model, tokenizer = bundled
    _, trace = model.run_with_trace(torch.tensor([tokenizer.encode(SENTENCE)]))
    report = qkv.check(trace)
    assert "checks pass" in report._repr_html_()
    qkv.set_lang("zh")
    shown = report._repr_html_()
    assert "项检查通过" in shown and "注意力的输出 attn_out" in shown and "checks pass" in str(report)


def test_what_core_says_while_it_works_follows_set_lang():
    """The training loop's progress words (core writes them with `said`) in the chosen language."""
    english = said(phrase("train.progress", loss="1.000", val="", rate="10"))
    qkv.set_lang("zh")
    chinese = said(phrase("train.progress", loss="1.000", val="", rate="10"))
    assert not HAN.search(english) and HAN.search(chinese)


def test_the_check_report_names_each_stream_in_chinese(capsys, tmp_path):
    """`qkv trace --check --lang zh`: every line holds Chinese; each name of the residual stream has its
    words before it; the norms' formulas say their words too; no English sentence is left."""
    _, err = run_ok(capsys, ["trace", SENTENCE, "--check", "--lang", "zh", "--out", str(tmp_path / "t.json")])
    lines = err.strip().splitlines()
    assert len(lines) > 40 and all(HAN.search(line) for line in lines), lines
    for name in ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out"):
        word = hook_words.hook_word(name, "zh")
        found = [line for line in lines if re.search(rf"(?<!\w){name}(?!\w)", line)]
        assert found and all(f"{word} {name}" in line for line in found), (name, found[:2])
    assert all("均值 mean" in line for line in lines if "mean" in line)
    english = re.compile(r"[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}")  # three English words in a row
    assert [line for line in lines if english.search(line)] == []


def test_a_command_follows_set_lang_in_process(capsys, tmp_path):
    """A notebook that runs the command line after qkv.set_lang("zh"): its report and its "wrote" lines in
    Chinese, --html's included (the page written then opens in Chinese too)."""
    qkv.set_lang("zh")
    _, err = run_ok(capsys, ["trace", SENTENCE, "--check", "--out", str(tmp_path / "t.json")])
    assert err.splitlines()[0].endswith("评估模式") and err.strip().endswith(f"已写入 {tmp_path / 't.json'}")
    out, _ = run_ok(capsys, ["explain", SENTENCE, "--html", str(tmp_path / "p.html")])
    assert out.startswith(f"已写入 {tmp_path / 'p.html'}")
    assert qkv.get_lang() == "zh"  # the command gave back the language it was run in


def test_each_hook_name_has_its_words_in_one_place():
    for name in hook_words.STREAM + ("embed", "pos_embed", "q", "k", "v", "pattern", "z", "attn_scores", "result"):
        assert HAN.search(hook_words.hook_word(name, "zh")) and hook_words.hook_word(name, "en"), name
    assert hook_words.named("blocks.3.hook_attn_out", "zh") == "注意力的输出 blocks.3.hook_attn_out"
    assert hook_words.named("attn_out", "en") == "attn_out"  # English keeps the name a TransformerLens user knows
    qkv.set_lang("zh")
    assert hook_words.name_hooks("resid_mid = resid_pre + attn_out") == (
        "注意力之后的残差流 resid_mid = 进入本块的残差流 resid_pre + 注意力的输出 attn_out"
    )


def test_the_page_gets_the_same_words(bundled):
    """/api/model's document carries the catalogue's words for the hook names, in both languages."""
    from qkv.apps.web.model_doc import model_doc

    doc = model_doc(*bundled)
    assert doc["hook_words"]["zh"]["resid_pre"] == hook_words.hook_word("resid_pre", "zh")
    assert doc["hook_words"]["en"]["attn_out"] == hook_words.hook_word("attn_out", "en")


def test_the_patching_table_names_its_site_in_chinese(capsys):
    """`qkv patch --lang zh`: the title says the site's words beside its name."""
    patch = ["patch", "--clean", "我 昨天 吃了 苹果 ，", "--corrupt", "我 上周 投资了 苹果 ，"]
    out, _ = run_ok(capsys, [*patch, "--answer", "味道", "--wrong", "股价", "--lang", "zh"])
    assert "在 进入本块的残差流 resid_pre 上做激活修补" in out.splitlines()[0]


def test_the_hull_figure_names_its_axes_in_chinese(tmp_path, monkeypatch):
    from test_figures import capture

    from qkv.presentation import plot_hull

    seen = capture(monkeypatch, plot_hull)
    values, third = np.eye(3), np.full(3, 1 / 3)
    plot_hull.hull_figure(values, third, third, tmp_path / "en.png", lang="en")
    qkv.set_lang("zh")  # and without lang=: the language qkv speaks
    plot_hull.hull_figure(values, third, third, tmp_path / "zh.png")
    en, zh = (fig.axes[0] for fig in seen)
    assert (en.get_xlabel(), en.get_ylabel()) == ("PC1", "PC2")
    assert zh.get_xlabel() == "第一主成分 PC1" and zh.get_ylabel() == "第二主成分 PC2"


def test_demo_says_each_lesson_in_chinese():
    from qkv.apps.demo import lesson_line

    zh, en = lesson_line("convex", 2.43, "……", "zh"), lesson_line("convex", 2.43, "...", "en")
    assert zh == "  课程 convex      用时   2.4 秒：……" and en == "  convex        2.4 s  ..."


def page_table(lang: str) -> str:
    """The text of one language's table in the page's i18n.js."""
    source = (STATIC / "i18n.js").read_text(encoding="utf-8")
    start = source.index(f"\n  {lang}: {{")
    return source[start : source.index("\n  },", start)]


def test_the_page_header_and_labels_say_their_symbols_in_chinese():
    zh, en = page_table("zh"), page_table("en")
    for key in ("model_line", "model_line_tr"):
        line = re.search(rf'\n\s+{key}: "([^"]*)"', zh).group(1)
        for symbol in ("d_model", "d_head", "n_ctx"):
            assert re.search(rf"[\u4e00-\u9fff] {symbol} \{{", line), (key, symbol, line)
    assert 'tab_layer: "层 {l}"' in zh and 'tab_head: "头 {h}"' in zh and 'ax_corner: "层＼头"' in zh
    assert 'tab_layer: "L{l}"' in en and 'ax_head: "h{h}"' in en  # English as before
    for source in ("thumbs.js", "attribution.js", "patch.js", "ablate.js"):
        text = (STATIC / source).read_text(encoding="utf-8")
        assert not re.search(r">[LHh]\$\{", text), source  # no "L${l}" / "H${j}" written past the catalogue

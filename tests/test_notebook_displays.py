"""Issue 33, "a rich display on every object a notebook user holds": a trace, a check report, patching,
lens and attribution results, head scores, a compare, model info, origin and ablate documents, a training
run and a lesson show an HTML summary (qkv.apps.displays) with the object's own numbers, every string
escaped, in Chinese and in English as qkv speaks; a short text/plain line; and a real IPython shell's
display formatter finds them. A trace of megabytes shows in a few kilobytes."""

from __future__ import annotations

import base64
import re

import pytest
import torch

import qkv
from qkv.analysis.model_info import model_info
from qkv.analysis.word_similarity import compare
from qkv.apps import displays
from qkv.apps.displays import results, runs
from qkv.core.io import shown
from qkv.core.see.invariants import CheckItem, CheckReport
from qkv.core.train.loop import TrainResult
from qkv.lessons.common.result import LessonResult

HAN = re.compile(r"[\u4e00-\u9fff]")
SENTENCE = "我 投资了 苹果 ，"
EVIL = "<script>"  # a token a model may really hold: it must reach the page as text


@pytest.fixture(autouse=True)
def no_language_chosen(monkeypatch):
    monkeypatch.delenv("QKV_LANG", raising=False)
    qkv.set_lang(None)
    yield
    qkv.set_lang(None)


@pytest.fixture(scope="module")
def bundled():
    return qkv.load()


@pytest.fixture(scope="module")
def evil():
    """A small random GPT whose vocabulary holds the word "<script>", and ids that use it."""
    torch.manual_seed(0)
    tok = qkv.WordTokenizer([EVIL, "a", "b", "c", "d", "e"])
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2)).eval()
    return model, tok, [tok.ids[w] for w in ("a", EVIL, "b", "c", EVIL, "d")]


@pytest.fixture(scope="module")
def objects(bundled):
    """One object of every kind, made by the public API on the bundled model."""
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    _, trace = model.run_with_trace(torch.tensor([ids]))
    clean, corrupted = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，"
    return {
        "trace": trace,
        "check": qkv.check(trace),
        "patching": qkv.patch_text(model, tok, clean, corrupted, "味道", "股价"),
        "logit-lens": qkv.lens_top(model, ids, tokenizer=tok),
        "logit-attribution": qkv.logit_attribution(model, ids, tokenizer=tok),
        "head-scores": qkv.head_scores(model, tok),
        "compare": compare(model, tok, clean, corrupted, "苹果"),
        "model-info": model_info(model, tok, "bundled"),
        "origin": qkv.origin(model, tok, SENTENCE, layer=1, head=0),
        "ablate": qkv.ablate(model, tok, SENTENCE, heads=[(1, 0)]),
        "training": TrainResult("runs/book", 3000, 2.5, 3.25, 12345.0, 61.0),
    }


def test_every_kind_has_one_display_and_every_object_finds_its_own(objects):
    assert set(shown.shown_kinds()) >= set(displays.BUILDERS) | {"lesson"}
    for kind, obj in objects.items():
        assert obj.shown_kind() == kind
        assert obj._repr_html_() == displays.html(obj)  # the class asks the registry, in the language qkv speaks


def test_each_display_speaks_both_languages_and_follows_set_lang(objects):
    for kind, obj in objects.items():
        en, zh = displays.html(obj, "en"), displays.html(obj, "zh")
        assert en != zh, kind
        assert len(HAN.findall(zh)) > len(HAN.findall(en)) + 10, kind  # Chinese sentences, beyond the tokens
        assert displays.line(obj, "en") in en.replace("&#x27;", "'") or kind == "lesson"
        qkv.set_lang("zh")
        assert obj._repr_html_() == zh, kind
        qkv.set_lang(None)


def test_each_text_plain_and_repr_is_one_short_line(objects):
    for kind, obj in objects.items():
        for text in (displays.line(obj, "en"), displays.line(obj, "zh")):
            assert "\n" not in text and len(text) < 200, (kind, text)
        if not isinstance(obj, dict):  # a document's repr is its data; its notebook line is short
            assert "\n" not in repr(obj) and len(repr(obj)) < 200, (kind, repr(obj))
            assert "tensor(" not in repr(obj)


def test_a_real_ipython_shell_shows_html_and_a_short_line(objects):
    from IPython.core.interactiveshell import InteractiveShell

    formatter = InteractiveShell.instance().display_formatter
    for kind, obj in objects.items():
        data, _ = formatter.format(obj)
        assert data["text/html"] == displays.html(obj, "en"), kind
        assert data["text/plain"] == displays.line(obj, "en"), kind
    qkv.set_lang("zh")
    data, _ = formatter.format(objects["trace"])
    assert data["text/plain"].startswith("Trace：") and "个中间结果" in data["text/html"]


def test_the_trace_summary_names_every_activation_and_its_bytes(objects):
    trace = objects["trace"]
    html = displays.html(trace, "en")
    groups = runs.trace_groups(trace)
    assert sum(max(1, len(g["layers"])) for g in groups) == len(trace)  # every activation in one group
    for g in groups:
        assert f"<td>{g['name']}</td>" in html
    assert "<td>blocks.{L}.attn.hook_pattern</td><td>0–3</td><td>1×4×4×4</td>" in html
    total = sum(t.numel() * t.element_size() for t in trace.values())
    assert f"{len(trace)} activations" in html and runs.size(total) in html
    assert " ".join(str(i) for i in trace.ids[0].tolist()) in html


def test_a_trace_of_megabytes_shows_in_a_few_kilobytes():
    torch.manual_seed(0)
    model = qkv.GPT(qkv.ModelConfig(d_vocab=2000, n_ctx=256, d_model=64, n_heads=4, n_layers=3)).eval()
    _, trace = model.run_with_trace(torch.randint(0, 2000, (1, 256)))
    held = sum(t.numel() * t.element_size() for t in trace.values())
    assert held > 8 * 2**20
    html, plain = displays.html(trace, "zh"), displays.line(trace, "en")
    assert len(html.encode()) < 6000 and len(repr(trace)) < 80 and len(plain) < 120
    assert "…" in html  # the ids are cut: 256 of them are not all listed


def test_every_display_escapes_a_token_like_script(evil):
    model, tok, ids = evil
    made = [
        qkv.lens_top(model, ids, position=1, k=6, tokenizer=tok),
        qkv.origin(model, tok, ids=ids, layer=1, head=0, token=4),
        qkv.ablate(model, tok, ids=ids, heads=[(0, 1)]),
        qkv.logit_attribution(model, ids, 2, tok.ids[EVIL], tokenizer=tok),
        LessonResult("x", EVIL, f"a {EVIL} b", EVIL, {}, [], "en"),
    ]
    for obj in made:
        for lang in ("en", "zh"):
            html = displays.html(obj, lang)
            assert EVIL not in html and "&lt;script&gt;" in html, (obj.shown_kind(), lang)


def test_patching_shows_its_strongest_pieces_with_their_shares(objects):
    p = objects["patching"]
    html = displays.html(p, "en")
    share = p.normalized
    for layer, pos, value in p.strongest(results.TOP):
        row = f'<td style="text-align:right">{layer}</td><td style="text-align:right">{pos}</td>'
        s = results.num(float(share[layer, pos]))
        assert row in html and f'>{results.num(value)}</td><td style="text-align:right">{s}</td>' in html
    assert "logit(味道) − logit(股价) at position 4" in html and results.num(p.clean) in html


def test_the_lens_shows_each_layer_and_the_final_guess(objects):
    doc = objects["logit-lens"]
    html = displays.html(doc, "en")
    assert f"p({doc['final']['token']})" in html
    for row in doc["layers"]:
        top = row["top"][0]
        assert f"<td>{row['name']}</td><td>{top['token']} {results.num(top['p'])}" in html
        assert f">{results.num(row['p_final'])}</td></tr>" in html


def test_attribution_shows_the_largest_terms_and_their_sum(objects):
    a = objects["logit-attribution"]
    html = displays.html(a, "en")
    terms = sorted(a.components.items(), key=lambda kv: -abs(kv[1]))
    for name, value in terms[: results.TOP]:
        assert f'<td>{name}</td><td style="text-align:right">{results.num(value)}</td>' in html
    name, _ = terms[results.TOP]
    assert f"<td>{name}</td>" not in html  # top-k, not all
    assert f"add up to {results.num(a.total)}, the logit is {results.num(a.logit)}" in html


def test_head_scores_show_each_kinds_strongest_head(objects):
    h = objects["head-scores"]
    html = displays.html(h, "zh")
    for kind in ("previous", "duplicate", "induction", "first"):
        layer, head, score = h.best(kind)
        assert f'<td>L{layer} H{head}</td><td style="text-align:right">{results.num(score)}</td>' in html


def test_compare_origin_ablate_and_model_info_show_their_numbers(objects):
    html = displays.html(objects["compare"], "en")
    for stage in objects["compare"]["stages"]:
        assert f'<td>{stage["label"]}</td><td>{stage["name"]}</td><td style="text-align:right">' in html
        assert f">{results.num(stage['cosine'])}</td>" in html
    doc = objects["origin"]
    best = max(doc["keys"], key=lambda k: k["scaled"])
    assert f'<td>{best["token"]}</td><td style="text-align:right">{results.num(best["dot"])}</td>' in displays.html(doc)
    doc = objects["ablate"]
    assert all(f">{results.num(at['moved'])}</td></tr>" in displays.html(doc) for at in doc["next"][: results.TOP])
    info = objects["model-info"]
    assert (
        f"{info['parameters']:,}" in displays.html(info) and info["parameters"] == objects["trace"].model.num_params()
    )


def test_a_check_report_lists_its_failing_checks_first():
    good = CheckItem("rows sum to 1", 0, True, 1e-8, 16)
    bad = CheckItem("rows sum to 1", 1, False, 0.25, 16, [(0, 1, 3)])
    report = CheckReport([good] * 30 + [bad], training=True)
    html = displays.html(report, "en")
    assert html.index("FAIL layer 1") < html.index("ok   layer 0") and "1 check(s) failed" in html
    assert "30/31 checks pass, training mode" in html and "… and 7 more rows" in html  # 31 lines, 24 shown
    assert "项检查通过" in displays.html(report, "zh")


def test_a_lesson_shows_its_figures_inline(tmp_path):
    png = tmp_path / "hull.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(40)))
    svg = tmp_path / "curve.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>')
    big = tmp_path / "big.png"
    big.write_bytes(b"0" * (runs.MAX_FIGURE_BYTES + 1))
    r = LessonResult("convex", "Convex hull", "z = A V\nlies inside", "z inside: True", {}, [png, svg, big], "en")
    html = displays.html(r, "en")
    assert f"data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}" in html
    assert f"data:image/svg+xml;base64,{base64.b64encode(svg.read_bytes()).decode()}" in html
    assert "<pre>z = A V\nlies inside</pre>" in html and f"Figure (not shown here): {big}" in html
    none = displays.html(LessonResult("convex", "t", "x", "h", {}, [], "zh"), "zh")  # nothing measured to draw
    assert "qkv.lessons.run(&quot;convex&quot;, out=" in none and "<img" not in none


@pytest.mark.slow
def test_a_real_lessons_figures_show_in_its_display(tmp_path):
    r = qkv.lessons.run("convex", lang="zh", out=tmp_path)
    html = r._repr_html_()
    assert r.figures and html.count('<img src="data:image/png;base64,') == len(r.figures)
    assert r.headline in html
    drawn = qkv.lessons.run("convex", lang="zh")  # no folder: the display draws them from the measurement
    shown = drawn._repr_html_()
    assert drawn.figures == [] and shown.count('<img src="data:image/png;base64,') == len(r.figures)
    assert drawn._drawn is vars(drawn)["_drawn"] and drawn._repr_html_() == shown  # drawn once, kept


def test_an_object_without_a_display_falls_back_to_text():
    class Plain(shown.Shown):
        shown_as = "no-such-kind"

    assert Plain()._repr_html_() is None and repr(Plain()) == "Plain()"
    doc = shown.Document({"kind": "no-such-kind", "x": 1})
    assert doc._repr_html_() is None and doc == {"kind": "no-such-kind", "x": 1} and repr(doc) == repr(dict(doc))


def test_a_model_shows_its_shape_and_keeps_torchs_list_of_modules(bundled):
    from IPython.core.interactiveshell import InteractiveShell

    model, _ = bundled
    data, _ = InteractiveShell.instance().display_formatter.format(model)
    assert data["text/plain"] == repr(model) and "(blocks): ModuleList(" in data["text/plain"]
    html = data["text/html"]
    assert (
        f">{model.num_params():,}</td>" in html
        and f'<td>d_vocab</td><td style="text-align:right">{model.cfg.d_vocab}' in html
    )
    zh = displays.html(model, "zh")
    assert "个参数" in zh and "个参数" not in html
    encoder = qkv.Encoder(qkv.ModelConfig(arch="bert", d_vocab=50, n_layers=1, d_model=16, n_heads=2))
    assert "<td>bert</td>" in encoder._repr_html_().replace(' style="text-align:right"', "")


@pytest.mark.slow
def test_a_jupyter_kernel_shows_html_for_a_trace_a_check_a_lens_and_a_model():
    """The displays as a notebook gets them: nbclient runs a real kernel, each cell's result has text/html."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    setup = (
        "import qkv, torch\nqkv.set_lang('zh')\nm, tok = qkv.load()\nids = tok.encode('我 投资了 苹果 ，')\n"
        "_, trace = m.run_with_trace(torch.tensor([ids]))\ntrace"
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(c) for c in (setup, "qkv.check(trace)", "qkv.lens_top(m, ids, tokenizer=tok)", "m")
    ]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    shown = [next(o for o in c.outputs if o.output_type == "execute_result").data for c in nb.cells]
    assert all("text/html" in data for data in shown)
    assert (
        shown[0]["text/plain"].startswith("Trace：")
        and "<td>blocks.{L}.attn.hook_pattern</td>" in shown[0]["text/html"]
    )
    assert "项检查通过" in shown[1]["text/html"] and "Logit lens，位置 3" in shown[2]["text/plain"]
    assert shown[3]["text/plain"].startswith("GPT(") and "个参数" in shown[3]["text/html"]


def test_an_encoder_decoders_trace_lists_both_stacks_and_the_target():
    from qkv.core.decode.translate import encode_source
    from qkv.core.hub.bundled import default_translate_ckpt

    model, words = qkv.load(default_translate_ckpt())
    src = torch.tensor([encode_source(words, SENTENCE)])
    _, trace = model.run_with_trace(src, tgt_ids=torch.tensor([[1, 5, 7]]))
    html = displays.html(trace, "en")
    assert "<td>decoder.blocks.{L}.cross_attn.hook_pattern</td><td>0, 1</td><td>1×4×3×4</td>" in html
    assert "<td>encoder.blocks.{L}.attn.hook_pattern</td>" in html and "more rows" not in html
    assert "target token ids: 1 5 7" in html and len(html.encode()) < 12000

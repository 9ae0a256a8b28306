"""Figures: every plotting function writes PNG and SVG, Chinese renders with the CJK font, and the
`qkv figure` glue turns a checkpoint and a text into the right arrays."""

import re
import warnings

import numpy as np
import pytest
import torch

from qkv.apps.cli.commands import figure as run_figure
from qkv.apps.cli.parser import build_parser
from qkv.apps.figure import figure
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import CharTokenizer
from qkv.core.train import checkpoint
from qkv.presentation import fonts, plot_attention, plot_embedding, plot_position, plot_training

TEXT = "我投资了苹果。苹果很好吃，我喜欢苹果。abc abd"
TINY = [
    "n_layers=1",
    "d_model=32",
    "n_heads=2",
    "n_ctx=16",
    "steps=20",
    "batch_size=4",
    "eval_interval=10",
    "eval_steps=2",
]


def assert_written(path):
    data = path.read_bytes()
    assert data, path
    if path.suffix == ".png":
        assert data.startswith(b"\x89PNG"), path
    else:
        assert b"<svg" in data, path


def causal_patterns(shape, seed=0):
    """Random softmax rows with the upper triangle exactly 0: (..., T, T)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=shape) * 2
    T = shape[-1]
    scores[..., np.triu(np.ones((T, T), dtype=bool), 1)] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    torch.manual_seed(0)
    tokenizer = CharTokenizer.train(TEXT)
    model = GPT(ModelConfig(d_vocab=tokenizer.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=2, pos="rope"))
    out = tmp_path_factory.mktemp("ckpt")
    checkpoint.save(out, model.eval(), tokenizer)
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from qkv.core.train.lm import train

    out = tmp_path_factory.mktemp("run")
    train(TEXT * 20, out=out, overrides=TINY, progress=False)
    return out


def capture(monkeypatch, module):
    """Record the Figure a plot_* module saves (its Text artists are inspected before writing)."""
    seen = []
    real = module.save

    def save(fig, path):
        fig.canvas.draw()  # lay out and render, as saving does, so glyph warnings surface here
        seen.append(fig)
        return real(fig, path)

    monkeypatch.setattr(module, "save", save)
    return seen


@pytest.mark.parametrize("suffix", [".png", ".svg"])
@pytest.mark.slow
def test_every_array_function_writes_png_and_svg(tmp_path, suffix, ckpt, run):
    tokens = ["a", "b", "c", "d", "e"]
    model, tokenizer = checkpoint.load(ckpt)
    paths = [
        plot_attention.attention_grid(causal_patterns((2, 3, 5, 5)), tokens, tmp_path / f"grid{suffix}"),
        plot_attention.head_heatmap(causal_patterns((5, 5)), tokens, tmp_path / f"head{suffix}", 0, 1),
        plot_position.sinusoidal_figure(tmp_path / f"sin{suffix}", n_ctx=16, d_model=16),
        plot_position.rope_figure(tmp_path / f"rope{suffix}"),
        plot_embedding.embedding_map(model, tokenizer, tmp_path / f"emb{suffix}", lang="zh"),
        plot_training.loss_curves([run], tmp_path / f"loss{suffix}"),
    ]
    for path in paths:
        assert_written(path)


def test_a_suffix_other_than_png_or_svg_is_a_one_line_error(tmp_path):
    calls = [
        lambda p: plot_attention.head_heatmap(causal_patterns((3, 3)), list("abc"), p, 0, 0),
        lambda p: plot_attention.attention_grid(causal_patterns((1, 1, 3, 3)), list("abc"), p),
        plot_position.sinusoidal_figure,
        plot_position.rope_figure,
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"\.png or \.svg") as err:
            call(tmp_path / "figure.pdf")
        assert "\n" not in str(err.value)
    assert not list(tmp_path.iterdir())


def test_chinese_labels_render_with_the_cjk_font(tmp_path, monkeypatch):
    seen = capture(monkeypatch, plot_attention)
    family = fonts.setup_matplotlib()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_attention.head_heatmap(
            causal_patterns((3, 3)), ["我", "投资了", "苹果"], tmp_path / "zh.png", 0, 1, lang="zh"
        )
    assert not [w for w in caught if "missing" in str(w.message).lower()], [str(w.message) for w in caught]
    texts = [
        t for t in seen[0].findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontname")) if t.get_text()
    ]
    words = "".join(t.get_text() for t in texts)
    for expected in ("我", "投资了", "苹果", "层 0 头 1", "查询", "键"):
        assert expected in words
    assert fonts.missing_glyphs(words) == []
    assert {t.get_fontname() for t in texts} == {family}
    assert_written(tmp_path / "zh.png")


CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
NEUTRAL = {"PE[t, d]", "PC1", "PC2"}  # labels that are the same in every language


def labels(fig) -> list[str]:
    """The words of a figure: titles, axis labels, legend entries, figure texts (not ticks or cell numbers)."""
    out = [fig._suptitle.get_text()] if fig._suptitle else []
    out += [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        out += [ax.get_title(loc) for loc in ("left", "center", "right")] + [ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in out if t and not (t.startswith("$") and t.endswith("$"))]  # mathtext: no language


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_every_figure_speaks_the_chosen_language(tmp_path, monkeypatch, lang, ckpt, run):
    """Every word of every figure comes from the chosen language's catalogue: in Chinese each label
    holds Chinese characters the CJK font can draw; in English none does (the tokens here are Latin)."""
    from qkv.presentation import plot_hull

    modules = (plot_attention, plot_position, plot_embedding, plot_training, plot_hull)
    seen = {m.__name__: capture(monkeypatch, m) for m in modules}
    model, tokenizer = checkpoint.load(ckpt)
    tokens = ["a", "b", "c", "d"]
    plot_attention.attention_grid(causal_patterns((2, 2, 4, 4)), tokens, tmp_path / "grid.png", lang=lang)
    plot_attention.head_heatmap(causal_patterns((4, 4)), tokens, tmp_path / "head.png", 0, 1, lang=lang)
    plot_position.sinusoidal_figure(tmp_path / "sin.png", n_ctx=16, d_model=16, lang=lang)
    plot_position.rope_figure(tmp_path / "rope.png", lang=lang)
    plot_embedding.embedding_map(model, tokenizer, tmp_path / "emb.png", tokens=tokens, lang=lang)
    plot_training.loss_curves([run], tmp_path / "loss.png", lang=lang)
    plot_hull.hull_figure(np.eye(3), np.full(3, 1 / 3), np.full(3, 1 / 3), tmp_path / "hull.png", lang=lang)
    figures = [fig for found in seen.values() for fig in found]
    assert len(figures) == 7
    for fig in figures:
        words = [w for w in labels(fig) if w not in NEUTRAL]
        assert len(words) >= 3, words
        if lang == "zh":
            assert [w for w in words if not CJK.search(w)] == []
            assert fonts.missing_glyphs("".join(words)) == []
        else:
            assert [w for w in words if CJK.search(w)] == []


def test_head_heatmap_greys_the_masked_cells_and_prints_weights(tmp_path, monkeypatch):
    seen = capture(monkeypatch, plot_attention)
    plot_attention.head_heatmap(causal_patterns((4, 4)), list("abcd"), tmp_path / "h.png", 0, 0)
    plot_attention.head_heatmap(causal_patterns((4, 4)), list("abcd"), tmp_path / "h.svg", 0, 0, annotate=False)
    image = seen[0].axes[0].images[0]
    mask = np.ma.getmaskarray(image.get_array())
    assert (mask == np.triu(np.ones((4, 4), dtype=bool), 1)).all()
    bad, zero = tuple(image.get_cmap().get_bad()), image.get_cmap()(0.0)
    assert bad[:3] == pytest.approx((0.784, 0.784, 0.784), abs=0.01) and bad != zero  # grey, not "weight 0"
    numbers = lambda fig: [t for t in fig.axes[0].texts if t.get_text().startswith(("0.", "1."))]
    assert len(numbers(seen[0])) == 4 * 5 // 2
    assert numbers(seen[1]) == []


def test_rope_dot_product_depends_only_on_the_offset():
    a, b, c = plot_position._rope_dots(8, 10000.0, [(1, 3), (5, 7), (1, 4)])
    assert a == pytest.approx(b, abs=1e-5)
    assert a != pytest.approx(c, abs=1e-3)
    with pytest.raises(ValueError, match="even"):
        plot_position.rope_figure("x.png", d_head=7)


def test_nearest_neighbours_by_cosine(ckpt):
    model, tokenizer = checkpoint.load(ckpt)
    a, b, c = tokenizer.encode("abc")
    with torch.no_grad():
        model.embed.weight[:] = torch.randn_like(model.embed.weight) * 0.1
        model.embed.weight[a] = torch.ones(model.cfg.d_model)
        model.embed.weight[b] = torch.ones(model.cfg.d_model) * 3.0  # same direction, longer
        model.embed.weight[c] = -torch.ones(model.cfg.d_model)  # opposite
    first = plot_embedding.nearest_neighbours(model, tokenizer, "a", k=3)
    assert first[0][0] == "b" and first[0][1] == pytest.approx(1.0, abs=1e-6)
    assert len(first) == 3 and all(name != "a" for name, _ in first)
    assert [cos for _, cos in first] == sorted((cos for _, cos in first), reverse=True)
    everyone = plot_embedding.nearest_neighbours(model, tokenizer, "a", k=tokenizer.vocab_size)
    assert everyone[-1] == ("c", pytest.approx(-1.0, abs=1e-6))
    assert plot_embedding.nearest_neighbours(model, tokenizer, "␣", k=1)  # a token by its display form
    for bad in ("ab", "Z", ""):
        with pytest.raises(ValueError, match="not a single token"):
            plot_embedding.nearest_neighbours(model, tokenizer, bad)


def test_embedding_map_axes_carry_the_variance_shares_of_pca():
    X = np.random.default_rng(0).normal(size=(20, 6)) * [5.0, 3.0, 1.0, 1.0, 0.5, 0.5]
    coords, share = plot_embedding.pca_map(X)
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)  # the variances along the principal directions: s²/n
    np.testing.assert_allclose(share, (s**2 / (s**2).sum())[:2], rtol=1e-9)
    assert coords.shape == (20, 2) and share[0] > share[1] > 0
    _, one = plot_embedding.pca_map(X[:, :1])  # one dimension: it carries everything
    np.testing.assert_allclose(one, [1.0, 0.0])


def test_loss_curves_read_the_log_and_name_a_missing_one(tmp_path, run):
    steps, evals = plot_training.read_log(run)
    assert [s for s, _ in steps] == list(range(1, 21))
    assert [e[0] for e in evals] == [10, 20] and all(e[2] is not None for e in evals)
    assert_written(
        plot_training.loss_curves([run, run / "log.jsonl"], tmp_path / "two.png", labels=["a", "b"], lang="zh")
    )
    with pytest.raises(ValueError, match="nowhere.log.jsonl is missing"):
        plot_training.loss_curves([tmp_path / "nowhere"], tmp_path / "l.png")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "log.jsonl").write_text("")
    with pytest.raises(ValueError, match="empty.log.jsonl holds no training steps"):
        plot_training.loss_curves([tmp_path / "empty"], tmp_path / "l.png")


def parse(*argv):
    return build_parser().parse_args(["figure", *argv])


@pytest.mark.slow
def test_cli_positions_rope_loss(tmp_path, run, capsys):
    for kind in ("positions", "rope"):
        out = tmp_path / f"{kind}.png"
        assert run_figure(parse(kind, "--out", str(out), "--lang", "zh")) == out
        assert_written(out)
        assert str(out) in capsys.readouterr().out
    assert_written(run_figure(parse("loss", "--log", str(run), "--log", str(run), "--out", str(tmp_path / "l.svg"))))
    assert_written(figure("rope", tmp_path / "r.svg", lang="en"))
    assert_written(figure("loss", tmp_path / "l2.png", log=str(run)))


def test_cli_trace_figures(tmp_path, ckpt, monkeypatch):
    from qkv.presentation import plot_hull

    grid = run_figure(
        parse("attention", "--ckpt", str(ckpt), "--text", "我投资了苹果", "--out", str(tmp_path / "a.png"))
    )
    one_layer = run_figure(
        parse("attention", "--ckpt", str(ckpt), "--text", "abc", "--layer", "1", "--out", str(tmp_path / "a1.svg"))
    )
    head = run_figure(
        parse(
            "head",
            "--ckpt",
            str(ckpt),
            "--text",
            "我投资了苹果",
            "--layer",
            "1",
            "--head",
            "1",
            "--lang",
            "zh",
            "--out",
            str(tmp_path / "h.png"),
        )
    )
    got = {}
    real = plot_hull.hull_figure
    monkeypatch.setattr(plot_hull, "hull_figure", lambda *a, **kw: got.update(args=a, kw=kw) or real(*a, **kw))
    hull = run_figure(
        parse(
            "hull",
            "--ckpt",
            str(ckpt),
            "--text",
            "我投资了苹果",
            "--layer",
            "1",
            "--head",
            "0",
            "--token",
            "3",
            "--out",
            str(tmp_path / "hull.png"),
        )
    )
    for path in (grid, one_layer, head, hull):
        assert_written(path)
    values, z, weights = got["args"][:3]
    assert values.shape == (4, 8) and z.shape == (8,) and weights.shape == (4,)
    assert weights.sum() == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(weights @ values, z, atol=1e-5)  # z is the weighted average of the values
    assert got["kw"]["labels"] == ["我", "投", "资", "了"]


def test_cli_bad_inputs_are_one_line_errors(tmp_path, ckpt):
    out = str(tmp_path / "x.png")
    cases = [
        (("head", "--text", " ".join(["苹果"] * 65), "--out", out), "65 tokens"),  # the bundled model: n_ctx 64
        (
            ("head", "--ckpt", str(ckpt), "--text", "abc", "--layer", "2", "--out", out),
            r"layer 2 is out of range: the model has 2 layers \(use 0\.\.1 or -2\.\.-1\)",
        ),
        (
            ("hull", "--ckpt", str(ckpt), "--text", "abc", "--head", "5", "--out", out),
            r"head 5 is out of range: each layer has 2 heads \(use 0\.\.1 or -2\.\.-1\)",
        ),
        (
            ("hull", "--ckpt", str(ckpt), "--text", "abc", "--token", "3", "--out", out),
            r"token 3 is out of range: the text has 3 tokens \(use 0\.\.2 or -3\.\.-1\)",
        ),
        (("attention", "--ckpt", str(ckpt), "--text", "", "--out", out), "text is empty"),
        (("attention", "--ckpt", str(ckpt), "--text", "a" * 17, "--out", out), "17 tokens"),
        (("attention", "--ckpt", str(ckpt), "--text", "abc", "--out", str(tmp_path / "x.jpg")), r"\.png or \.svg"),
        (("embedding", "--ckpt", str(ckpt), "--tokens", "a,xyz", "--out", out), "not a single token"),
        (("loss", "--out", out), "give --log"),
    ]
    for argv, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            run_figure(parse(*argv))
        assert "\n" not in str(err.value)
    with pytest.raises(TypeError, match="colour"):
        figure("rope", out, colour="red")
    assert not (tmp_path / "x.png").exists()

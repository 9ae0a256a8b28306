"""Tests for the translation commands: `qkv train --task translate`, `qkv translate`, `qkv info` and
`qkv generate` on a translation model, `qkv corpus --pairs`; bad input is one line `qkv: error: ...`."""

from __future__ import annotations

import io
import json
import warnings

import pytest
from cli_util import run_error, run_ok

from qkv.apps.cli import main
from qkv.core.hub.bundled import BUNDLED_TRANSLATE, default_translate_ckpt
from qkv.core.text.corpus import pairs
from qkv.core.train import checkpoint

TINY = [
    "n_layers=1",
    "n_encoder_layers=1",
    "d_model=32",
    "n_heads=2",
    "d_mlp=64",
    "steps=10",
    "batch_size=8",
    "eval_interval=5",
    "eval_steps=2",
]


def sets(settings) -> list[str]:
    return [a for s in settings for a in ("--set", s)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny translation checkpoint trained through the CLI (read-only)."""
    out = tmp_path_factory.mktemp("tr") / "run"
    assert (
        main(["train", "--task", "translate", "--n-sentences", "200", "--out", str(out), "--quiet", *sets(TINY)]) == 0
    )
    return out


# ---------------------------------------------------------------------------- translate (the bundled model)

# sentences of the corpus and what the bundled model must write for them: the same ambiguous word in two
# senses, told apart only by the verb before it (吃了 ate / 研究了 studied)
HELD_OUT = {
    "我 昨天 终于 吃了 苹果 ， 吃 起来 很 脆 。": "yesterday i finally ate apple , and it was crunchy .",
    "我 昨天 终于 研究了 苹果 ， 股价 上涨了 。": "yesterday i finally studied apple , and its stock rose .",
    "他 昨天 终于 吃了 小米 ， 颗粒 很 饱满 。": "yesterday he finally ate millet , and the grains were plump .",
    "他 昨天 终于 研究了 小米 ， 股价 下跌了 。": "yesterday he finally studied xiaomi , and its stock fell .",
}
TRAINED = ("我们 前天 洗了 苹果 ， 味道 很 甜 。", "the day before yesterday we washed apple , and it tasted sweet .")


def test_the_examples_are_what_they_claim():
    """HELD_OUT really is held out (never in the bundled model's training pairs), TRAINED really was trained on."""
    config = checkpoint.read_config(default_translate_ckpt())
    train = {
        (p.text("zh"), p.text("en"))
        for p in pairs("train", config["data"]["corpus_seed"], config["data"]["n_sentences"])
    }
    held = {(p.text("zh"), p.text("en")) for p in pairs("heldout")}
    for pair in HELD_OUT.items():
        assert pair in held and pair not in train
    assert TRAINED in train


def test_translate_a_trained_and_heldout_sentences(capsys):
    out, _ = run_ok(capsys, ["translate", TRAINED[0]])
    assert out == TRAINED[1] + "\n"
    for zh, en in HELD_OUT.items():
        assert run_ok(capsys, ["translate", zh])[0] == en + "\n"
        assert run_ok(capsys, ["translate", zh, "--beam", "4"])[0] == en + "\n"


def test_translate_takes_words_as_arguments_and_text_without_spaces(capsys):
    zh, en = next(iter(HELD_OUT.items()))
    assert run_ok(capsys, ["translate", *zh.split()])[0] == en + "\n"
    assert run_ok(capsys, ["translate", zh.replace(" ", "")])[0] == en + "\n"


def test_translate_reads_lines_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(list(HELD_OUT)[:2]) + "\n\n" + list(HELD_OUT)[2] + "\n"))
    out, _ = run_ok(capsys, ["translate", "-", "--ckpt", str(BUNDLED_TRANSLATE)])
    assert out.split("\n") == [*list(HELD_OUT.values())[:2], "", list(HELD_OUT.values())[2], ""]


def test_translate_max_len_cuts_the_translation(capsys):
    zh, en = next(iter(HELD_OUT.items()))
    assert run_ok(capsys, ["translate", zh, "--max-len", "3"])[0] == " ".join(en.split()[:3]) + "\n"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["translate", "我 吃了 榴莲 和 火龙果"], "never saw: '榴莲', '火龙果'"),
        (["translate", "  "], "empty"),
        (["translate", " ".join(["我"] * 41)], "at most 40"),
        (["translate", "我", "--beam", "0"], "beam size must be between 1 and 64"),
        (["translate", "我", "--max-len", "0"], "--max-len must be at least 1"),
        (["translate", "我", "--max-len", "41"], "max_len must be between 1 and n_ctx"),
        (["translate", "我", "--ckpt", "/nonexistent/dir"], "does not exist"),
    ],
)
def test_translate_bad_input(capsys, argv, match):
    assert match in run_error(capsys, argv)


def test_translate_a_bad_line_on_stdin_names_it_and_the_others_come_out(capsys, monkeypatch):
    good = list(HELD_OUT)[:2]
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{good[0]}\n我 吃了 榴莲 。\n{good[1]}\n我 吃了 火龙果\n"))
    assert main(["translate", "-"]) == 1  # a line failed
    out, err = capsys.readouterr()
    assert out.split("\n") == [HELD_OUT[good[0]], "", HELD_OUT[good[1]], "", ""]  # line n is line n's translation
    n = checkpoint.load_checkpoint(default_translate_ckpt()).tokenizer.vocab_size - 3  # <pad> <s> </s>
    assert err.splitlines() == [
        f"qkv: error: line 2: the sentence has words this model never saw: '榴莲' (it knows {n} words)",
        f"qkv: error: line 4: the sentence has words this model never saw: '火龙果' (it knows {n} words)",
    ]


def test_translate_refuses_a_gpt(capsys):
    assert "not a translation model" in run_error(capsys, ["translate", "i ate", "--ckpt", "src/qkv/assets/model"])


def test_a_missing_bundled_model_is_one_line(capsys, monkeypatch, tmp_path):
    import qkv.core.hub.bundled as bundled

    monkeypatch.setattr(bundled, "BUNDLED_TRANSLATE", tmp_path / "gone")
    assert "bundled translation model is missing" in run_error(capsys, ["translate", "我"])


# ---------------------------------------------------------------------------- info, generate


def test_info_describes_the_bundled_translation_model(capsys):
    out, _ = run_ok(capsys, ["info", "--ckpt", str(BUNDLED_TRANSLATE)])
    head = out.splitlines()
    assert "translation model zh -> en (encoder-decoder)" in head[0] and "parameters" in head[0]
    cfg = checkpoint.load_checkpoint(BUNDLED_TRANSLATE).model.cfg
    assert f"encoder: {cfg.n_encoder_layers} blocks" in head[1] and f"decoder: {cfg.n_layers} blocks" in head[1]
    assert "cross-attention" in head[1]
    assert "one embedding table for both languages" in head[2]
    data = checkpoint.read_config(BUNDLED_TRANSLATE)["data"]
    assert f"trained on {data['pairs']:,} pairs from the built-in corpus and the HSK training sentences" in head[3]
    assert f"{data['val_pairs']:,} validation pairs (held-out frames and HSK sentences)" in head[3]
    assert "  arch = seq2seq" in head and "  share_embeddings = True" in head


def test_generate_refuses_a_translation_model(capsys):
    assert "use qkv translate" in run_error(capsys, ["generate", "--ckpt", str(BUNDLED_TRANSLATE), "--prompt", "我"])


def test_the_bundled_model_is_small():
    assert sum(p.stat().st_size for p in BUNDLED_TRANSLATE.iterdir()) <= 8_000_000  # ~9,000 words of two languages
    assert checkpoint.load_checkpoint(BUNDLED_TRANSLATE).optimizer_state is None


# ---------------------------------------------------------------------------- train --task translate


def test_train_translate_writes_a_checkpoint_info_reads(capsys, tiny):
    state = json.loads((tiny / "state.json").read_text())
    assert state["step"] == 10
    out, _ = run_ok(capsys, ["info", "--ckpt", str(tiny)])
    assert "translation model zh -> en" in out and "trained on 200 pairs from the built-in corpus" in out
    assert run_ok(capsys, ["translate", "我 吃了 苹果 。", "--ckpt", str(tiny)])[0].strip()  # it writes something


def test_train_resume_finds_the_task_by_itself(capsys, tmp_path):
    out = str(tmp_path / "run")
    run_ok(
        capsys,
        ["train", "--task", "translate", "--n-sentences", "200", "--out", out, "--quiet", "--until", "5", *sets(TINY)],
    )
    printed, _ = run_ok(capsys, ["train", "--resume", "--out", out, "--quiet"])  # no --task: config.json says
    assert printed.startswith("trained to step 10")
    assert "cannot be resumed as en-zh" in run_error(
        capsys, ["train", "--resume", "--out", out, "--direction", "en-zh", "--set", "steps=20"]
    )


def test_train_translate_on_a_tsv_file(capsys, tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text(
        "".join(f"{p.text('en')}\t{p.text('zh')}\n" for p in pairs("train", n_sentences=50)), encoding="utf-8"
    )
    out = tmp_path / "run"
    run_ok(
        capsys,
        [
            "train",
            "--task",
            "translate",
            "--pairs",
            str(path),
            "--direction",
            "en-zh",
            "--out",
            str(out),
            "--quiet",
            *sets(TINY),
        ],
    )
    assert checkpoint.read_config(out)["task"] == {"kind": "translate", "source": "en", "target": "zh"}


@pytest.mark.parametrize(
    "content, match",
    [
        ("我 吃了 苹果\n", "line 1: expected 'source<TAB>target'"),
        ("我\t\n", "line 1: expected 'source<TAB>target', both non-empty"),
        (b"\xe6\x88\x91\ta\n\xff\tb\n", "is not UTF-8"),
    ],
)
def test_train_translate_bad_tsv_files(capsys, tmp_path, content, match):
    path = tmp_path / "bad.tsv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    assert match in run_error(
        capsys, ["train", "--task", "translate", "--pairs", str(path), "--out", str(tmp_path / "o")]
    )


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--task", "translate", "--text", "x.txt"], "--text is for a GPT"),
        (
            ["--task", "translate", "--tokenizer", "word", "--vocab-size", "9"],
            "--tokenizer, --vocab-size are for a GPT",
        ),
        (["--pairs", "x.tsv"], "--pairs is for --task translate"),
        (["--direction", "en-zh"], "--direction is for --task translate"),
        (["--n-sentences", "9"], "--n-sentences is for --task translate"),
        (["--task", "translate", "--direction", "de-en"], "the built-in corpus translates zh-en or en-zh"),
        (["--task", "translate", "--pairs", "/nonexistent.tsv"], "does not exist"),
        (["--task", "translate", "--n-sentences", "0"], "n_sentences"),
        (["--preset", "translate"], "--task translate"),
    ],
)
def test_train_bad_combinations(capsys, tmp_path, argv, match):
    assert match in run_error(capsys, ["train", "--out", str(tmp_path / "o"), "--quiet", *argv])
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- corpus --pairs


def test_corpus_pairs_prints_the_gold_alignment(capsys):
    out, _ = run_ok(capsys, ["corpus", "--pairs", "--heldout", "-n", "2"])
    lines = out.splitlines()
    first = pairs("heldout")[0]
    assert lines[0] == f"1. [{first.kind}] {first.text('zh')}" and lines[1] == f"   {first.text('en')}"
    links = lines[2].strip().split("  ")
    assert "苹果→apple" in links and "我→i" in links and "昨天→yesterday" in links and "。→." in links
    assert "吃 起来 很 脆→it was crunchy" in links and "∅→and" in links  # a phrase; a word with no counterpart
    assert lines[3].startswith("2. [sense] ")
    out, _ = run_ok(capsys, ["corpus", "--pairs", "-n", "3", "--seed", "1"])
    assert out.splitlines()[0] == f"1. [{pairs('train', 1, 3)[0].kind}] {pairs('train', 1, 3)[0].text('zh')}"
    assert len(out.splitlines()) == 9


def test_corpus_heldout_lines(capsys):
    out, _ = run_ok(capsys, ["corpus", "--heldout", "-n", "2", "--lang", "en"])
    assert out.splitlines() == [p.text("en") for p in pairs("heldout")[:2]]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--pairs", "--lang", "en"], "--lang does not apply"),  # with zh it is said in Chinese
        (["--pairs", "--probes", "sense"], "does not go with --pairs"),
    ],
)
def test_corpus_bad_combinations(capsys, argv, match):
    assert match in run_error(capsys, ["corpus", *argv])


# ---------------------------------------------------------------------------- numeric flags (as test_bad_input.py)

NUMBERS = {"zero": "0", "negative": "-1", "huge": "1" + "0" * 30, "nan": "nan", "inf": "inf", "text": "abc"}


@pytest.mark.parametrize(
    "line, flag",
    [
        (["translate", "我 吃了 苹果 。"], "--beam"),
        (["translate", "我 吃了 苹果 。"], "--max-len"),
        (["train", "--task", "translate", "--quiet"], "--n-sentences"),
    ],
)
@pytest.mark.parametrize("kind", NUMBERS)
def test_every_numeric_flag_is_checked(capsys, tmp_path, line, flag, kind):
    """Each of these values is refused in one line (before any training), with no traceback and no warning."""
    argv = [*line, "--out", str(tmp_path / "o")] if line[0] == "train" else line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rc = main([*argv, f"{flag}={NUMBERS[kind]}"])
        except SystemExit as e:  # argparse: a usage error
            rc = e.code
    out, err = capsys.readouterr()
    assert rc != 0 and "Traceback" not in out + err and not caught
    assert len(err.strip().splitlines()) == 1 and err.startswith("qkv: error: "), err
    assert not (tmp_path / "o").exists()


def test_a_sentence_in_the_wrong_language_or_with_a_special_token_is_refused(capsys):
    """The word list holds both languages, so an English sentence would otherwise be 'translated' into nonsense."""
    assert "no Chinese characters" in run_error(capsys, ["translate", "I ate apple ."])
    assert "special token <s>" in run_error(capsys, ["translate", "我 <s> 苹果"])
    line = run_error(capsys, ["translate", "我 龘 苹果 榴莲"])
    assert "'龘'" in line and "'榴莲'" in line and "苹果" not in line  # the unknown words are named, and only those
    out, _ = run_ok(capsys, ["translate", "我昨天吃了苹果，味道很甜。"])  # typed without spaces: cut into known words
    assert out.strip() == "yesterday i ate apple , and it tasted sweet ."


def test_trace_and_check_on_the_bundled_translation_model(capsys, tmp_path):
    """qkv trace traces the source and its greedy translation teacher-forced; --check covers cross-attention."""
    out = tmp_path / "t.json"
    _, err = run_ok(
        capsys,
        [
            "trace",
            "--ckpt",
            str(default_translate_ckpt()),
            "我 昨天 吃了 苹果 ， 味道 很 甜 。",
            "--check",
            "--out",
            str(out),
        ],
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["check"]["passed"] and "FAIL" not in err
    sites = {i.get("site") for i in doc["check"]["items"]}
    assert sites == {"encoder", "decoder", "decoder cross-attention"}
    assert doc["tokens"] == "我 昨天 吃了 苹果 ， 味道 很 甜 。".split()
    assert doc["tgt_tokens"] == ["<s>"] + "yesterday i ate apple , and it tasted sweet .".split()
    pattern = doc["activations"]["decoder.blocks.1.cross_attn.hook_pattern"]
    assert pattern["shape"] == [4, 11, 9]  # (n_heads, T_target, T_source)
    name = "decoder.blocks.0.cross_attn.hook_pattern"
    run_ok(
        capsys,
        ["trace", "--ckpt", str(default_translate_ckpt()), "我 吃了 苹果 。", "--names", name, "--out", str(out)],
    )
    assert list(json.loads(out.read_text(encoding="utf-8"))["activations"]) == [name]


def test_explain_refuses_a_sentence_in_the_wrong_language(capsys):
    ckpt = str(default_translate_ckpt())
    assert "Latin letters: 'apple'" in run_error(capsys, ["translate", "我 吃了 apple 。"])
    assert "no Chinese characters" in run_error(capsys, ["explain", "--ckpt", ckpt, "i ate apple ."])
    assert "no Chinese characters" in run_error(
        capsys, ["figure", "alignment", "--ckpt", ckpt, "--text", "i ate apple .", "--out", "/tmp/never-written.png"]
    )

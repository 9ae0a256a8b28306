"""Every `qkv` subcommand's refusals, walked in both languages, in-process.

Each case is a command line that must be refused: a bad argument type, a missing required argument,
an unknown choice, a missing file, a directory given as a file, a bad value. Run with `--lang en` and
with `--lang zh` (and a few with QKV_LANG=zh instead of --lang), each must end non-zero with exactly
one line on stderr and no traceback. Under zh that line must hold Chinese and no English sentence
(`english_sentences` says precisely what counts as one).

`python tests/test_cli_refusals.py` prints how many cases come out fully Chinese under zh, for the
tree on PYTHONPATH (the count in the issue's note: before and after).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import re
import shutil
import sys
import warnings
from pathlib import Path

import pytest

import qkv
from qkv.apps.cli import main

ASSETS = Path(qkv.__file__).resolve().parent / "assets"
BUNDLED, TRANSLATOR = str(ASSETS / "model"), str(ASSETS / "translate")
HAN = re.compile("[\u4e00-\u9fff]")
ZH_PREFIX, EN_PREFIX = "qkv: 错误：", "qkv: error: "
COMMANDS = (
    "train generate translate info corpus demo lesson trace explain attend figure serve patch heads export tokenize"
).split()
ATTEND = ["attend", "--q", "1,0", "--k", "1,0; 0,1", "--v", "1; 2"]
PATCH = ["patch", "--clean", "我 吃了 苹果", "--corrupt", "他 吃了 苹果", "--answer", "苹果", "--wrong", "我"]

# (what is refused, command line); {tmp} a folder with text.txt in it, {dir} a folder, {missing} nothing
CASES = [
    ("no command", []),
    ("unknown command", ["frob"]),
    ("train: bad int", ["train", "--until", "abc"]),
    ("train: unknown choice", ["train", "--tokenizer", "xyz"]),
    ("train: flag without its value", ["train", "--nproc"]),
    ("train: unknown flag", ["train", "--frobnicate"]),
    ("train: missing text file", ["train", "--text", "{missing}", "--out", "{tmp}/run"]),
    ("train: a directory as the text", ["train", "--text", "{dir}", "--out", "{tmp}/run"]),
    ("train: an empty text file", ["train", "--text", "{tmp}/empty.txt", "--out", "{tmp}/run"]),
    ("train: a text file not UTF-8", ["train", "--text", "{tmp}/latin1.txt", "--out", "{tmp}/run"]),
    ("train: a text too short", ["train", "--text", "{tmp}/short.txt", "--out", "{tmp}/run"]),
    (
        "train: a pairs file with a bad line",
        ["train", "--task", "translate", "--pairs", "{tmp}/bad.tsv", "--out", "{tmp}/run"],
    ),
    ("train: into a checkpoint", ["train", "--out", "{tmp}/ckpt"]),
    ("train: into a folder not qkv's", ["train", "--out", "{tmp}/foreign"]),
    ("train: --resume with a preset", ["train", "--resume", "--out", "{tmp}/ckpt", "--preset", "tiny"]),
    ("train: --resume as the other task", ["train", "--resume", "--task", "translate", "--out", "{tmp}/ckpt"]),
    ("train: a flag of the other task", ["train", "--task", "translate", "--text", "{tmp}/text.txt"]),
    ("train: translate on a GPU", ["train", "--task", "translate", "--device", "cuda", "--out", "{tmp}/run"]),
    ("train: unknown setting", ["train", "--set", "nope=1", "--out", "{tmp}/run"]),
    ("train: setting not a number", ["train", "--set", "lr=abc", "--out", "{tmp}/run"]),
    ("train: unknown preset", ["train", "--preset", "huge", "--out", "{tmp}/run"]),
    ("train: no threads", ["train", "--threads", "0", "--out", "{tmp}/run"]),
    ("translate: a beam of 0", ["translate", "我 吃了 苹果", "--beam", "0"]),
    ("lesson: a file as the output folder", ["lesson", "convex", "--out", "{tmp}/text.txt"]),
    ("figure: no text", ["figure", "hull", "--out", "{tmp}/h.png"]),
    ("train: a family it does not train", ["train", "--set", "arch=bert", "--out", "{tmp}/run"]),
    ("train: the other task's family", ["train", "--set", "arch=seq2seq", "--out", "{tmp}/run"]),
    (
        "train: a vocabulary too small",
        ["train", "--text", "{tmp}/text.txt", "--tokenizer", "word", "--vocab-size", "1", "--out", "{tmp}/run"],
    ),
    ("train: missing pairs file", ["train", "--task", "translate", "--pairs", "{missing}", "--out", "{tmp}/run"]),
    ("train: unknown direction", ["train", "--task", "translate", "--direction", "fr-de", "--out", "{tmp}/run"]),
    ("generate: missing checkpoint", ["generate", "--ckpt", "{missing}"]),
    ("generate: a file as the checkpoint", ["generate", "--ckpt", "{tmp}/text.txt"]),
    ("generate: bad int", ["generate", "--ckpt", BUNDLED, "--top-k", "1.5"]),
    ("generate: bad float", ["generate", "--ckpt", BUNDLED, "--temperature", "warm"]),
    ("generate: seed too large", ["generate", "--ckpt", BUNDLED, "--seed", str(2**64)]),
    ("generate: seed not a number", ["generate", "--ckpt", BUNDLED, "--seed", "abc"]),
    ("generate: samples 0", ["generate", "--ckpt", BUNDLED, "--samples", "0"]),
    ("generate: empty prompt", ["generate", "--ckpt", BUNDLED, "--prompt", ""]),
    ("generate: temperature -1", ["generate", "--ckpt", BUNDLED, "--temperature=-1"]),
    ("generate: top-p 2", ["generate", "--ckpt", BUNDLED, "--top-p", "2"]),
    ("generate: a translation model", ["generate", "--ckpt", TRANSLATOR]),
    ("generate: another tokenizer", ["generate", "--ckpt", "{tmp}/kind"]),
    ("generate: weights of another run", ["generate", "--ckpt", "{tmp}/run_id"]),
    ("generate: a checkpoint without weights", ["generate", "--ckpt", "{tmp}/no_weights"]),
    ("translate: no text", ["translate"]),
    ("translate: bad int", ["translate", "我", "--beam", "abc"]),
    ("translate: max-len 0", ["translate", "我", "--max-len", "0"]),
    ("translate: not a translation model", ["translate", "--ckpt", BUNDLED, "我"]),
    ("translate: missing checkpoint", ["translate", "--ckpt", "{missing}", "我"]),
    ("info: no --ckpt", ["info"]),
    ("info: missing checkpoint", ["info", "--ckpt", "{missing}"]),
    ("info: a file as the checkpoint", ["info", "--ckpt", "{tmp}/text.txt"]),
    ("info: an empty directory", ["info", "--ckpt", "{dir}"]),
    ("info: a config that is not JSON", ["info", "--ckpt", "{tmp}/not_json"]),
    ("info: another tokenizer", ["info", "--ckpt", "{tmp}/kind"]),
    ("corpus: bad int", ["corpus", "-n", "abc"]),
    ("corpus: -n 0", ["corpus", "-n", "0"]),
    ("corpus: seed -1", ["corpus", "--seed=-1"]),
    ("corpus: unknown phenomenon", ["corpus", "--probes", "nope"]),
    ("corpus: probes with pairs", ["corpus", "--probes", "order", "--heldout"]),
    ("demo: unknown flag", ["demo", "--frobnicate"]),
    ("demo: a file as the output", ["demo", "--out", "{tmp}/text.txt"]),
    ("lesson: unknown format", ["lesson", "context", "--format", "pdf"]),
    ("lesson: unknown lesson", ["lesson", "nope"]),
    ("trace: no text", ["trace"]),
    ("trace: empty text", ["trace", ""]),
    ("trace: unknown activation", ["trace", "我", "--names", "hook_nope"]),
    ("trace: missing checkpoint", ["trace", "我", "--ckpt", "{missing}"]),
    ("trace: a directory as the output", ["trace", "我", "--out", "{dir}"]),
    ("trace: output under a file", ["trace", "我", "--out", "{tmp}/text.txt/t.json"]),
    ("trace: output in a missing folder", ["trace", "我", "--out", "{missing}/t.json"]),
    ("explain: no text", ["explain"]),
    ("explain: bad int", ["explain", "我", "--layer", "abc"]),
    ("explain: layer out of range", ["explain", "我 吃了", "--layer", "99", "--head", "0"]),
    ("explain: token out of range", ["explain", "我 吃了", "--token", "-999"]),
    ("explain: unknown format", ["explain", "我", "--format", "pdf"]),
    ("explain: a directory as the page", ["explain", "我", "--html", "{dir}"]),
    ("explain: page in a missing folder", ["explain", "我", "--html", "{missing}/p.html"]),
    ("explain: on a GPU", ["explain", "我", "--device", "cuda"]),
    ("explain: missing checkpoint", ["explain", "我", "--ckpt", "{missing}"]),
    ("attend: nothing given", ["attend"]),
    ("attend: unreadable number", ["attend", "--q", "x", "--k", "1", "--v", "1"]),
    ("attend: unknown format", [*ATTEND, "--format", "pdf"]),
    ("attend: figure suffix", [*ATTEND, "--figure", "{tmp}/a.txt"]),
    ("attend: ragged", ["attend", "--q", "1,2,3", "--k", "1,0; 0,1", "--v", "1; 2"]),
    ("attend: d_k 0", [*ATTEND, "--dk", "0"]),
    ("figure: nothing given", ["figure"]),
    ("figure: unknown kind", ["figure", "nope", "--out", "{tmp}/f.png"]),
    ("figure: bad int", ["figure", "hull", "--layer", "abc", "--out", "{tmp}/f.png"]),
    ("figure: patching without texts", ["figure", "patching", "--out", "{tmp}/f.png"]),
    ("figure: patch flags on another kind", ["figure", "hull", "--clean", "我", "--out", "{tmp}/f.png"]),
    ("figure: a directory as the output", ["figure", "positions", "--out", "{dir}"]),
    ("figure: not an image", ["figure", "positions", "--out", "{tmp}/f.txt"]),
    ("figure: loss without a log", ["figure", "loss", "--log", "{missing}", "--out", "{tmp}/f.png"]),
    ("figure: missing checkpoint", ["figure", "hull", "--text", "我", "--ckpt", "{missing}", "--out", "{tmp}/f.png"]),
    ("serve: bad int", ["serve", "--port", "abc"]),
    ("serve: port out of range", ["serve", "--port", "70000"]),
    ("serve: on a GPU", ["serve", "--device", "cuda"]),
    ("patch: nothing given", ["patch"]),
    ("patch: unknown site", [*PATCH, "--site", "nope"]),
    ("patch: missing checkpoint", [*PATCH, "--ckpt", "{missing}"]),
    ("patch: texts of different lengths", [*PATCH[:3], "他", *PATCH[5:]]),
    ("patch: an unknown answer", [*PATCH[:5], "龘", *PATCH[7:]]),
    ("heads: bad seed", ["heads", "--seed", "abc"]),
    ("heads: missing checkpoint", ["heads", "--ckpt", "{missing}"]),
    ("heads: a translation model", ["heads", "--ckpt", TRANSLATOR]),
    ("export: nothing given", ["export"]),
    ("export: missing checkpoint", ["export", "--ckpt", "{missing}", "--hf", "{tmp}/hf"]),
    ("export: a file as the checkpoint", ["export", "--ckpt", "{tmp}/text.txt", "--hf", "{tmp}/hf"]),
    ("export: into a file", ["export", "--ckpt", BUNDLED, "--hf", "{tmp}/text.txt"]),
    ("export: a translation model", ["export", "--ckpt", TRANSLATOR, "--hf", "{tmp}/hf"]),
]

# the refusals still said in English under zh: each raised as plain text by a module outside the command
# line (strict: when one is said from the catalogue, its test passes and fails here until it is removed)
ELSEWHERE = {}


def english_sentences(line: str, typed: list[str]) -> list[str]:
    """The English sentences in an error line: runs of three or more ASCII words in a row, separated
    only by spaces and ASCII punctuation, once what is not a word of a sentence is taken out:
    what the user typed (each argument of the command line, also as Python's repr quotes it),
    anything quoted, paths (anything with / or \\), flags (-n, --max-len), `qkv` and a subcommand's
    name, and tokens that hold a digit, _, ., = or < > (numbers, n_ctx, float32, hook_z, <pad>)."""
    rest = line.removeprefix(ZH_PREFIX).removeprefix(EN_PREFIX)
    for item in sorted({s for a in typed if a for s in (a, repr(a))}, key=len, reverse=True):
        rest = rest.replace(item, " ")
    rest = re.sub(r"'[^']*'|\"[^\"]*\"", " ", rest)
    rest = re.sub(r"\S*[/\\]\S*", " ", rest)
    rest = re.sub(r"(?<![\w-])--?[A-Za-z][\w-]*", " ", rest)
    rest = re.sub(r"\bqkv(?: (?:" + "|".join(COMMANDS) + r")\b)?", " ", rest)
    rest = re.sub(
        r"[^\s\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]*[\d_.=<>][^\s\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]*",
        " ",
        rest,
    )
    word = r"[A-Za-z]+(?:-[A-Za-z]+)*"  # a hyphenated name (llm-ioi-lens, next-token) is one word
    return re.findall(word + r"(?:[ ,;:()]+" + word + r"){2,}", rest)


def is_chinese(line: str, typed: list[str]) -> bool:
    """A line said in Chinese: it starts as qkv's Chinese errors do, holds Chinese that the user did not
    type, and no English sentence."""
    rest = line.removeprefix(ZH_PREFIX)
    for item in typed:
        rest = rest.replace(item, " ") if item else rest
    return line.startswith(ZH_PREFIX) and bool(HAN.search(rest)) and not english_sentences(line, typed)


def test_the_check_catches_an_english_line():
    """The check can fail: an English sentence, even inside a Chinese line, is caught; names are not."""
    assert english_sentences("qkv: error: the text is empty", [])
    assert english_sentences("qkv: 错误：文件不存在：No such file or directory", [])
    assert english_sentences("qkv: 错误：the model-file is gone", [])
    assert not english_sentences("qkv: 错误：没有课程；可选的课程：llm-ioi-lens、next-token", [])
    assert not is_chinese("qkv: error: the text is empty", [])
    assert not is_chinese("qkv: 错误：参数 --layer：abc is not a number", ["abc"])
    assert not is_chinese("qkv: 错误：the model has 4 layers", [])
    assert not is_chinese("qkv: 错误：我 吃了", ["我 吃了"])  # only what the user typed: not said in Chinese
    line = "qkv: 错误：qkv train --task translate 只读句对；--text、--tokenizer 用于 GPT（收到 'a b c' 和 /x/y z）"
    assert english_sentences(line, []) == [] and is_chinese(line, [])
    assert is_chinese("qkv: 错误：检查点目录 /no such/dir 不存在", ["/no such/dir"])


def spoilt(d: Path) -> Path:
    """`d` with a text file, an empty folder, and copies of the bundled checkpoint spoilt one way each."""
    (d / "text.txt").write_text("one two three\n" * 50, encoding="utf-8")
    (d / "adir").mkdir()
    (d / "empty.txt").write_text("\n", encoding="utf-8")
    (d / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (d / "short.txt").write_text("one two\n", encoding="utf-8")
    (d / "bad.tsv").write_text("我 吃了\tI ate\nno tab here\n", encoding="utf-8")
    (d / "foreign").mkdir()
    (d / "foreign" / "notes.txt").write_text("not a run", encoding="utf-8")
    for name in ("kind", "run_id", "no_weights", "not_json", "ckpt"):
        shutil.copytree(BUNDLED, d / name)
    config = json.loads((d / "kind" / "config.json").read_text(encoding="utf-8"))
    (d / "kind" / "config.json").write_text(json.dumps({**config, "tokenizer": "bpe"}), encoding="utf-8")
    state = json.loads((d / "run_id" / "state.json").read_text(encoding="utf-8"))
    (d / "run_id" / "state.json").write_text(json.dumps({**state, "run": "0" * 16}), encoding="utf-8")
    (d / "no_weights" / state["model"]).unlink()
    (d / "not_json" / "config.json").write_text("{", encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return spoilt(tmp_path_factory.mktemp("refusals"))


def command_line(argv: list[str], tmp: Path) -> list[str]:
    where = {"tmp": str(tmp), "dir": str(tmp / "adir"), "missing": str(tmp / "none")}
    return [a.format(**where) if "{" in a else a for a in argv]


def run(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `qkv ARGV` in this process; a warning is an error here."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.simplefilter("error")
        try:
            code = main(argv)
        except SystemExit as e:  # argparse: a usage error
            code = e.code
    return code, out.getvalue(), err.getvalue()


def refusal(argv: list[str]) -> str:
    """The one line `qkv ARGV` is refused with (asserting the exit status, one line, no traceback)."""
    code, out, err = run(argv)
    assert code not in (0, None), (argv, out, err)
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(autouse=True)
def no_lang_in_env(monkeypatch):
    monkeypatch.delenv("QKV_LANG", raising=False)
    monkeypatch.delenv("QKV_DEBUG", raising=False)


@pytest.mark.parametrize("argv", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_each_refusal_is_one_line_in_english(tmp, argv):
    line = command_line(argv, tmp)
    en = refusal([*line, "--lang", "en"])
    assert en.startswith(EN_PREFIX), en
    assert refusal(line) == en  # English is the default


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(argv, marks=[pytest.mark.xfail(strict=True, reason=ELSEWHERE[name])] if name in ELSEWHERE else [])
        for name, argv in CASES
    ],
    ids=[c[0] for c in CASES],
)
def test_each_refusal_is_one_line_in_chinese(tmp, argv):
    line = command_line(argv, tmp)
    zh = refusal([*line, "--lang", "zh"])
    assert is_chinese(zh, line), (zh, english_sentences(zh, line))


@pytest.mark.parametrize("argv", [argv for name, argv in CASES if name not in ELSEWHERE][::9])
def test_qkv_lang_in_the_environment_says_it_in_chinese_too(tmp, argv, monkeypatch):
    line = command_line(argv, tmp)
    monkeypatch.setenv("QKV_LANG", "zh")
    zh = refusal(line)
    assert is_chinese(zh, line), zh
    assert refusal([*line, "--lang", "en"]).startswith(EN_PREFIX)  # --lang wins over QKV_LANG


@pytest.mark.parametrize(
    "error, en, zh",
    [
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied: ", "没有权限："),
        (OSError(errno.ENOSPC, "No space left on device"), "No space left on device: ", "空间不足："),
        (OSError(errno.EROFS, "Read-only file system"), "Read-only file system: ", "只读"),
    ],
)
def test_errno_on_writing_is_said_in_both_languages(tmp, monkeypatch, error, en, zh):
    """What the system refuses (no permission, a full disk) comes from the catalogue too."""

    def refuse(path, *args, **kwargs):
        error.filename = str(path)
        raise error

    monkeypatch.setattr("qkv.apps.cli.commands.write_text", refuse)  # what `--out` writes with
    argv = ["trace", "我", "--out", str(tmp / "t.json")]
    said = refusal([*argv, "--lang", "en"])
    assert said.startswith(EN_PREFIX) and en in said and str(tmp / "t.json") in said, said
    said = refusal([*argv, "--lang", "zh"])
    assert is_chinese(said, argv) and zh in said and str(tmp / "t.json") in said, said


def walk(tmp: Path) -> tuple[int, list[tuple[str, str]]]:
    """(how many cases are refused fully in Chinese under --lang zh, the others with their line)."""
    chinese, others = 0, []
    for name, argv in CASES:
        line = command_line(argv, tmp)
        code, out, err = run([*line, "--lang", "zh"])
        lines = err.strip().splitlines()
        ok = code not in (0, None) and "Traceback" not in out + err and len(lines) == 1
        if ok and is_chinese(lines[0], line):
            chinese += 1
        else:
            others.append((name, err.strip()[-300:]))
    return chinese, others


if __name__ == "__main__":  # the count: python tests/test_cli_refusals.py (with the tree to count on PYTHONPATH)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        n, others = walk(spoilt(Path(d)))
    for name, said in others:
        print(f"- {name}: {said}")
    print(f"{n} of {len(CASES)} refusals fully in Chinese under --lang zh", file=sys.stderr)


def test_an_errno_without_a_path_is_said_without_one():
    """A full disk met while writing names no file: the sentence alone, in either language."""
    from qkv.apps.cli.errors import said

    full = OSError(errno.ENOSPC, "No space left on device")
    assert said(full, "en") == "No space left on device"
    assert said(full, "zh") == "设备上的空间不足"
    assert said(OSError(errno.EIO, "Input/output error"), "zh") == "[Errno 5] Input/output error"  # no words for it


@pytest.mark.parametrize(
    "value, lang", [("zh", "zh"), ("zh_CN.UTF-8", "zh"), ("en-GB", "en"), ("fr", "en"), ("", "en")]
)
def test_qkv_lang_is_read_as_a_locale_is_written(value, lang):
    from qkv.apps.cli import lang as language

    assert language.decide(None, {"QKV_LANG": value}) == lang
    assert language.decide("en", {"QKV_LANG": value}) == "en"  # --lang wins
    assert language.given(["explain", "x", "--lang=zh"]) == "zh" and language.given(["--", "--lang", "zh"]) is None


def test_lang_before_the_command_is_read_too(tmp):
    zh = refusal(["--lang", "zh", "explain", "我 吃了", "--layer", "99", "--head", "0"])
    assert is_chinese(zh, ["我 吃了"]), zh


def test_the_check_report_is_said_in_both_languages(tmp):
    """qkv trace --check: the English report is the report's own text; the Chinese one holds Chinese on
    every line, each check's name said from the catalogue unless it is only a formula."""
    import json as json_

    from qkv.core.see.invariants import CheckItem, CheckReport

    out = tmp / "trace.json"
    reports = {}
    for lang in ("en", "zh"):
        code, _, err = run(
            ["trace", "--ckpt", TRANSLATOR, "我 吃了 苹果", "--check", "--out", str(out), "--lang", lang]
        )
        assert code == 0, err
        reports[lang] = err.strip().splitlines()
    doc = json_.loads(out.read_text(encoding="utf-8"))["check"]
    assert len(reports["en"]) == len(reports["zh"]) == len(doc["items"]) + 3  # head, weights, items, "wrote"
    assert reports["en"][0] == f"{len(doc['items']) + 1}/{len(doc['items']) + 1} checks pass, evaluation mode"
    assert all(HAN.search(line) for line in reports["zh"]), reports["zh"]
    assert reports["zh"][-1] == f"已写入 {out}"
    from qkv.presentation.check_report import check_report

    failed = CheckReport([CheckItem("rows sum to 1", 2, False, 0.5, 8, [(0, 1, 2, 1.5)], "encoder")], training=True)
    assert check_report(failed, "en") == str(failed)
    assert check_report(failed, "zh").splitlines() == [
        "0/1 项检查通过，训练模式（dropout 生效）",
        "失败 编码器层 2 每行之和为 1：最大偏差 0.5，共检查 8 处；1 处失败，例如 (0, 1, 2, 1.5)",
    ]


@pytest.mark.parametrize("text", ["{", "", "[1,]", '{"a" 1}', "[1 2]", '"abc', '"\\q"', '"\\u12"', "1 2", '"\x01"'])
def test_a_config_that_is_not_json_says_where_in_either_language(text):
    """The English is Python's own message word for word; the Chinese says the line and column in Chinese,
    none of the parser's English words."""
    import json as json_

    from qkv.core.io.json_problem import json_problem
    from qkv.core.io.refusal import Refusal
    from qkv.presentation.i18n import say_error

    with pytest.raises(json_.JSONDecodeError) as info:
        json_.loads(text)
    e = info.value
    error = Refusal.of("errors.ckpt_not_json", path="/x/config.json", error=json_problem(e))
    assert str(error) == f"/x/config.json is not valid JSON: {e}"
    zh = say_error(error, "zh")
    assert f"第 {e.lineno} 行第 {e.colno} 列" in zh and not english_sentences(zh, ["/x/config.json"]), zh


def test_training_says_its_progress_in_the_users_language(tmp):
    """The progress bar's figures and each evaluation's line come from the catalogue (area train)."""
    said = {}
    for lang in ("en", "zh"):
        code, out, err = run(
            ["train", "--preset", "tiny", "--set", "steps=10", "--out", str(tmp / lang), "--lang", lang]
        )
        assert code == 0, err
        said[lang] = err + out
    assert "step 10: train loss" in said["en"] and "tok/s" in said["en"]
    assert "已训练 10 步：训练损失" in said["zh"] and "个词元" in said["zh"] and "步/s" in said["zh"], said["zh"]
    assert "train loss" not in said["zh"] and "tok/s" not in said["zh"]


def test_the_check_report_says_which_weight_is_not_finite_in_chinese():
    from qkv.core.io.refusal import phrase
    from qkv.core.see.invariants import CheckReport
    from qkv.presentation.check_report import check_report

    why = phrase("errors.weights_not_finite", bad=3, name="blocks.0.attn.W_Q")
    report = CheckReport([], training=False, weights=str(why), weights_checked=True, weights_why=why)
    en, zh = check_report(report, "en").splitlines(), check_report(report, "zh").splitlines()
    assert en[1] == f"FAIL {why}" == str(report).splitlines()[1]
    assert zh[1].startswith("失败 ") and "blocks.0.attn.W_Q" in zh[1] and not english_sentences(zh[1], []), zh


def test_demo_says_what_it_does_in_the_users_language(tmp, monkeypatch):
    """qkv demo --quick's own lines (the lessons left out here: they have tests of their own)."""
    from qkv.apps import demo

    monkeypatch.setattr(demo.lessons, "LESSONS", [])
    monkeypatch.setattr(demo, "write_report", lambda results, folder, lang, **kw: folder / "index.html")
    lines = {}
    for lang in ("en", "zh"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            demo.run(out=str(tmp / "demo"), report=str(tmp / f"report_{lang}"), quick=True, lang=lang)
        lines[lang] = [line for line in out.getvalue().splitlines() if line and not line.startswith("  ")]
    assert lines["en"][0].startswith("Using the bundled model") and len(lines["en"]) == len(lines["zh"]) == 5
    assert all(HAN.search(line) and not english_sentences(line, []) for line in lines["zh"]), lines["zh"]

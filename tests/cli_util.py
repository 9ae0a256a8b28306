"""What the command-line tests share: run `qkv` in-process and check how it ended."""

from __future__ import annotations

import json

from qkv.apps.cli import main


def run_ok(capsys, argv) -> tuple[str, str]:
    """Run a command that must succeed; return (stdout, stderr)."""
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err
    return out, err


def run_error(capsys, argv) -> str:
    """Run a command that must fail; return its one error line."""
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc != 0
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("qkv: error: "), lines[0]
    return lines[0]


def log_lines(out) -> list[dict]:
    """Every line of a run's log.jsonl."""
    return [json.loads(line) for line in (out / "log.jsonl").read_text(encoding="utf-8").splitlines()]


def step_losses(out) -> list[tuple[int, float]]:
    return [(d["step"], d["loss"]) for d in log_lines(out) if "loss" in d]


def eval_lines(out) -> list[dict]:
    return [d for d in log_lines(out) if "val_loss" in d]

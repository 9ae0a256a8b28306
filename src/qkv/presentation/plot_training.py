"""Loss curves from the log.jsonl of one or more training runs.

Each training step logs the loss of its own batch (noisy: a light line, and a moving average over
it); each evaluation logs the mean loss on train and on validation batches (points). Validation
loss rising while train loss keeps falling is overfitting.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from qkv.core.io.files import LOG_LIMIT, read_bytes
from qkv.core.io.json_problem import json_problem
from qkv.core.io.refusal import Phrase, Refusal, phrase
from qkv.presentation.figures import check_path, new_figure, save
from qkv.presentation.i18n import lang_of, translator


def read_log(path) -> tuple[list[tuple[int, float]], list[tuple[int, float, float | None]]]:
    """(steps, evals) from a run directory or its log.jsonl: [(step, loss)], [(step, train_loss, val_loss)]."""
    p = Path(path)
    file = p / "log.jsonl" if p.is_dir() or not (p.suffix or p.is_file()) else p
    if not file.exists():
        raise Refusal.of("errors.log_missing", path=file)
    try:
        text = read_bytes(file, LOG_LIMIT, "training log").decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refusal.of("errors.log_not_utf8", path=file, byte=e.start) from None
    steps, evals = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if "loss" in row:
                steps.append((int(row["step"]), float(row["loss"])))
            elif "train_loss" in row:
                val = row.get("val_loss")
                evals.append((int(row["step"]), float(row["train_loss"]), None if val is None else float(val)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
            raise Refusal.of("errors.log_bad_line", path=file, line=n, why=_why(e)) from None
    if not steps and not evals:
        raise Refusal.of("errors.log_no_steps", path=file)
    return steps, evals


def _why(error: Exception) -> Phrase:
    """Why a line of the log was not read: not JSON (where), a field missing (which), or a value of the wrong kind."""
    if isinstance(error, json.JSONDecodeError):
        return json_problem(error)
    if isinstance(error, KeyError):
        return phrase("errors.log_no_field", field=str(error))
    return phrase("errors.log_bad_value")


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last `window` values at each point (fewer at the start)."""
    cumsum = np.cumsum(np.insert(np.asarray(values, dtype=float), 0, 0.0))
    n = np.arange(1, len(values) + 1)
    lo = np.maximum(0, n - window)
    return (cumsum[n] - cumsum[lo]) / (n - lo)


def loss_curves(log_paths, path, labels=None, lang: str | None = None):
    """Per-step loss (light, with a moving average) and evaluation points, one colour per run."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.training")
    check_path(path)
    if isinstance(log_paths, (str, Path)):
        log_paths = [log_paths]
    log_paths = list(log_paths)
    if not log_paths:
        raise Refusal.of("errors.log_none_given")
    if labels is not None and len(labels) != len(log_paths):
        raise Refusal.of("errors.log_labels", labels=len(labels), runs=len(log_paths))
    runs = [read_log(p) for p in log_paths]
    if labels is None:
        labels = [Path(p).name if Path(p).name != "log.jsonl" else Path(p).parent.name for p in log_paths]
    fig = new_figure((8, 5))
    ax = fig.subplots()
    for n, ((steps, evals), label) in enumerate(zip(runs, labels)):
        colour = f"C{n % 10}"
        if steps:
            x, y = np.array(steps).T
            window = max(1, len(y) // 20)
            ax.plot(x, y, color=colour, alpha=0.25, lw=0.8)
            ax.plot(
                x,
                moving_average(y, window),
                color=colour,
                lw=1.6,
                label=say("batch_mean", run=label, window=window) if window > 1 else say("batch", run=label),
            )
        if evals:
            ax.plot(
                [e[0] for e in evals],
                [e[1] for e in evals],
                "o",
                color=colour,
                ms=5,
                mfc="white",
                label=say("train", run=label),
            )
            val = [(e[0], e[2]) for e in evals if e[2] is not None]
            if val:
                ax.plot(*zip(*val), "s--", color=colour, ms=5, lw=1, label=say("val", run=label))
    ax.set_xlabel(say("step"))
    ax.set_ylabel(say("loss"))
    ax.set_title(say("title"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return save(fig, path)

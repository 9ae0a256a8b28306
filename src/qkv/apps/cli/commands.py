"""One handler per `qkv` subcommand: read the parsed arguments, call the Python API, print the result.

No computation lives only here. Imports are made inside each handler, so `qkv --help` and a command
that needs little start fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qkv.apps.cli import describe, tokenize_cmd, translate
from qkv.apps.cli.evaluate import evaluate
from qkv.apps.cli.generate import generate
from qkv.apps.cli.reading import load_model, say_cropped, say_unread
from qkv.core.io.files import check_folder_of, format_bytes, write_text
from qkv.core.io.finite import dumps as finite_dumps
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import t


def _write_or_print(text: str, path, lang: str = "en") -> None:
    if path:
        write_text(path, text + "\n")  # whole or not at all: a failed write leaves the file that was there
        print(t("cli.wrote", lang, path=path), file=sys.stderr)
    else:
        print(text)


def _task(args) -> str:
    """--task, or on --resume without it the task the checkpoint in --out was trained for."""
    if args.task or not args.resume:
        return args.task or "lm"
    from qkv.core.train.checkpoint import read_config
    from qkv.core.train.run import task_of

    try:
        return task_of(read_config(Path(args.out)))
    except (ValueError, OSError):  # no checkpoint there: train() says why
        return "lm"


def _refuse_flags(args, names: list[str], task: str) -> None:
    """Refuse the flags in `names` that were given: they are for the other task (cli.flag(s)_for_<task>)."""
    given = [f"--{n.replace('_', '-')}" for n in names if getattr(args, n) is not None]
    if given:
        raise Refusal.of(f"cli.flag_for_{task}" if len(given) == 1 else f"cli.flags_for_{task}", flags=given)


def _without_nproc(argv: list[str]) -> list[str]:
    """The command line minus --nproc N (each process it starts is one of the N), however argparse
    let it be written: --nproc N, --nproc=N, or a prefix such as --npro N."""
    kept, skip = [], False
    for a in argv:
        name = a.partition("=")[0]
        if skip:
            skip = False
        elif len(name) > 3 and "--nproc".startswith(name):
            skip = "=" not in a
        else:
            kept.append(a)
    return kept


def train(args) -> int | None:
    from qkv.core.machine import processes as distributed

    if args.nproc is not None and args.nproc != 1:
        if distributed.current().size > 1:
            raise Refusal.of("cli.nproc_under_torchrun")
        return distributed.launch(args.nproc, _without_nproc(args.argv))
    task = _task(args)
    if task == "translate":
        from qkv.core.train.translate import train_translation

        _refuse_flags(args, ["text", "data", "tokenizer", "vocab_size", "init"], "gpt")
        if args.device not in ("auto", "cpu") or args.precision not in ("auto", "float32"):
            raise Refusal.of("cli.translate_on_cpu")
        if args.compile:
            raise Refusal.of("accum.compile_translate")
        result = train_translation(
            args.pairs,
            out=args.out,
            direction=args.direction,
            n_sentences=args.n_sentences,
            preset=args.preset,
            overrides=args.overrides,
            resume=args.resume,
            force=args.force,
            until=args.until,
            progress=not args.quiet,
        )
    else:
        from qkv.core.train.lm import train

        _refuse_flags(args, ["pairs", "direction", "n_sentences"], "translate")
        result = train(
            text_path=args.text,
            data=args.data,
            out=args.out,
            tokenizer=args.tokenizer,
            vocab_size=args.vocab_size,
            preset=args.preset,
            overrides=args.overrides,
            resume=args.resume,
            force=args.force,
            until=args.until,
            progress=not args.quiet,
            device=args.device,
            precision=args.precision,
            init=args.init,
            compile=args.compile,
        )
    if not distributed.current().main:
        return None
    print(_trained(result, args.lang))


def _trained(result, lang: str) -> str:
    """The line a finished run ends with: its step, time, speed, losses and checkpoint."""
    val = t("cli.trained_val", lang, val_loss=f"{result.val_loss:.4f}") if result.val_loss is not None else ""
    rate, seconds, loss = f"{result.tokens_per_s:,.0f}", f"{result.seconds:.1f}", f"{result.train_loss:.4f}"
    return t(
        "cli.trained", lang, step=result.step, seconds=seconds, rate=rate, train_loss=loss, val=val, out=result.out
    )


def demo(args) -> None:
    from qkv.apps.demo import run

    run(out=args.out, report=args.report, quick=args.quick, lang=args.lang)


def lesson(args) -> None:
    from qkv import lessons

    if args.list or not args.name:
        titles = lessons.titles(args.lang, real=True)
        width = max(map(len, titles))  # the names in one column, however long the longest
        for name, title in titles.items():
            print(f"{name:<{width}} {title}")
        return
    result = lessons.run(args.name, lang=args.lang, out=args.out, ckpt=args.ckpt)
    if args.format == "json":
        print(finite_dumps(result.to_json(), indent=2))
    else:
        print(result.to_markdown() if args.format == "markdown" else result.to_text(), end="")


def trace(args) -> None:
    import torch

    from qkv.analysis.explain import fit_context
    from qkv.core.see.trace import name_filter

    if args.out:  # its folder must be there: said before the model runs, and not made
        check_folder_of(args.out)
    model, tokenizer = load_model(args.ckpt)
    keep = name_filter(model.cfg, args.names)  # unknown names are an error, with --check too
    if model.family.translates:  # the source and its greedy translation, traced teacher-forced
        from qkv.analysis import cross_attention as cross

        tr = cross.trace(model, cross.read(model, tokenizer, args.text), None if args.check else args.names)
        return _trace_out(tr, tokenizer, args, keep)
    all_ids = tokenizer.encode(args.text)
    ids, cropped = fit_context(model.cfg, tokenizer, all_ids)  # an encoder's text is refused, not cut
    say_unread(tokenizer, args.text, args.lang)
    if cropped:
        say_cropped("text", len(all_ids), model.cfg.n_ctx, args.lang)
    # the check reads every activation, so with --check the whole trace is recorded, then filtered
    _, tr = model.run_with_trace(torch.tensor([ids]), None if args.check else args.names)
    _trace_out(tr, tokenizer, args, keep)


def _trace_out(tr, tokenizer, args, keep) -> None:
    from qkv.core.see.invariants import check
    from qkv.presentation.check_report import check_report

    out = tr.to_json(tokenizer)
    if args.check:
        report = check(tr)
        out["check"] = report.to_json()
        print(check_report(report, args.lang), file=sys.stderr)
        out["activations"] = {k: v for k, v in out["activations"].items() if keep(k)}
    _write_or_print(finite_dumps(out), args.out, args.lang)


def _cpu_only(args) -> None:
    """explain and serve compute on the CPU: qkv.analysis reads weights and activations there."""
    from qkv.core.machine.device import resolve

    if resolve(args.device).type != "cpu":
        raise Refusal.of("errors.cpu_only", command=args.command, device=args.device)


def explain(args) -> None:
    from qkv.presentation.explanation import explain

    _cpu_only(args)
    if args.html:  # its folder must be there: said before the model runs, and not made
        check_folder_of(args.html)
    model, tokenizer = load_model(args.ckpt)
    if args.html:
        from qkv.apps.web.export import export_html

        path = export_html(
            model,
            tokenizer,
            args.text,
            args.html,
            name=str(args.ckpt or "bundled"),
            layer=args.layer,
            head=args.head,
            token=args.token,
            lang=args.lang,
        )
        say_unread(tokenizer, args.text, args.lang)
        print(t("cli.wrote_page", args.lang or "en", path=path, size=format_bytes(path.stat().st_size)))
        return
    ex = explain(
        model,
        tokenizer,
        args.text,
        layer=args.layer,
        head=args.head,
        token=args.token,
        top=args.top,
        lang=args.lang or "en",
    )
    say_unread(tokenizer, args.text, args.lang)
    if args.format == "json":
        print(finite_dumps(ex.to_json(), indent=2))
    else:
        print(ex.to_markdown() if args.format == "markdown" else ex.to_text(), end="")


def attend(args) -> None:
    """Print the derivation in the chosen format; write the figure when asked (its path goes to stderr)."""
    from qkv.presentation.derivation import attend

    if args.figure and not str(args.figure).lower().endswith((".png", ".svg")):
        raise Refusal.of("errors.figure_suffix", path=repr(args.figure))
    if args.figure:  # its folder must be there: said before anything is printed, and not made
        check_folder_of(args.figure)
    d = attend(args.q, args.k, args.v, d_k=args.dk, lang=args.lang)
    if args.figure:  # refused before anything is printed
        from qkv.presentation.plot_hull import check_drawable

        check_drawable(d.V)
    if args.format == "json":
        print(finite_dumps(d.to_json(), indent=2))
    else:
        print({"text": d.to_text, "markdown": d.to_markdown, "latex": d.to_latex}[args.format]())
    if args.figure:
        print(d.figure(args.figure).path, file=sys.stderr)


PATCH_FLAGS = ("clean", "corrupt", "answer", "wrong")  # what qkv figure patching needs (and --site may add)


def figure(args) -> Path:
    from qkv.apps.figure import figure

    if args.kind == "patching":
        return _patching_figure(args)
    given = [f"--{n}" for n in (*PATCH_FLAGS, "site") if getattr(args, n) is not None]
    if given:
        raise Refusal.of("patching.flags_other", flags=", ".join(given))
    path = figure(
        args.kind,
        args.out,
        ckpt=args.ckpt,
        text=args.text,
        layer=args.layer,
        head=args.head,
        token=args.token,
        lang=args.lang,
        log=args.log,
        tokens=args.tokens,
    )
    print(path)
    return path


def _patching_figure(args) -> Path:
    """qkv figure patching: the heat map of activation patching (--clean, --corrupt, --answer, --wrong)."""
    from qkv.analysis.patch import patch_text
    from qkv.presentation.figures import check_path
    from qkv.presentation.plot_patching import patching_heatmap

    missing = [f"--{n}" for n in PATCH_FLAGS if getattr(args, n) is None]
    if missing:
        raise Refusal.of("patching.missing", flags=", ".join(missing))
    out = check_path(args.out)  # before the model runs
    model, tokenizer = load_model(args.ckpt)
    result = patch_text(
        model, tokenizer, args.clean, args.corrupt, args.answer, args.wrong, args.site or "resid_pre", whole=args.whole
    )
    path = patching_heatmap(result.to_json(tokenizer), out, lang=args.lang)
    print(path)
    return path


def patch(args) -> None:
    """qkv patch: the activation-patching table (layers x positions, or layers x heads), or its JSON."""
    from qkv.analysis.patch import patch_text
    from qkv.presentation.patching_table import render

    model, tokenizer = load_model(args.ckpt)
    result = patch_text(
        model, tokenizer, args.clean, args.corrupt, args.answer, args.wrong, site=args.site, whole=args.whole
    )
    for text in (args.clean, args.corrupt):  # read: say what its ids left out
        say_unread(tokenizer, text, args.lang)
    doc = result.to_json(tokenizer)
    if args.json:
        print(finite_dumps(doc, indent=2))
    else:
        print(render(doc, args.lang), end="")


def heads(args) -> None:
    """qkv heads: the head detector's four tables (previous, duplicate, induction, first token), or its JSON."""
    from qkv.analysis.head_scores import head_scores
    from qkv.presentation.heads_table import render

    model, tokenizer = load_model(args.ckpt)
    scores = head_scores(model, tokenizer, seed=args.seed)
    if args.json:
        print(finite_dumps(scores.to_json(), indent=2))
    else:
        print(render(scores, args.lang), end="")


def serve(args) -> None:
    from qkv.apps.web.listen import serve

    _cpu_only(args)
    if not 0 <= args.port <= 65535:  # said here, before the model loads, in the user's language
        raise Refusal.of("cli.port_range", port=args.port)
    serve(args.ckpt, host=args.host, port=args.port)


def export(args) -> None:
    from qkv.core.hub.export import export_hf
    from qkv.core.train.checkpoint import load

    model, tokenizer = load(args.ckpt)
    out = export_hf(model, tokenizer, args.hf)
    print(t("cli.wrote_hf", args.lang, path=out))


COMMANDS = {
    "train": train,
    "generate": generate,
    "translate": translate.translate,
    "info": describe.info,
    "corpus": describe.corpus,
    "demo": demo,
    "lesson": lesson,
    "trace": trace,
    "explain": explain,
    "attend": attend,
    "figure": figure,
    "patch": patch,
    "heads": heads,
    "serve": serve,
    "export": export,
    "eval": evaluate,
    "tokenize": tokenize_cmd.tokenize,
}

"""The `qkv` command: a thin shell over the Python API (no logic lives only here).

Errors in what the user gave (files, settings, checkpoints) print one line and exit non-zero.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys

EXIT_ERROR, EXIT_INTERRUPTED = 1, 130


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other error (subparsers inherit this class)."""

    def error(self, message):
        self.exit(2, f"qkv: error: {message} (see {self.prog} --help)\n")


def _add_train(sub) -> None:
    p = sub.add_parser("train", help="train a GPT on a UTF-8 text file (or the built-in corpus)")
    p.add_argument("--text", metavar="FILE", help="UTF-8 text to train on (default: the built-in corpus)")
    p.add_argument("--tokenizer", choices=("char", "word", "bpe"), default="char")
    p.add_argument("--vocab-size", type=int, help="vocabulary size for bpe (default 512) or word (default: all words)")
    p.add_argument("--preset", default="tiny", help="tiny | baby | small (default tiny)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a model or training setting, e.g. --set n_layers=2 --set lr=3e-4")
    p.add_argument("--out", default="runs/qkv", metavar="DIR", help="checkpoint directory (default runs/qkv)")
    p.add_argument("--resume", action="store_true", help="continue the checkpoint in --out exactly where it stopped")
    p.add_argument("--force", action="store_true", help="replace a checkpoint already in --out")
    p.add_argument("--until", type=int, metavar="STEP", help="stop after this step (the schedule still spans all steps)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_generate(sub) -> None:
    p = sub.add_parser("generate", help="continue a prompt with a trained model, streaming tokens")
    p.add_argument("--ckpt", required=True, metavar="DIR")
    p.add_argument("--prompt", default="\n")
    p.add_argument("--max-new-tokens", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8, help="0 = greedy")
    p.add_argument("--top-k", type=int)
    p.add_argument("--top-p", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--no-cache", action="store_true", help="recompute every position each step (slow; for comparison)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="qkv", description="A Transformer you can see through.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_train(sub)
    _add_generate(sub)
    p = sub.add_parser("info", help="describe a checkpoint")
    p.add_argument("--ckpt", required=True, metavar="DIR")
    p = sub.add_parser("demo", help="train a small GPT on the built-in corpus, then run every lesson into a report")
    p.add_argument("--out", default="runs/demo", metavar="DIR", help="where the trained model goes (default runs/demo)")
    p.add_argument("--report", metavar="DIR", help="where the report goes (default: the --out folder + '-report')")
    p.add_argument("--quick", action="store_true", help="skip training: use the bundled model")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p = sub.add_parser("lesson", help="run one lesson (a measured experiment), or list them")
    p.add_argument("name", nargs="?", help="the lesson (see --list)")
    p.add_argument("--list", action="store_true", help="list the lessons")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p.add_argument("--out", metavar="DIR", help="write the lesson's figures here")
    p.add_argument("--ckpt", metavar="DIR", help="the model to use (default: the bundled model)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p = sub.add_parser("trace", help="every intermediate of one forward pass as JSON (docs/trace-format.md)")
    p.add_argument("--ckpt", metavar="DIR", help="checkpoint directory (default: the bundled model)")
    p.add_argument("text")
    p.add_argument("--names", nargs="+", metavar="NAME", help="keep only these activations (full names)")
    p.add_argument("--check", action="store_true", help="also check the invariants (qkv.check) and add the report")
    p.add_argument("--out", metavar="FILE", help="write the JSON here instead of printing it")
    p = sub.add_parser("serve", help="the explorer: a local web page that shows attention computing, live")
    p.add_argument("--ckpt", metavar="DIR", help="checkpoint directory (default: the bundled model)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this computer only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    from .explain.attend import add_attend_parser
    from .explain.explain import add_explain_parser
    from .explain.figures import add_figure_parser

    add_attend_parser(sub)
    add_explain_parser(sub)
    add_figure_parser(sub)
    return parser


def cmd_train(args) -> None:
    from .train import train

    result = train(text_path=args.text, out=args.out, tokenizer=args.tokenizer, vocab_size=args.vocab_size,
                   preset=args.preset, overrides=args.overrides, resume=args.resume, force=args.force,
                   until=args.until, progress=not args.quiet)
    val = f", val loss {result.val_loss:.4f}" if result.val_loss is not None else ""
    print(f"trained to step {result.step} in {result.seconds:.1f} s ({result.tokens_per_s:,.0f} tokens/s): "
          f"train loss {result.train_loss:.4f}{val}; checkpoint in {result.out}")


def stream(tokenizer, ids, out=None) -> None:
    """Write tokens as they arrive; a character split over several byte tokens waits for its last byte."""
    out = sys.stdout if out is None else out  # looked up now: sys.stdout may have been replaced since import
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for i in ids:
        out.write(decoder.decode(tokenizer.token_bytes(i)))
        out.flush()
    out.write(decoder.decode(b"", final=True))


def cmd_generate(args) -> None:
    from .checkpoint import load
    from .sample import check_sampling, generate_ids

    check_sampling(args.temperature, args.top_k, args.top_p, args.max_new_tokens)
    model, tokenizer = load(args.ckpt)
    ids = tokenizer.encode(args.prompt)
    if not ids:
        raise ValueError("the prompt is empty: give at least one character")
    if len(ids) > model.cfg.n_ctx:
        print(f"warning: the prompt has {len(ids)} tokens; only the last {model.cfg.n_ctx} (n_ctx) are used", file=sys.stderr)
    sys.stdout.write(args.prompt)
    stream(tokenizer, generate_ids(model, ids, args.max_new_tokens, args.temperature, args.top_k, args.top_p,
                                   args.seed, use_cache=not args.no_cache))
    sys.stdout.write("\n")


def cmd_info(args) -> None:
    from .checkpoint import load_checkpoint

    ckpt = load_checkpoint(args.ckpt)
    cfg = ckpt.model.cfg
    print(f"{args.ckpt}: step {ckpt.state['step']}, {ckpt.model.num_params():,} parameters, {ckpt.tokenizer.kind} tokenizer "
          f"with {ckpt.tokenizer.vocab_size} tokens")
    for key, value in cfg.to_dict().items():
        print(f"  {key} = {value}")
    for key in ("train_loss", "val_loss"):
        if ckpt.state.get(key) is not None:
            print(f"  {key}: {ckpt.state[key]:.4f}")


def cmd_demo(args) -> None:
    import time

    from . import lessons
    from .checkpoint import load
    from .lessons.report import write_report
    from .sample import generate

    if args.quick:
        ckpt = lessons.default_ckpt()
        print(f"Using the bundled model ({ckpt}).", flush=True)
    else:
        from .corpus import default_text
        from .tokenizers import train_tokenizer
        from .train import train

        ckpt = args.out
        print("Training a small GPT on the built-in corpus (Chinese and English, word tokens)...", flush=True)
        text = default_text()
        result = train(text, out=ckpt, tokenizer=train_tokenizer("word", text, segment="none"), preset="baby",
                       overrides=["steps=1500", "batch_size=16", "eval_interval=500", "dropout=0"], force=True)
        print(f"val loss {result.val_loss:.3f} after {result.step} steps ({result.seconds:.0f} s, "
              f"{result.tokens_per_s:,.0f} tokens/s); checkpoint in {ckpt}")
    model, tokenizer = load(ckpt)
    print("\nSamples (temperature 0.5): the same word 苹果 continues differently after 吃了 and 投资了")
    for prompt in ("我 昨天 吃了 苹果 ，", "我 投资了 苹果 ，", "i ate apple ,", "i invested in apple ,"):
        print(f"  {prompt}{generate(model, tokenizer, prompt, 12, temperature=0.5, seed=0).split(chr(10))[0]}")
    report_dir = args.report or f"{args.out}-report"
    print(f"\nRunning every lesson ({args.lang}); figures and the report go to {report_dir}", flush=True)
    results, seconds = [], {}
    for name in lessons.LESSONS:
        t = time.perf_counter()
        results.append(lessons.run(name, lang=args.lang, out=report_dir, ckpt=ckpt))
        seconds[name] = round(time.perf_counter() - t, 1)
        print(f"  {name:<11} {seconds[name]:>5.1f} s  {results[-1].headline}", flush=True)
    index = write_report(results, report_dir, args.lang, model=str(ckpt), seconds=seconds)
    print(f"\nReport: {index} (and report.md beside it)")
    serve = "qkv serve" if args.quick else f"qkv serve --ckpt {ckpt}"
    print(f"To watch this model's attention in the browser: {serve}  (then open http://127.0.0.1:8000/)")


def cmd_lesson(args) -> None:
    from . import lessons

    if args.list or not args.name:
        for name, title in lessons.titles(args.lang).items():
            print(f"{name:<12} {title}")
        return
    result = lessons.run(args.name, lang=args.lang, out=args.out, ckpt=args.ckpt)
    if args.format == "json":
        import json

        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(result.to_markdown() if args.format == "markdown" else result.to_text(), end="")


def cmd_trace(args) -> None:
    import json

    import torch

    from .checkpoint import load
    from .checks import check
    from .lessons.base import default_ckpt

    model, tokenizer = load(args.ckpt or default_ckpt())
    ids = tokenizer.encode(args.text)
    if not ids:
        raise ValueError("the text is empty")
    # the check reads every activation, so with --check the whole trace is recorded, then filtered
    _, trace = model.run_with_trace(torch.tensor([ids[-model.cfg.n_ctx:]]), None if args.check else args.names)
    out = trace.to_json(tokenizer)
    if args.check:
        report = check(trace)
        out["check"] = report.to_json()
        print(report, file=sys.stderr)
        if args.names:
            out["activations"] = {k: v for k, v in out["activations"].items() if k in set(args.names)}
    text = json.dumps(out, ensure_ascii=False)
    if args.out:
        from pathlib import Path

        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)


def cmd_serve(args) -> None:
    from .web.server import serve

    serve(args.ckpt, host=args.host, port=args.port)


def _run(name: str):
    """Commands that live next to what they explain (qkv.explain.*)."""
    def run(args):
        from .explain import attend, explain, figures

        {"attend": attend.run_attend, "explain": explain.run_explain, "figure": figures.run_figure}[name](args)
    return run


COMMANDS = {"train": cmd_train, "generate": cmd_generate, "info": cmd_info, "demo": cmd_demo, "lesson": cmd_lesson,
            "trace": cmd_trace, "serve": cmd_serve,
            "attend": _run("attend"), "explain": _run("explain"), "figure": _run("figure")}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `qkv generate ... | head`
        sys.stderr.close()
        return 0
    except (ValueError, OSError, RuntimeError) as e:
        if os.environ.get("QKV_DEBUG"):
            raise
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"qkv: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # a bug in qkv: still one line, the traceback on request
        if os.environ.get("QKV_DEBUG"):
            raise
        print(f"qkv: internal error: {type(e).__name__}: {e} (set QKV_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())

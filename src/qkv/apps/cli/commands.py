"""One handler per `qkv` subcommand: read the parsed arguments, call the Python API, print the result.

No computation lives only here. Imports are made inside each handler, so `qkv --help` and a command
that needs little start fast.
"""

from __future__ import annotations

import codecs
import sys
from pathlib import Path

from qkv.apps.cli import describe, translate
from qkv.core.io.files import check_folder_of, format_bytes, write_text
from qkv.core.io.finite import dumps as finite_dumps
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import t

DEFAULT_NEW = 200  # qkv generate's --max-new-tokens, where the model's context holds them


def _load(ckpt):
    """(model, tokenizer) from --ckpt, or the bundled model when it is not given."""
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.train.checkpoint import load

    return load(ckpt or default_ckpt())


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

        _refuse_flags(args, ["text", "tokenizer", "vocab_size"], "gpt")
        if args.device not in ("auto", "cpu") or args.precision not in ("auto", "float32"):
            raise Refusal.of("cli.translate_on_cpu")
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


def stream(tokenizer, ids, out=None, prev: int | None = None) -> None:
    """Write tokens as they arrive, each after what the tokenizer puts between it and the one before
    (`prev`: the last token already written); a character split over several byte tokens waits for its
    last byte."""
    out = sys.stdout if out is None else out  # looked up now: sys.stdout may have been replaced since import
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for i in ids:
        out.write(decoder.decode(tokenizer.separator(prev, i) + tokenizer.token_bytes(i)))
        out.flush()
        prev = i
    out.write(decoder.decode(b"", final=True))


def _cropped(what: str, n: int, n_ctx: int, lang: str) -> None:
    """Say that only the last n_ctx tokens of the prompt (or the text) were read."""
    print(t(f"cli.cropped_{what}", lang, n=n, n_ctx=n_ctx), file=sys.stderr)


def _unspellable(tokenizer, text, lang) -> None:
    """Say on stderr which characters of `text` the vocabulary cannot spell (its ids leave them out), or,
    for a word tokenizer, which pieces it reads as single characters or UTF-8 bytes (the page's note)."""
    from qkv.core.text.tokenizers.base import shown_chars
    from qkv.core.text.tokenizers.unknown import unknown_pieces
    from qkv.presentation.unknown_words import unknown_notes

    find = getattr(tokenizer, "unspellable", None)
    missing = find(text) if find is not None and isinstance(text, str) else []
    if missing:
        note = t("tokenizer.unspellable_warning", lang or "en", n=len(missing), chars=shown_chars(missing))
        print(note, file=sys.stderr)
    elif isinstance(text, str):
        for line in unknown_notes(unknown_pieces(tokenizer, text), lang):
            print(line, file=sys.stderr)


def _prompt(args, tokenizer) -> tuple[str, list[int]]:
    """(what is printed before the continuation, the ids the model reads): --prompt's text, or with
    --chat the conversation its chat template lays out (not printed: only the answer is)."""
    if args.chat is None:
        if args.system is not None:
            raise Refusal.of("chat.system_without_chat")
        prompt = "\n" if args.prompt is None else args.prompt
        return prompt, tokenizer.encode(prompt)
    from qkv.core.text.chat import chat_ids, messages_of

    if args.prompt is not None:
        raise Refusal.of("chat.with_prompt")
    if args.samples != 1:
        raise Refusal.of("chat.with_samples")
    return "", chat_ids(tokenizer, messages_of(args.chat, args.system))


def generate(args) -> None:
    from qkv.core.decode.sample import check_generates, check_sampling, generate_ids
    from qkv.core.machine.device import resolve

    check_sampling(args.temperature, args.top_k, args.top_p, args.max_new_tokens or DEFAULT_NEW)
    if not 1 <= args.samples <= 1024:
        raise Refusal.of("cli.samples_range", got=args.samples)
    device = resolve(args.device)
    model, tokenizer = _load(args.ckpt)  # without --ckpt, the bundled model
    model.to(device)  # its KV cache is made there too
    check_generates(model)  # before the prompt is printed
    prompt, ids = _prompt(args, tokenizer)
    if not ids:
        raise Refusal.of("cli.prompt_empty")
    _unspellable(tokenizer, args.chat if args.chat is not None else args.prompt, args.lang)
    n_ctx = model.cfg.n_ctx
    if args.max_new_tokens is None:  # as many as every new token can read the whole text for, up to 200
        args.max_new_tokens = max(1, min(DEFAULT_NEW, n_ctx - len(ids) + 1))
    if len(ids) > n_ctx:
        _cropped("prompt", len(ids), n_ctx, args.lang)
    elif len(ids) + args.max_new_tokens - 1 > n_ctx:  # token i is picked from the len(ids) + i before it
        first = n_ctx - len(ids) + 2
        note = t("cli.past_context", args.lang, prompt=len(ids), new=args.max_new_tokens, n_ctx=n_ctx, first=first)
        print(note, file=sys.stderr)
    if args.samples > 1:  # one batch of rows, printed when all are done; row i is seeded seed + i
        from qkv.core.decode.sample import generate_texts

        texts = generate_texts(
            model,
            tokenizer,
            [prompt] * args.samples,
            args.max_new_tokens,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            seed=args.seed,
        )
        for i, text in enumerate(texts):
            print(t("cli.sample", args.lang, i=i + 1, n=args.samples) + f"\n{prompt}{text}")
        return
    sys.stdout.write(prompt)
    try:
        new = generate_ids(  # it ends at the model's end of text (a pretrained model's generation_config.json)
            model,
            ids,
            args.max_new_tokens,
            args.temperature,
            args.top_k,
            args.top_p,
            args.seed,
            use_cache=not args.no_cache,
        )
        stream(tokenizer, new, prev=ids[-1] if prompt else None)
    finally:  # the text's line ends, also before an error (a NaN step) or Ctrl-C is said
        sys.stdout.write("\n")
        sys.stdout.flush()


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
    model, tokenizer = _load(args.ckpt)
    keep = name_filter(model.cfg, args.names)  # unknown names are an error, with --check too
    if model.family.translates:  # the source and its greedy translation, traced teacher-forced
        from qkv.analysis import cross_attention as cross

        tr = cross.trace(model, cross.read(model, tokenizer, args.text), None if args.check else args.names)
        return _trace_out(tr, tokenizer, args, keep)
    all_ids = tokenizer.encode(args.text)
    ids, cropped = fit_context(model.cfg, tokenizer, all_ids)  # an encoder's text is refused, not cut
    _unspellable(tokenizer, args.text, args.lang)
    if cropped:
        _cropped("text", len(all_ids), model.cfg.n_ctx, args.lang)
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
    model, tokenizer = _load(args.ckpt)
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
        _unspellable(tokenizer, args.text, args.lang)
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
    _unspellable(tokenizer, args.text, args.lang)
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
    model, tokenizer = _load(args.ckpt)
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

    model, tokenizer = _load(args.ckpt)
    result = patch_text(
        model, tokenizer, args.clean, args.corrupt, args.answer, args.wrong, site=args.site, whole=args.whole
    )
    for text in (args.clean, args.corrupt):  # read: say what its ids left out
        _unspellable(tokenizer, text, args.lang)
    doc = result.to_json(tokenizer)
    if args.json:
        print(finite_dumps(doc, indent=2))
    else:
        print(render(doc, args.lang), end="")


def heads(args) -> None:
    """qkv heads: the head detector's four tables (previous, duplicate, induction, first token), or its JSON."""
    from qkv.analysis.head_scores import head_scores
    from qkv.presentation.heads_table import render

    model, tokenizer = _load(args.ckpt)
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
}

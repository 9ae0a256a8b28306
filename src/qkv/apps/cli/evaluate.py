"""`qkv eval`: how well a model predicts a text: loss in nats per token, perplexity, bits per byte
(qkv.core.train.evaluate says how the text is cut into windows and what is counted)."""

from __future__ import annotations

from pathlib import Path

from qkv.apps.cli.reading import load_model
from qkv.core.io.finite import dumps as finite_dumps
from qkv.presentation.i18n import t

BUNDLED = "bundled"  # --ckpt bundled: the model the commands read without --ckpt


def evaluate(args) -> None:
    from qkv.core.machine.device import resolve
    from qkv.core.text.batches import read_text
    from qkv.core.train.evaluate import check_evaluates, evaluate_text

    text = read_text(args.text)  # a missing, empty or non-UTF-8 file: one line, before the model loads
    device = resolve(args.device)
    model, tokenizer = load_model(None if args.ckpt == BUNDLED and not Path(BUNDLED).exists() else args.ckpt)
    check_evaluates(model)
    model.to(device)
    ev = evaluate_text(
        model, tokenizer, text, stride=args.stride, ctx=args.ctx, batch=args.batch, progress=not args.quiet
    )
    name = args.ckpt or BUNDLED
    if args.format == "json":
        print(finite_dumps({**ev.to_json(), "model": str(name), "text": str(args.text)}, indent=2))
        return
    print(report(ev, str(name), str(args.text), args.lang))


def report(ev, model: str, text: str, lang: str) -> str:
    """The short block `qkv eval` prints: the figures, what was scored and how the windows were laid."""
    if ev.stride is None:
        windowing = t("evaluate.windowing_apart", lang, ctx=ev.ctx)
    else:
        windowing = t("evaluate.windowing_stride", lang, ctx=ev.ctx, stride=ev.stride, context=ev.ctx - ev.stride)
    return t(
        "evaluate.report",
        lang,
        model=model,
        text=text,
        loss=f"{ev.loss:.4f}",
        perplexity=f"{ev.perplexity:.3f}",
        bits_per_byte=f"{ev.bits_per_byte:.4f}",
        tokens=f"{ev.tokens:,}",
        bytes=f"{ev.bytes:,}",
        windows=f"{ev.windows:,}",
        windowing=windowing,
    )


__all__ = ["evaluate", "report"]

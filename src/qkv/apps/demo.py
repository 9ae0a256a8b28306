"""`qkv demo`: train a small GPT on the built-in corpus (~1.5 min), show what it writes, and run every
lesson into a report (index.html, report.md, figures). `quick` uses the bundled model instead."""

from __future__ import annotations

import time
from pathlib import Path

from qkv import lessons
from qkv.core.decode.sample import generate_texts
from qkv.core.hub.bundled import default_ckpt, learner_tokenizer
from qkv.core.text.corpus import default_text
from qkv.core.train.checkpoint import load
from qkv.core.train.lm import train
from qkv.lessons.common.report import write_report
from qkv.lessons.common.result import check_folder


def run(out="runs/demo", report=None, quick: bool = False, lang: str = "en") -> Path:
    """Train (unless quick), print samples, run every lesson into a report folder; returns its index.html."""
    report_dir = check_folder(report or f"{out}-report", "report")  # before minutes of training, not after
    if quick:
        ckpt = default_ckpt()
        print(f"Using the bundled model ({ckpt}).", flush=True)
    else:
        ckpt = out
        print(
            "Training a small GPT on the built-in corpus (Chinese and English, word tokens, as the bundled model)...",
            flush=True,
        )
        text = default_text()
        result = train(
            text,
            out=ckpt,
            tokenizer=learner_tokenizer(text),
            preset="baby",
            overrides=["steps=1500", "batch_size=16", "eval_interval=500", "dropout=0"],
            force=True,
        )
        print(
            f"val loss {result.val_loss:.3f} after {result.step} steps ({result.seconds:.0f} s, "
            f"{result.tokens_per_s:,.0f} tokens/s); checkpoint in {ckpt}"
        )
    model, tokenizer = load(ckpt)
    print("\nSamples (temperature 0.5): the same word 苹果 continues differently after 吃了 and 投资了")
    prompts = ["我 昨天 吃了 苹果 ，", "我 投资了 苹果 ，", "i ate apple ,", "i invested in apple ,"]
    # one batch: the four rows decode together, each stopping at the end of its line
    for prompt, sample in zip(
        prompts, generate_texts(model, tokenizer, prompts, 12, stop="\n", temperature=0.5, seed=0)
    ):
        print(f"  {prompt}{sample}")
    print(f"\nRunning every lesson ({lang}); figures and the report go to {report_dir}", flush=True)
    results, seconds = [], {}
    for name in lessons.LESSONS:
        t = time.perf_counter()
        # a lesson that cannot read this model's family reads its own default (align: the bundled translation model)
        reads_it = model.family.design in lessons.lesson_module(name).READS
        results.append(lessons.run(name, lang=lang, out=report_dir, ckpt=ckpt if reads_it else None))
        seconds[name] = round(time.perf_counter() - t, 1)
        print(f"  {name:<11} {seconds[name]:>5.1f} s  {results[-1].headline}", flush=True)
    index = write_report(results, report_dir, lang, model=str(ckpt), seconds=seconds)
    print(f"\nReport: {index} (and report.md beside it)")
    serve = "qkv serve" if quick else f"qkv serve --ckpt {ckpt}"
    print(f"To watch this model's attention in the browser: {serve}  (then open http://127.0.0.1:8000/)")
    return index

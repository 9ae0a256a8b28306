"""`qkv demo`: train a small GPT on the built-in corpus (~1.5 min), show what it writes, and run every
lesson into a report (index.html, report.md, figures). `quick` uses the bundled model instead."""

from __future__ import annotations

import time
from pathlib import Path

from qkv import lessons
from qkv.core.decode.sample import generate_texts
from qkv.core.hub.bundled import default_ckpt, learner_tokenizer
from qkv.core.io.refusal import phrase
from qkv.core.text.corpus import default_text
from qkv.core.train.checkpoint import load
from qkv.core.train.lm import train
from qkv.lessons.common.report import write_report
from qkv.lessons.common.result import check_folder
from qkv.presentation.i18n import lang_of, t, translator


def run(out="runs/demo", report=None, quick: bool = False, lang: str | None = None) -> Path:
    """Train (unless quick), print samples, run every lesson into a report folder; returns its index.html.
    Every line in `lang` (None: the language qkv speaks, qkv.set_lang / QKV_LANG)."""
    lang = lang_of(lang)
    say = translator(lang, "demo")
    report_dir = check_folder(
        report or f"{out}-report", phrase("errors.folder_report")
    )  # before minutes of training, not after
    if quick:
        ckpt = default_ckpt()
        print(say("bundled", ckpt=ckpt), flush=True)
    else:
        ckpt = out
        print(say("training"), flush=True)
        text = default_text()
        result = train(
            text,
            out=ckpt,
            tokenizer=learner_tokenizer(text),
            preset="baby",
            overrides=["steps=1500", "batch_size=16", "eval_interval=500", "dropout=0"],
            force=True,
        )
        loss, took, rate = f"{result.val_loss:.3f}", f"{result.seconds:.0f}", f"{result.tokens_per_s:,.0f}"
        print(say("trained", val_loss=loss, steps=result.step, seconds=took, rate=rate, ckpt=ckpt))
    model, tokenizer = load(ckpt)
    print("\n" + say("samples"))
    prompts = ["我 昨天 吃了 苹果 ，", "我 投资了 苹果 ，", "i ate apple ,", "i invested in apple ,"]
    # one batch: the four rows decode together, each stopping at the end of its line
    for prompt, sample in zip(
        prompts, generate_texts(model, tokenizer, prompts, 12, stop="\n", temperature=0.5, seed=0)
    ):
        print(f"  {prompt}{sample}")
    print("\n" + say("lessons", language=lang, report=report_dir), flush=True)
    results, seconds = [], {}
    for name in lessons.LESSONS:
        t0 = time.perf_counter()
        # a lesson that cannot read this model's family reads its own default (align: the bundled translation model)
        reads_it = model.family.design in lessons.lesson_module(name).READS
        results.append(lessons.run(name, lang=lang, out=report_dir, ckpt=ckpt if reads_it else None))
        seconds[name] = round(time.perf_counter() - t0, 1)
        print(lesson_line(name, seconds[name], results[-1].headline, lang), flush=True)
    index = write_report(results, report_dir, lang, model=str(ckpt), seconds=seconds)
    print("\n" + say("report", index=index))
    serve = "qkv serve" if quick else f"qkv serve --ckpt {ckpt}"
    print(say("serve", serve=serve))
    return index


def lesson_line(name: str, seconds: float, headline: str, lang: str) -> str:
    """The progress line of a lesson that has finished: its name (what `qkv lesson` takes), how long it
    took, and its headline, in `lang`."""
    return t("words_zh.lesson_line", lang, name=name, seconds=f"{seconds:.1f}", headline=headline)

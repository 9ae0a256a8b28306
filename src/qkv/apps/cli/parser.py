"""Every `qkv` subcommand and its options (argparse; its errors in the user's language: usage.py). The
handlers are in commands.py, describe.py, generate.py and translate.py. The help texts are English."""

from __future__ import annotations

import argparse

from qkv.apps.cli import lang as language
from qkv.apps.cli.usage import Parser, TypeRefusal
from qkv.presentation.i18n import DEFAULT_LANG

LANGS = ("zh", "en")
FIGURE_KINDS = ("attention", "head", "hull", "positions", "rope", "embedding", "loss", "alignment", "patching")
PATCH_SITES = ("resid_pre", "attn_out", "mlp_out", "z")  # qkv.analysis.patch.SITES (not imported: it imports torch)
ATTEND_FORMATS = ("text", "markdown", "latex", "json")
SEED_MAX = 2**63 - 1


def seed(text: str) -> int:
    """--seed: an integer a torch.Generator takes, the range `--set seed=` and the web page accept."""
    value = int(text)  # not a number: argparse says "invalid seed value", in the user's language
    if not 0 <= value <= SEED_MAX:
        raise TypeRefusal.of("cli.seed_range", max=SEED_MAX, got=text)
    return value


def _lang(p, what: str = "its errors, notes and reports", choices=LANGS) -> None:
    """--lang: every command speaks zh or en (left out: QKV_LANG, else en; qkv.apps.cli.lang decides)."""
    p.add_argument(
        "--lang",
        choices=choices,
        default=argparse.SUPPRESS,  # absent unless given: a subcommand's default would hide `qkv --lang zh CMD`
        help=f"language of {what} (default: QKV_LANG, else en)",
    )


def _device(p, reads: bool = False) -> None:
    if reads:  # explain and serve read every number on the CPU (qkv.analysis works there)
        p.add_argument(
            "--device",
            default="cpu",
            metavar="cpu",
            help="cpu (the default and the only choice: the explanations read every number on the CPU)",
        )
        return
    p.add_argument(
        "--device",
        default="auto",
        metavar="auto|cpu|cuda|mps",
        help="where the model runs (default auto: CUDA, then MPS, then the CPU; cuda:N picks a GPU)",
    )


def _threads(p) -> None:
    p.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="CPU threads (default: one per core that no other program keeps busy; also QKV_THREADS, OMP_NUM_THREADS)",
    )


def _ckpt(p, required: bool = False) -> None:
    p.add_argument(
        "--ckpt",
        required=required,
        metavar="DIR",
        help="checkpoint directory, a Hugging Face model directory (GPT-2, Llama, Mistral, Qwen2, Qwen3, Gemma 2/3, "
        "OLMo-2, GPT-NeoX/Pythia, Phi-3, BERT), a GGUF file, minilm or smollm2"
        + ("" if required else " (default: the bundled model)"),
    )
    _dtype(p)


def _dtype(p) -> None:
    p.add_argument(
        "--dtype",
        choices=("float32", "bfloat16"),  # models.size.DTYPES (not imported: it would import torch)
        help="what the model's weights load as and compute in, a qkv run's or a pretrained model's (default "
        "float32, exact; bfloat16 halves the memory, and is faster where the CPU has AMX or AVX-512 BF16)",
    )


def _add_train(sub) -> None:
    p = sub.add_parser(
        "train", help="train a GPT on a UTF-8 text file (or the built-in corpus), or a translation model"
    )
    p.add_argument(
        "--task",
        choices=("lm", "translate"),
        help="lm: a GPT that continues text (the default); translate: "
        "an encoder-decoder that translates sentence pairs",
    )
    p.add_argument("--text", metavar="FILE", help="UTF-8 text to train on (default: the built-in corpus)")
    p.add_argument(
        "--data",
        metavar="DATA",
        help="token ids written by qkv tokenize (read from disk as needed; its own tokenizer): instead of --text",
    )
    p.add_argument(
        "--init",
        metavar="MODEL",
        help="fine-tune: start from this model (a qkv run, a Hugging Face directory, FILE.gguf, smollm2, hf:NAME) "
        "with its tokenizer; preset finetune by default (docs/finetune.md)",
    )
    p.add_argument(
        "--tokenizer",
        choices=("char", "word", "bpe"),
        help="default char (a new run only, like --vocab-size and --preset)",
    )
    p.add_argument("--vocab-size", type=int, help="vocabulary size for bpe (default 512) or word (default: all words)")
    p.add_argument(
        "--direction",
        metavar="SRC-TGT",
        help="--task translate: zh-en (default) or en-zh; with --pairs, the languages of its two columns",
    )
    p.add_argument(
        "--pairs",
        metavar="FILE.tsv",
        help="--task translate: UTF-8 pairs, one per line, source TAB target, "
        "words separated by spaces (default: the built-in corpus)",
    )
    p.add_argument(
        "--n-sentences",
        type=int,
        metavar="N",
        help="--task translate: training pairs drawn from the built-in corpus (default 20000)",
    )
    p.add_argument(
        "--preset", help="tiny | baby | fast | small (default tiny); translate for --task translate (its default)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a model or training setting, e.g. --set n_layers=2 --set lr=3e-4",
    )
    _train_run(p)
    _lang(p)


def _train_run(p) -> None:
    """qkv train's options of the run itself: where it goes, how far, on how many processes, where."""
    p.add_argument("--out", default="runs/qkv", metavar="DIR", help="checkpoint directory (default runs/qkv)")
    p.add_argument("--resume", action="store_true", help="continue the checkpoint in --out exactly where it stopped")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a qkv checkpoint already in --out (kept until the new one's first)",
    )
    p.add_argument(
        "--until", type=int, metavar="STEP", help="stop after this step (the schedule still spans all steps)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--nproc",
        type=int,
        metavar="N",
        help="train on N processes of this machine (data-parallel, as "
        "torchrun --standalone --nproc-per-node N -m qkv train ...); "
        "batch_size is the global batch, split among them",
    )
    _device(p)
    p.add_argument(
        "--precision",
        default="auto",
        choices=("auto", "float32", "bfloat16", "float16"),
        help="auto: bf16 autocast on CUDA (fp16 with a gradient scaler where bf16 is missing) and on a CPU "
        "with AMX, or AVX-512 BF16 at d_model >= 256; float32 elsewhere; the weights stay float32",
    )
    p.add_argument(
        "--compile", action="store_true", help="torch.compile the model (a compilation first; see docs/training.md)"
    )
    _threads(p)


def _add_generate(sub) -> None:
    p = sub.add_parser("generate", help="continue a prompt with a trained model, streaming tokens")
    _ckpt(p)  # without it, the bundled model, as explain and trace read
    p.add_argument("--prompt", help="the text to continue (default: a line break)")
    p.add_argument("--chat", metavar="TEXT", help="ask a chat model a question, in the layout its chat template gives")
    p.add_argument("--system", metavar="TEXT", help="with --chat: the system message (default: the template's own)")
    p.add_argument(
        "--max-new-tokens",
        type=int,
        help="how many tokens to write (default: 200, or fewer where the model's context could not hold them all)",
    )
    p.add_argument("--temperature", type=float, default=0.8, help="0 = greedy")
    p.add_argument("--top-k", type=int)
    p.add_argument("--top-p", type=float)
    p.add_argument("--seed", type=seed, help="make the sampling reproducible (0 to 2**63 - 1)")
    p.add_argument("--no-cache", action="store_true", help="recompute every position each step (slow; for comparison)")
    p.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="N",
        help="N continuations at once, as one batch (sample i is seeded seed + i; printed when all are done)",
    )
    _device(p)
    _threads(p)
    _lang(p)


def _add_translate(sub) -> None:
    p = sub.add_parser(
        "translate",
        help="translate a sentence with a translation model (encoder-decoder)",
        description="Words are separated by spaces as in the corpus (我 投资了 苹果 ，); text without "
        "spaces is split into known words when it can be. '-' reads one sentence per line "
        "from stdin and prints one translation per line; a line it cannot translate gets its error "
        "on stderr and an empty line, the others still come out, and the exit status is 1.",
    )
    p.add_argument(
        "text", nargs="+", metavar="TEXT", help="the sentence (several arguments are joined by spaces), or -"
    )
    p.add_argument(
        "--ckpt", metavar="DIR", help="checkpoint directory (default: the bundled translation model, zh -> en)"
    )
    p.add_argument("--beam", type=int, default=1, metavar="K", help="beam search with K hypotheses (default 1: greedy)")
    p.add_argument("--max-len", type=int, metavar="N", help="at most N target tokens (default: the model's n_ctx)")
    _lang(p, "its notes and errors")


def _add_described(sub) -> None:
    """The commands that describe what is there: info (a checkpoint) and corpus (the built-in corpus)."""
    p = sub.add_parser("info", help="describe a checkpoint")
    _ckpt(p, required=True)
    _lang(p)
    p = sub.add_parser(
        "corpus", help="print sentences of the built-in corpus, its sentence pairs, or its held-out probes"
    )
    p.add_argument("-n", type=int, default=20, help="how many sentences (or pairs, or probes; default 20)")
    # corpus's --lang also picks the sentences it prints; its errors then speak QKV_LANG's language
    _lang(
        p, "the sentences: zh, en, or both (default: each zh line, then its en), and of its errors", LANGS + ("both",)
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--probes", choices=("sense", "order", "association"), help="print the held-out probes of a phenomenon"
    )
    p.add_argument(
        "--pairs", action="store_true", help="print sentence pairs with their gold word alignment (苹果→apple)"
    )
    p.add_argument("--heldout", action="store_true", help="the held-out sentences (frames never in the training text)")


def _add_lessons(sub) -> None:
    p = sub.add_parser("demo", help="train a small GPT on the built-in corpus, then run every lesson into a report")
    p.add_argument("--out", default="runs/demo", metavar="DIR", help="where the trained model goes (default runs/demo)")
    p.add_argument("--report", metavar="DIR", help="where the report goes (default: the --out folder + '-report')")
    p.add_argument("--quick", action="store_true", help="skip training: use the bundled model")
    _lang(p, "the report")
    p = sub.add_parser("lesson", help="run one lesson (a measured experiment), or list them")
    p.add_argument("name", nargs="?", help="the lesson (see --list)")
    p.add_argument("--list", action="store_true", help="list the lessons")
    _lang(p, "the lesson")
    p.add_argument("--out", metavar="DIR", help="write the lesson's figures here")
    _ckpt(p)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")


def _add_trace(sub) -> None:
    p = sub.add_parser("trace", help="every intermediate of one forward pass as JSON (docs/trace-format.md)")
    _ckpt(p)
    p.add_argument("text")
    p.add_argument("--names", nargs="+", metavar="NAME", help="keep only these activations (full names)")
    p.add_argument("--check", action="store_true", help="also check the invariants (qkv.check) and add the report")
    p.add_argument("--out", metavar="FILE", help="write the JSON here instead of printing it")
    _lang(p, "the check's report and the errors")


def _add_explain(sub) -> None:
    p = sub.add_parser("explain", help="explain what a token attends to and what the model predicts next")
    p.add_argument("text", metavar="TEXT", help="the text to run through the model")
    _ckpt(p)
    p.add_argument("--layer", type=int, help="layer to follow (with --head: one head step by step)")
    p.add_argument("--head", type=int, help="head to follow")
    p.add_argument("--token", type=int, help="query token index (default: the last; negative counts from the end)")
    p.add_argument("--top", type=int, default=5, metavar="N", help="rows in the ranked tables (default 5)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    _lang(p, "the explanation; with --html, the language the page opens in (default: the reader's browser's)")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write the explorer page for TEXT as one self-contained HTML file "
        "(opens from disk, offline; on --layer/--head/--token if given)",
    )
    _device(p, reads=True)
    _threads(p)


def _add_attend(sub) -> None:
    p = sub.add_parser(
        "attend",
        help="derive one query's attention step by step, with exact numbers",
        description="Entries are separated by ',' and rows by ';'. Each is a number as the web page's "
        "playground reads it: sqrt(2) or √2, ln(2) or ln 2, log(x) or log(x, b), exp(), pi or π, e, "
        "fractions, powers (2^-1), and a number before a name multiplies it (2√3, 3 ln 2). "
        "A value starting with '-' needs '=': --q=-1,0",
    )
    p.add_argument("--q", required=True, metavar="VECTOR", help='the query, e.g. "sqrt(2),0"')
    p.add_argument("--k", required=True, metavar="MATRIX", help='the keys, one row each, e.g. "ln(2),0; 0,1; 0,-1"')
    p.add_argument("--v", required=True, metavar="MATRIX", help='the values, one row each, e.g. "0,0; 4,0; 0,4"')
    p.add_argument("--dk", metavar="NUMBER", help="the d_k in s = q·k / √d_k (default: the length of q)")
    _lang(p, "the derivation")
    p.add_argument("--format", choices=ATTEND_FORMATS, default="text", help="output format (default text)")
    p.add_argument("--figure", metavar="PATH", help="also draw the convex-hull picture (.png or .svg)")


def _add_figure(sub) -> None:
    p = sub.add_parser("figure", help="draw a figure (" + ", ".join(FIGURE_KINDS) + ")")
    p.add_argument("kind", choices=FIGURE_KINDS, metavar="KIND", help=" | ".join(FIGURE_KINDS))
    p.add_argument(
        "--ckpt",
        metavar="DIR",
        help="checkpoint or Hugging Face directory (attention, head, hull, embedding; default: the bundled model)",
    )
    _dtype(p)
    p.add_argument("--text", help="the text to run through the model (attention, head, hull)")
    p.add_argument("--layer", type=int, metavar="L", help="layer (head, hull: default 0; attention: default all)")
    p.add_argument("--head", type=int, metavar="H", help="head (head, hull: default 0)")
    p.add_argument("--token", type=int, metavar="T", help="index of the query token (hull; default the last)")
    p.add_argument("--out", required=True, metavar="PATH", help="output file, .png or .svg")
    _lang(p, "titles and labels")
    p.add_argument("--log", action="append", default=[], metavar="DIR", help="a run's directory (loss; repeatable)")
    p.add_argument("--tokens", help="comma-separated tokens to show (embedding)")
    _patch_texts(p, required=False)


def _add_serve(sub) -> None:
    p = sub.add_parser("serve", help="the explorer: a local web page that shows attention computing, live")
    _ckpt(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this computer only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    _device(p, reads=True)
    _threads(p)
    _lang(p, "its errors (the page speaks the reader's browser's language)")


def _patch_texts(p, required: bool) -> None:
    """The options of activation patching: qkv patch, and qkv figure patching."""
    fig = "" if required else "patching: "
    p.add_argument("--clean", required=required, metavar="TEXT", help=fig + "the text whose activations are patched in")
    p.add_argument(
        "--corrupt", required=required, metavar="TEXT", help=fig + "the text that is run (as many tokens as --clean)"
    )
    p.add_argument("--answer", required=required, metavar="WORD", help=fig + "the next token the clean text leads to")
    p.add_argument(
        "--wrong", required=required, metavar="WORD", help=fig + "the next token the corrupted text leads to"
    )
    p.add_argument(
        "--site",
        choices=PATCH_SITES,
        default="resid_pre" if required else None,
        help=fig + "what is patched: resid_pre, attn_out, mlp_out (each layer and position) or z (each head; "
        "default resid_pre)",
    )
    p.add_argument(
        "--whole",
        action="store_true",
        help=fig
        + "patch each layer's whole activation at the site (all positions and heads at once): one number a layer",
    )


def _add_interventions(sub) -> None:
    """The commands that change or score what a model computes: patch, heads."""
    p = sub.add_parser(
        "patch",
        help="activation patching: which layer and position (or head) carries what tells two texts apart",
        description="Runs the corrupted text again and again, each time with one piece of the clean text's "
        "run put in its place, and measures logit(answer) - logit(wrong) at the last position. "
        'Example: qkv patch --clean "我 昨天 吃了 苹果 ，" --corrupt "我 上周 投资了 苹果 ，" '
        "--answer 味道 --wrong 股价",
    )
    _patch_texts(p, required=True)
    _ckpt(p)
    _lang(p, "the table")
    p.add_argument("--json", action="store_true", help='print the kind-"patching" JSON document instead')

    p = sub.add_parser(
        "heads",
        help="the head detector: how much each head looks at the previous token, an earlier copy of its own "
        "token, the token after such a copy (induction) or position 0, on repeated random tokens",
    )
    _ckpt(p)
    _lang(p, "the tables")
    p.add_argument("--seed", type=seed, default=0, help="which random tokens are measured (default 0)")
    p.add_argument("--json", action="store_true", help='print the kind-"head-scores" JSON document instead')


def _add_tokenize(sub) -> None:
    p = sub.add_parser(
        "tokenize",
        help="write a text (or every .txt under a folder) as token ids on disk, for qkv train --data (docs/data.md)",
    )
    p.add_argument(
        "--text", required=True, metavar="FILE|DIR", help="a UTF-8 file, or a folder: every *.txt under it, sorted"
    )
    p.add_argument(
        "--tokenizer",
        default="char",
        metavar="char|word|bpe|RUN|MODEL",
        help="a new tokenizer trained on the text (char, the default; word; bpe), or the tokenizer of a qkv run "
        "or a pretrained model (a directory, smollm2, hf:NAME)",
    )
    p.add_argument("--vocab-size", type=int, help="vocabulary size for a new bpe (default 512) or word tokenizer")
    p.add_argument(
        "--out", required=True, metavar="DATA", help="a new folder for the shards, their index and tokenizer"
    )
    p.add_argument("--shard-tokens", type=int, metavar="N", help="token ids per shard file (default 134217728)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _lang(p)


def _add_export(sub) -> None:
    p = sub.add_parser("export", help="write a checkpoint as a Hugging Face directory (GPT-2 model and tokenizer)")
    _ckpt(p, required=True)
    p.add_argument(
        "--hf",
        required=True,
        metavar="OUT",
        help="the directory to write (must not exist, or be empty); AutoModelForCausalLM and AutoTokenizer load it",
    )
    _lang(p)


def _add_eval(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="how well a model predicts a text: loss (nats per token), perplexity and bits per byte",
        description="Every token of the text after the first is scored once. By default the text's tokens are "
        "cut into windows of --ctx tokens, one after the other; with --stride S each window moves on S tokens "
        "and only its last S predictions are scored (the ones before are context). Bits per byte divide the "
        "nats by ln 2 and by the text's UTF-8 bytes less those of its first token (docs/eval.md).",
    )
    p.add_argument(
        "--ckpt",
        metavar="DIR",
        help="as for generate: a checkpoint or Hugging Face directory, a GGUF file, smollm2, or bundled (the default)",
    )
    _dtype(p)
    p.add_argument("--text", required=True, metavar="FILE", help="the UTF-8 text to score")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--ctx", type=int, metavar="N", help="tokens a window reads (default: the model's n_ctx, at most 1024)"
    )
    p.add_argument(
        "--stride",
        type=int,
        metavar="S",
        help="sliding windows that move on S tokens (1 to --ctx; default: windows that do not overlap)",
    )
    p.add_argument(
        "--batch",
        type=int,
        metavar="B",
        help="windows run at once (default 16, fewer where batch x window x vocabulary would pass 64M logits)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _device(p)
    _threads(p)
    _lang(p, "the report and its errors")


class _Qkv(Parser):
    """The `qkv` parser: what it parses holds every command's --lang settled (lang.settle)."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        language.settle(namespace)
        return namespace, extras


def build_parser(lang: str = DEFAULT_LANG) -> argparse.ArgumentParser:
    """The parser of every subcommand; its usage errors are said in `lang`."""
    parser = _Qkv(prog="qkv", description="A Transformer you can see through.", lang=lang)
    _lang(parser, "every command (also after the command's name)")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_train, _add_generate, _add_translate, _add_described, _add_lessons, _add_trace, _add_explain):
        add(sub)
    for add in (_add_attend, _add_figure, _add_serve, _add_interventions, _add_export, _add_eval, _add_tokenize):
        add(sub)
    return parser

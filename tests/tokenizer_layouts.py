"""Tiny tokenizers laid out as real LLMs' tokenizer.json files are, built offline with `tokenizers`
(trained on CORPUS, or written by hand): for the tests of qkv's tokenizers against transformers'.

    smollm2   ByteLevel pre-tokenizer (GPT-2's regex), no normalizer; its vocabulary lacks the bytes
              the corpus never uses, as SmolLM2's lacks 21
    digits    Sequence[Digits(individual), ByteLevel]
    qwen2     NFC normalizer, Sequence[Split(Qwen2's regex), ByteLevel(use_regex=False)]
    llama3    Sequence[Split(Llama 3's regex), ByteLevel(use_regex=False)], all 256 bytes, ignore_merges,
              <|begin_of_text|> put in front by the post-processor
    prefix    ByteLevel(add_prefix_space=True), all 256 bytes (GPT-2 / RoBERTa read with a prefix space)
    gemma     SentencePiece BPE with byte fallback, Replace(" ", "▁") normalizer, no pre-tokenizer, <bos>
    llama2    SentencePiece BPE with byte fallback, Prepend("▁") + Replace normalizer, <s>
    nobytes   llama2's layout without byte fallback: a character it lacks is <unk>
    unigram   SentencePiece Unigram with a Metaspace pre-tokenizer and decoder (▁ before every text)
    bert      WordPiece, lower-cased, [CLS] … [SEP]
"""

from __future__ import annotations

import json
from functools import cache

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

CORPUS = (
    "When Mary and John went to the store, John gave a drink to Mary. Then Mary said hello.\n"
    "你好，世界！我们今天学习注意力机制。数字 12345 和 2024 年。\n"
    "def f(x):\n    return x ** 2  # square it\n\tprint(f(3))\n"
    "café naïve Ångström 🙂 🎉 <tag> [ok] {a: 1}; \"quote\" 'single' - _ ~ ` @ $ % ^ & * = + | / \\ ?\n"
) * 20
# Chinese, English, code, digits, emoji and special tokens: every character is in CORPUS
TEXT = (
    "<|im_start|>user\nWhen Mary and John went to the store, John gave a drink to Mary.<|im_end|>\n"
    "<|im_start|>assistant\n你好，世界！数字 2024 和 12345。\ndef f(x):\n    return x ** 2  # 🙂🎉 café\n"
    "<|im_end|><|endoftext|>"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
LAYOUTS = ("smollm2", "digits", "qwen2", "llama3", "prefix", "gemma", "llama2", "nobytes", "unigram", "bert")


def _byte_level(pre, normalizer=None, all_bytes=False, ignore_merges=False) -> Tokenizer:
    hf = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre
    hf.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet() if all_bytes else []
    trainer = trainers.BpeTrainer(
        vocab_size=600, show_progress=False, special_tokens=SPECIALS, initial_alphabet=alphabet
    )
    hf.train_from_iterator([CORPUS], trainer=trainer)
    hf.post_processor = processors.ByteLevel(trim_offsets=False)
    return hf


def _split(regex: str):
    split = pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False)
    return pre_tokenizers.Sequence([split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def _pieces(prepend: bool, byte_fallback: bool) -> Tokenizer:
    """SentencePiece BPE as transformers converts it: pieces trained on CORPUS with ▁ for spaces, the
    256 <0x..> pieces after the specials (with byte fallback), <bos>/<s> put in front."""
    trained = Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")  # pieces within words, as spm's
    trained.train_from_iterator([CORPUS], trainer=trainers.BpeTrainer(vocab_size=600, show_progress=False))
    base = json.loads(trained.to_str())["model"]
    head = ["<pad>", "<eos>", "<bos>", "<unk>"] if not prepend else ["<unk>", "<s>", "</s>"]
    vocab = {t: i for i, t in enumerate(head)}
    for b in range(256) if byte_fallback else ():
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in base["vocab"]:
        vocab.setdefault(piece, len(vocab))
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in base["merges"]]
    model = models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=byte_fallback, fuse_unk=True)
    hf = Tokenizer(model)
    steps = [normalizers.Prepend("▁")] if prepend else []
    hf.normalizer = normalizers.Sequence([*steps, normalizers.Replace(" ", "▁")])
    strip = [decoders.Strip(" ", 1, 0)] if prepend else []
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), *strip])
    bos = head[1] if prepend else "<bos>"
    hf.add_special_tokens([*head, *SPECIALS])
    hf.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=[(bos, vocab[bos])]
    )
    return hf


def _unigram() -> Tokenizer:
    hf = Tokenizer(models.Unigram())
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=500, special_tokens=["<unk>", *SPECIALS], unk_token="<unk>")
    hf.train_from_iterator([CORPUS], trainer=trainer)
    return hf


def _bert() -> Tokenizer:
    hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    hf.train_from_iterator([CORPUS], trainer=trainers.WordPieceTrainer(vocab_size=400, special_tokens=specials))
    cls, sep = hf.token_to_id("[CLS]"), hf.token_to_id("[SEP]")
    hf.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return hf


@cache
def _built(name: str) -> str:
    if name == "smollm2":
        hf = _byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True))
    elif name == "digits":
        digits = pre_tokenizers.Digits(individual_digits=True)
        hf = _byte_level(pre_tokenizers.Sequence([digits, pre_tokenizers.ByteLevel(add_prefix_space=False)]))
    elif name == "qwen2":
        hf = _byte_level(_split(QWEN2), normalizer=normalizers.NFC())
    elif name == "llama3":
        hf = _byte_level(_split(LLAMA3), all_bytes=True, ignore_merges=True)
        hf.add_special_tokens(["<|begin_of_text|>"])
        bos = hf.token_to_id("<|begin_of_text|>")
        hf.post_processor = processors.Sequence(
            [
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(
                    single="<|begin_of_text|> $A",
                    pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                    special_tokens=[("<|begin_of_text|>", bos)],
                ),
            ]
        )
    elif name == "prefix":
        hf = _byte_level(pre_tokenizers.ByteLevel(add_prefix_space=True), all_bytes=True)
    elif name in ("gemma", "llama2", "nobytes"):
        hf = _pieces(prepend=name != "gemma", byte_fallback=name != "nobytes")
    elif name == "unigram":
        hf = _unigram()
    elif name == "bert":
        hf = _bert()
    else:
        raise KeyError(name)
    return hf.to_str()


def build(name: str) -> Tokenizer:
    """A fresh `tokenizers` object of layout `name` (one of LAYOUTS); trained once per process."""
    return Tokenizer.from_str(_built(name))

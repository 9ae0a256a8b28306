"""What a tokenizer_config.json changes in how transformers 5 reads the tokenizer.json beside it.

transformers keeps a tokenizer.json's pipeline as written when tokenizer_config.json names no class
of its own ("PreTrainedTokenizerFast", "TokenizersBackend"). A class that builds its own pipeline
keeps only the file's vocabulary, merges, added tokens and post-processor:

    LlamaTokenizer  (Llama 2, Mistral, TinyLlama, Phi-3): no normalizer; Metaspace puts ▁ in front of
                    the text ("add_prefix_space", default true) at its start only, or also after each
                    added token when "legacy" is true (as the Prepend("▁") of older files does)
    GPT2Tokenizer   (GPT-2, SmolLM2): no normalizer; ByteLevel with GPT-2's own regex, a space in front
                    when "add_prefix_space" is true
    another class   its ByteLevel steps put a space in front when "add_prefix_space" is true (Qwen2)

`as_transformers_reads` gives a `tokenizers` object that pipeline, so qkv's ids are the ids
`AutoTokenizer.from_pretrained(directory)` gives (tests/test_tokenizer_layouts.py checks each rule).
"""

from __future__ import annotations

import json

from qkv.core.text.tokenizers.layout import SPACE, layout_of, pipeline

LLAMA_CLASSES = ("LlamaTokenizer", "LlamaTokenizerFast")
GPT2_CLASSES = ("GPT2Tokenizer", "GPT2TokenizerFast")
GENERIC = (None, "PreTrainedTokenizerFast", "TokenizersBackend")  # the file's pipeline as written


def as_transformers_reads(hf, config: dict) -> None:
    """Give `hf` (read from tokenizer.json) the pipeline transformers 5 gives it for `config` (the
    directory's tokenizer_config.json; see the module docstring)."""
    from tokenizers import decoders, pre_tokenizers

    cls, layout = config.get("tokenizer_class"), layout_of(pipeline(hf))
    prefix = config.get("add_prefix_space")
    if cls in LLAMA_CLASSES and layout == "pieces":
        prefix = True if prefix is None else bool(prefix)
        scheme = ("always" if config.get("legacy") is True else "first") if prefix else "never"
        hf.normalizer = None
        hf.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme=scheme, split=False)
        steps = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
        hf.decoder = decoders.Sequence(steps + ([decoders.Strip(" ", 1, 0)] if prefix else []))
    elif cls in GPT2_CLASSES and layout == "bpe":
        hf.normalizer = None
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix is True)
        hf.decoder = decoders.ByteLevel()
    elif cls not in GENERIC and isinstance(prefix, bool) and layout == "bpe" and hf.pre_tokenizer is not None:
        hf.pre_tokenizer = _with_prefix_space(hf.pre_tokenizer, prefix)


def _with_prefix_space(pre, prefix: bool):
    """The pre-tokenizer `pre` with add_prefix_space set to `prefix` in each of its ByteLevel steps."""
    from tokenizers import Tokenizer

    def edit(step: dict) -> dict:
        if step.get("type") == "ByteLevel":
            return {**step, "add_prefix_space": prefix}
        if step.get("type") == "Sequence":
            return {**step, "pretokenizers": [edit(s) for s in step.get("pretokenizers", [])]}
        return step

    spec = {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}}  # a carrier for one part
    return Tokenizer.from_str(json.dumps({**spec, "pre_tokenizer": edit(json.loads(pre.__getstate__()))})).pre_tokenizer


__all__ = ["LLAMA_CLASSES", "GPT2_CLASSES", "GENERIC", "as_transformers_reads"]

"""The model families, and what each one is and can do: the one place the rest of qkv asks.

    family_of(cfg).generates            can it continue a text? (qkv generate, the page's button)
    model.family.stacks                 its stacks of blocks, each with its mask and its tap prefix
    family_of(cfg).layers(cfg, "encoder")  how many blocks a stack has

A family is data, not code: the CLI, the server, the analysis, the checks and the trace read these
fields instead of testing `cfg.arch`. A new family is one entry here, its model class and its
loader; nothing else needs to learn its name. (TransformerLens 4 keeps one adapter per family in the
same spirit; qkv's families share every module, so an entry is only what differs.)

Three families today:

    gpt      a decoder-only language model: embeddings, causal blocks, LN_final, h W_out + b
    bert     an encoder: embeddings, LN_embed, bidirectional post-norm blocks; hidden states out
    seq2seq  an encoder-decoder: an encoder stack, a decoder stack with cross-attention, h W_out + b
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Stack:
    """One stack of blocks: its name (its tap prefix, and the model's attribute that holds it: Seq2Seq.encoder;
    "": the model's own .blocks), its size field, its mask, what it reads."""

    name: str  # "" for a model of one stack, else "encoder" or "decoder" (taps: "encoder.blocks.0. ...")
    layers: str  # the ModelConfig field that counts its blocks
    causal: bool | None  # its self-attention's mask: True, False, or None for cfg.causal
    cross: bool = False  # its blocks also attend to the encoder's output (cross-attention)
    padded: bool = True  # its tokens are the model's input ids, which may be a padded batch
    embed_norm: bool = False  # a LayerNorm over its embeddings (BERT's ln_embed)
    final_norm: str = "pre"  # its closing LayerNorm: "pre" (with pre-norm blocks only), "always" or "none"

    @property
    def prefix(self) -> str:
        """What every tap name of this stack starts with: "" or "encoder." / "decoder."."""
        return f"{self.name}." if self.name else ""

    def is_causal(self, cfg) -> bool:
        return cfg.causal if self.causal is None else self.causal


@dataclass(frozen=True)
class Family:
    arch: str  # the value of ModelConfig.arch
    model: str  # "module:Class" of its model class, under qkv.core.model
    title: str  # how a message names one of its models: "a GPT"
    design: str  # its stacks' design: "decoder" (-only), "encoder" (-only) or "encoder-decoder" (the page, the lessons)
    stacks: tuple[Stack, ...]  # in the order of the computation; the last one writes the output
    next_token: bool  # it ends in an unembedding: logits and P(next token) (the documents' has_lm_head)
    generates: bool  # it continues a text from a prompt (qkv generate)
    translates: bool  # it writes a target sentence for a source sentence (qkv translate, beam search)
    trains: str | None  # the task qkv train trains it with ("lm", "translate"), or None: it is only loaded
    exports_hf: bool  # qkv export writes it as a Hugging Face directory
    fields: tuple[str, ...] = ()  # ModelConfig fields only this family reads (the others must leave them unset)
    needs: tuple[tuple[str, str], ...] = ()  # (boolean ModelConfig field that must be true for it, why)
    llm_parts: bool = False  # it may be built of the parts of today's LLMs: RMSNorm, gated MLP, grouped-query attention

    @property
    def one_stack(self) -> bool:
        """A model of one stack of blocks (model.blocks): a GPT or an encoder, not an encoder-decoder."""
        return len(self.stacks) == 1

    def stack(self, name: str | None = None) -> Stack:
        """The stack called `name`; None: the last one (the decoder of an encoder-decoder)."""
        if name is None:
            return self.stacks[-1]
        for s in self.stacks:
            if s.name == name:
                return s
        names = ", ".join(s.name for s in self.stacks if s.name) or "none: it has one stack"
        raise KeyError(f"{self.title} has no stack {name!r} (its stacks: {names})")

    def layers(self, cfg, stack: str | None = None) -> int:
        """How many blocks the stack has (the last stack's by default)."""
        return getattr(cfg, self.stack(stack).layers)

    def model_class(self):
        module, name = self.model.split(":")
        return getattr(importlib.import_module(f"qkv.core.model.{module}"), name)


_ONE = Stack("", "n_layers", causal=None)

# fmt: off
FAMILIES: dict[str, Family] = {
    f.arch: f
    for f in (
        Family(
            "gpt", "gpt:GPT", "a GPT", "decoder", (_ONE,),
            next_token=True, generates=True, translates=False, trains="lm", exports_hf=True, llm_parts=True,
        ),
        Family(
            "bert", "encoder:Encoder", "an encoder", "encoder",
            (Stack("", "n_layers", causal=None, embed_norm=True, final_norm="none"),),
            next_token=False, generates=False, translates=False, trains=None, exports_hf=False,
            fields=("n_token_types",),
        ),
        Family(
            "seq2seq", "seq2seq:Seq2Seq", "a translation model (encoder-decoder)", "encoder-decoder",
            (
                Stack("encoder", "n_encoder_layers", causal=False, final_norm="always"),
                Stack("decoder", "n_layers", causal=True, cross=True, padded=False, final_norm="always"),
            ),
            next_token=True, generates=False, translates=True, trains="translate", exports_hf=False,
            fields=("n_encoder_layers", "share_embeddings"),
            needs=(("causal", "its decoder is causal"), ("residual", "it has no block without residual connections")),
        ),
    )
}
# fmt: on

# ModelConfig fields that some family owns: a config of another family leaves them at their defaults
OWNED_FIELDS = tuple(dict.fromkeys(name for f in FAMILIES.values() for name in f.fields))


def family_of(cfg_or_arch) -> Family:
    """The family of a ModelConfig (or of an arch name)."""
    arch = cfg_or_arch if isinstance(cfg_or_arch, str) else cfg_or_arch.arch
    try:
        return FAMILIES[arch]
    except KeyError:
        raise ValueError(f"arch must be one of {', '.join(FAMILIES)}; got {arch!r}") from None

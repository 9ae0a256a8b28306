"""BERT (model_type bert: BertModel, BertFor*, sentence-transformers' all-MiniLM-L6-v2) as a qkv Encoder.

A post-norm encoder with learned positions and token types: each block is LN1(x + Attn(x)), then
LN2(x + MLP(x)). Its query, key and value are stored apart (attention.self.query, key, value) and are
stacked into qkv's W_QKV. The tokenizer is WordPiece, from tokenizer.json or vocab.txt; in a
sentence-transformers directory its inputs are cut at sentence_bert_config.json's max_seq_length.
"""

from __future__ import annotations

from pathlib import Path

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.fields import EPSILON, PROBABILITY, SIZES, checked, integer, one_of
from qkv.core.io.files import read_json_object
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.spec.config import Activation, ModelConfig

# ------------------------------------------------------------------ the config map

# what transformers leaves out of config.json when a value is its default
_DEFAULTS = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=512,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
    position_embedding_type="absolute",
    is_decoder=False,
)
_ACT: dict[str, Activation] = {
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "relu": "relu",
}
_FIELDS = {
    **SIZES,
    "hidden_act": one_of(*_ACT),
    "hidden_dropout_prob": PROBABILITY,
    "attention_probs_dropout_prob": PROBABILITY,
    "max_position_embeddings": integer(1, 1_000_000),
    "type_vocab_size": integer(1, 1024),  # transformers' BertModel looks up token type 0 whatever the input
    "layer_norm_eps": EPSILON,
    "position_embedding_type": one_of("absolute"),
    "is_decoder": (lambda v: v is False, phrase("hub.wants_bert_encoder")),
}


def bert_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a transformers BertConfig (as a dict), every field checked."""
    hc = checked(hc, _FIELDS, _DEFAULTS, ("hidden_size", "num_attention_heads"))
    return ModelConfig(
        arch="bert",
        d_vocab=hc["vocab_size"],
        n_ctx=hc["max_position_embeddings"],
        d_model=hc["hidden_size"],
        n_heads=hc["num_attention_heads"],
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="learned",
        norm="post",
        causal=False,
        n_token_types=hc["type_vocab_size"],
        dropout_embed=hc["hidden_dropout_prob"],
        dropout_resid=hc["hidden_dropout_prob"],
        dropout_attn=hc["attention_probs_dropout_prob"],
        bias=True,
        unembed_bias=False,
        activation=_ACT[hc["hidden_act"]],
        ln_eps=hc["layer_norm_eps"],
    )


# ------------------------------------------------------------------ the weight map


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names), stored by BertModel (no prefix) or a BertFor* class ("bert.")."""
    one = lambda name: names.one(name, ("", "bert."))
    plan = {
        "embed.weight": one("embeddings.word_embeddings.weight"),
        "pos_embed.W_pos": one("embeddings.position_embeddings.weight"),
        "token_type_embed.weight": one("embeddings.token_type_embeddings.weight"),
        "ln_embed.weight": one("embeddings.LayerNorm.weight"),
        "ln_embed.bias": one("embeddings.LayerNorm.bias"),
    }
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"encoder.layer.{i}."
        for part in ("weight", "bias"):  # W_QKV = [W_Q; W_K; W_V], as in GPT-2's c_attn
            stacked = [names.take(h + f"attention.self.{m}.{part}", ("", "bert.")) for m in ("query", "key", "value")]
            plan[q + f"attn.W_QKV.{part}"] = ("cat", stacked)
            plan[q + f"attn.W_O.{part}"] = one(h + f"attention.output.dense.{part}")
            plan[q + f"ln1.{part}"] = one(h + f"attention.output.LayerNorm.{part}")  # LN1(x + Attn(x))
            plan[q + f"mlp.fc_in.{part}"] = one(h + f"intermediate.dense.{part}")
            plan[q + f"mlp.fc_out.{part}"] = one(h + f"output.dense.{part}")
            plan[q + f"ln2.{part}"] = one(h + f"output.LayerNorm.{part}")  # LN2(x + MLP(x))
    return plan


# ------------------------------------------------------------------ the tokenizer


def max_seq_length(conf: dict, n_ctx: int) -> int:
    """sentence_bert_config.json's max_seq_length: where a sentence-transformers model cuts its inputs,
    at most n_ctx (max_position_embeddings), since a longer input does not fit the model."""
    return checked(conf, {"max_seq_length": integer(1, n_ctx)})["max_seq_length"]


def read_tokenizer(d: Path, cfg: ModelConfig):
    """WordPiece from tokenizer.json or vocab.txt, cut at max_seq_length in a sentence-transformers directory."""
    from qkv.core.text.tokenizers.wordpiece import WordPieceTokenizer

    if not (d / "tokenizer.json").exists() and not (d / "vocab.txt").exists():
        raise Refusal.of("hub.no_wordpiece_tokenizer", path=d)
    tokenizer = WordPieceTokenizer.from_dir(d)
    st = d / "sentence_bert_config.json"
    if st.exists():
        conf = read_json_object(st)
        try:
            tokenizer.max_length = max_seq_length(conf, cfg.n_ctx)
        except ValueError as e:
            raise Refusal.of("hub.in_file", path=st, error=e) from None
    return tokenizer


ADAPTER = Adapter(
    titles=("BERT",),
    model_types=("bert",),
    config=bert_config,
    weights=weight_map,
    tokenizer=read_tokenizer,
    tokenizer_files=("tokenizer.json", "tokenizer_config.json", "vocab.*"),
    ignored=r"^(pooler|cls)\.",  # the heads of BertModel and BertFor* that an encoder does not use
    order=2,
    head="",  # an encoder: its MLM head (cls.) is not read
)

"""A GGUF file as a qkv model: its header checked, its config through the family's adapter, its
tensors dequantized one at a time into a model built on the meta device (hub/read.py's filling).

    model, tokenizer = load_gguf(Path("model.Q4_K_M.gguf"), "float32")

Everything is checked before the model is allocated: the header (hub/gguf/header.py), the
architecture and the config the metadata amounts to (hub/gguf/archs.py, then the adapter's own checks,
field by field), that the model fits in memory, that every tensor's type can be dequantized, and every
tensor's shape against the config.
"""

from __future__ import annotations

from pathlib import Path

from qkv.core.hub.adapter import adapter_for
from qkv.core.hub.gguf.archs import arch_of, gguf_name, hf_config, hf_names
from qkv.core.hub.gguf.find import title_of
from qkv.core.hub.gguf.header import Header, read_header
from qkv.core.hub.gguf.tensors import GgufTensor, readable
from qkv.core.hub.gguf.tokenizer import read_tokenizer
from qkv.core.hub.read import StoredNames, fill_model
from qkv.core.hub.size import check_fits
from qkv.core.io.refusal import Refusal


class _Names(StoredNames):
    """StoredNames that says a missing tensor by its GGUF name."""

    def __init__(self, header: Header, theirs: dict):
        super().__init__(header.path, theirs)
        self.header = header

    def take(self, name: str, prefixes: tuple[str, ...] = ("",)) -> str:
        try:
            return super().take(name, prefixes)
        except Refusal as e:
            if e.key != "hub.tensor_missing":
                raise
            raise Refusal.of("hub.tensor_missing", path=self.d, name=gguf_name(self.header, e.fields["name"])) from None


def _stored(header: Header, cfg) -> dict:
    """Hugging Face name -> GgufTensor, each with what llama.cpp's converter did to it (its Arch's layout)."""
    _, arch = arch_of(header)
    theirs = {}
    for hf, name in hf_names(header).items():
        info = header.tensors[name]
        if not readable(info.ggml_type):
            raise Refusal.of("gguf.tensor_type", path=header.path, name=name, kind=info.type_name)
        theirs[hf] = (
            GgufTensor(header.path, info, arch.layout(hf, cfg)) if arch.layout else GgufTensor(header.path, info)
        )
    return theirs


def load_gguf(path: Path, dtype: str = "float32", ref=None):
    """(model in eval mode, tokenizer) of the GGUF file `path`, its weights in `dtype`; `ref` what the
    user called it ("smollm2", a directory: model.loaded_from names it)."""
    header = read_header(path)
    hc = hf_config(header)
    adapter = adapter_for(hc, path)
    try:
        cfg = adapter.config(hc)
    except (ValueError, TypeError) as e:
        raise Refusal.of("hub.in_file", path=path, error=e) from None
    check_fits(cfg, path, dtype)
    tokens = header.get("tokenizer.ggml.tokens")
    if isinstance(tokens, list) and len(tokens) > cfg.d_vocab:
        raise Refusal.of("hub.vocab_larger", path=path, n=len(tokens), d_vocab=cfg.d_vocab)
    theirs = _stored(header, cfg)
    try:
        model = fill_model(path, adapter, cfg, theirs, dtype, _Names(header, theirs))
    except Refusal as e:  # said of config.json by the shared reading; here the metadata is the config
        if e.key != "hub.tensor_shape":
            raise
        raise Refusal.of("gguf.tensor_shape", **e.fields) from None
    tokenizer = read_tokenizer(header)  # after the weights: its tables and the dequantizing never add up
    model.loaded_from = {
        "name": str(path if ref is None else ref),
        "path": str(Path(path).resolve()),
        "architecture": header.get("general.architecture"),
        "title": title_of(path if ref is None else ref, header),
    }
    tokenizer.padded_size = cfg.d_vocab
    stops = [i for i in (tokenizer.eos_id, tokenizer.eot_id) if i is not None]
    model.stop_ids = tuple(dict.fromkeys(stops))
    return model.eval(), tokenizer

"""The reading every family shares: config.json through the family's config map, its size checked
before anything is allocated, then the weight files the layout names, tensor by tensor, into the model.

    cfg = family_config(d, adapter, hc, "float32")     # every field checked, and that it fits in memory
    model = read_model(d, adapter, cfg, "float32")     # the weights the adapter's weight map names

Nothing here knows a family: the adapter (hub/adapter.py) says which stored tensors make each qkv
parameter, which stored tensors it leaves alone, and the config's fields. Everything is checked from
the headers (names, shapes, dtypes against size.param_shapes) before the model is built; it is built on
the meta device (no random numbers drawn for weights about to be replaced) and filled one tensor at a
time, in the dtype asked for (float32, the default, for exactness; bfloat16 halves the memory).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from qkv.core.hub.size import DTYPES, FLOAT_DTYPES, check_fits, param_shapes
from qkv.core.hub.weights import stored_tensors
from qkv.core.io.refusal import Refusal, phrase, said
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig

# buffers transformers may save beside any family's weights (the positions 0..n_ctx-1)
_BUFFERS = r"(^|\.)position_ids$"


def checked_dtype(dtype: str) -> str:
    """`dtype` if a model can be loaded in it, else a one-line refusal."""
    if dtype not in DTYPES:
        raise Refusal.of("hub.dtype", choices=list(DTYPES), got=repr(dtype))
    return dtype


def family_config(d: Path, adapter, hc: dict, dtype: str) -> ModelConfig:
    """The adapter's ModelConfig for config.json `hc`, config.json named in its error; refused if the
    model it describes cannot fit in memory as `dtype`."""
    try:
        cfg = adapter.config(hc)
    except (ValueError, TypeError) as e:
        raise Refusal.of("hub.in_file", path=d / "config.json", error=e) from None
    check_fits(cfg, d / "config.json", dtype)
    return cfg


@dataclass(frozen=True)
class Rows:
    """Which rows of a stored tensor of `of` rows make a parameter: the ranges (start, stop), in order."""

    of: int
    ranges: tuple[tuple[int, int], ...]

    def index(self) -> torch.Tensor:
        return torch.cat([torch.arange(start, stop) for start, stop in self.ranges])


class StoredNames:
    """The names of the tensors stored in a directory, as a weight map asks for them: each one taken
    is remembered, so that a stored tensor no one took is found (and refused) afterwards."""

    def __init__(self, d: Path, theirs: dict):
        self.d, self.theirs = d, theirs
        self.used: set[str] = set()

    def take(self, name: str, prefixes: tuple[str, ...] = ("",)) -> str:
        """The stored name of tensor `name`, saved with one of `prefixes` (the first is the name a
        refusal shows: the class most files are saved from)."""
        for p in prefixes:
            if p + name in self.theirs:
                self.used.add(p + name)
                return p + name
        raise Refusal.of("hub.tensor_missing", path=self.d, name=prefixes[0] + name)

    def one(self, name: str, prefixes: tuple[str, ...] = ("",)) -> tuple[str, list[str]]:
        """A weight map's entry for a parameter that is one stored tensor as it is."""
        return "", [self.take(name, prefixes)]

    def rows(self, name: str, prefixes: tuple[str, ...], of: int, ranges) -> tuple[str, list[str], Rows]:
        """A weight map's entry for a parameter made of some rows of one stored tensor of `of` rows: the
        ranges (start, stop) of its rows, stacked in their order (Phi-3's gate_up_proj split in two;
        GPT-NeoX's query_key_value, stored head by head, regrouped as q's heads, k's, v's)."""
        return "rows", [self.take(name, prefixes)], Rows(of, tuple(ranges))

    def skip(self, name: str) -> None:
        """A stored tensor that may be there and is not read (a tied lm_head saved again beside W_E)."""
        if name in self.theirs:
            self.used.add(name)


def read_model(d: Path, adapter, cfg: ModelConfig, dtype: str = "float32"):
    """The model of `cfg` with the weights of `d`'s files, as the adapter's weight map names them."""
    with stored_tensors(d) as theirs:
        return fill_model(d, adapter, cfg, theirs, dtype)


def fill_model(source: Path, adapter, cfg: ModelConfig, theirs: dict, dtype: str = "float32", names=None):
    """The model of `cfg` with the stored tensors `theirs` (name -> an object with shape, dtype, read()
    and read_into(out): a safetensors tensor, or a GGUF one), as the adapter's weight map names them;
    `names` a StoredNames over them (one that says a missing tensor otherwise), `source` where they are."""
    names = names or StoredNames(source, theirs)
    plan = adapter.weights(cfg, names)
    cfg = unembedding(source, adapter, cfg, plan, names, dtype)
    ignored = re.compile("|".join(p for p in (_BUFFERS, adapter.ignored) if p))
    unused = sorted(n for n in theirs if n not in names.used and not ignored.search(n))
    if unused:
        raise Refusal.of("hub.tensor_unused", path=source, name=unused[0], n=len(unused))
    _check_plan(source, cfg, plan, theirs)
    model = _built(cfg, getattr(torch, dtype))
    _copy_in(model, plan, theirs)
    return model


def unembedding(source: Path, adapter, cfg: ModelConfig, plan: dict, names: StoredNames, dtype: str) -> ModelConfig:
    """The one place that decides where every family's unembedding W_U comes from (the adapters' weight
    maps leave it out), and the config the model is built with. Untied in config.json: the stored head
    (adapter.head: lm_head.weight, GPT-NeoX's embed_out.weight). Tied: W_E itself, and a head stored again
    beside it (some versions save it twice) is passed over when it equals W_E. A tied config over a file
    whose head differs from W_E is read as transformers 5 reads it (it ties only equal tensors): the
    stored head, untied, which one line says (outputs.head_untied); the model is then checked to fit again."""
    head = adapter.head
    if not head:  # an encoder: no unembedding
        return cfg
    if cfg.tie_embeddings:
        if head not in names.theirs:
            return cfg
        names.skip(head)
        embedding = plan["embed.weight"][1][0]
        if _same(names.theirs[head], names.theirs[embedding]):
            return cfg
        print(said(phrase("outputs.head_untied", path=source, head=head, embedding=embedding)), file=sys.stderr)
        cfg = dataclasses.replace(cfg, tie_embeddings=False)
        check_fits(cfg, source, dtype)
    plan["unembed.weight"] = names.one(head)
    return cfg


def _same(a, b) -> bool:
    """Whether two stored tensors hold the same values (b read in a's dtype), as transformers compares
    the two sides of a tie. Both are read: they are no larger than the file that holds them."""
    if tuple(a.shape) != tuple(b.shape):
        return False
    x = a.read()
    return torch.equal(x, b.read().to(x.dtype))


def _check_plan(d: Path, cfg: ModelConfig, plan: dict, theirs: dict) -> None:
    """Every parameter's stored tensors have the shape the config implies and a floating-point dtype."""
    expected = param_shapes(cfg)
    assert set(plan) == set(expected), "the weight map and size.param_shapes disagree on the parameters"
    for name, (how, names, *rows) in plan.items():
        shapes = [theirs[n].shape for n in names]
        shape = shapes[0][::-1] if how == "T" else shapes[0]
        if how == "rows":  # the stored tensor has the rows it must have; the parameter, the rows it takes
            want = (rows[0].of, *expected[name][1:])
            if shape != want:
                raise Refusal.of("hub.tensor_shape", path=d, name=names[0], shape=shape, expected=want)
            shape = (len(rows[0].index()), *shape[1:])
        if how == "cat":
            same = all(s and s[1:] == shapes[0][1:] for s in shapes)
            shape = (sum(s[0] for s in shapes), *shapes[0][1:]) if same else tuple(shapes)
        if shape != expected[name]:
            raise Refusal.of("hub.tensor_shape", path=d, name=name, shape=shape, expected=expected[name])
        for n in names:
            if theirs[n].dtype not in FLOAT_DTYPES:
                raise Refusal.of("hub.tensor_dtype", path=d, name=name, dtype=theirs[n].dtype)


@torch.no_grad()
def _copy_in(model, plan: dict, theirs: dict) -> None:
    params = dict(model.named_parameters())
    for name, (how, names, *rows) in plan.items():
        if how in ("T", "rows"):
            whole = theirs[names[0]].read()
            params[name].copy_(whole.T if how == "T" else whole[rows[0].index()])
            continue
        if how == "+1":  # Gemma's RMSNorm multiplies by (1 + weight): the 1 is added here, in float32
            params[name].copy_(theirs[names[0]].read().float() + 1.0)
            continue
        row = 0  # one stored tensor, or several stacked row-wise ("cat"): each into its own rows
        for n in names:
            rows = theirs[n].shape[0]
            theirs[n].read_into(params[name][row : row + rows])
            row += rows


def _built(cfg: ModelConfig, dtype: torch.dtype):
    """make_model(cfg) with its parameters in `dtype`, allocated but not initialised (they are loaded next);
    the fixed tables (sinusoidal positions) computed again, as the meta device has none."""
    before, normal = torch.get_default_dtype(), torch.nn.init.normal_
    torch.set_default_dtype(dtype)
    # N(0, std) drawn on the meta device draws nothing, yet the first such draw (and model.to_empty) imports
    # sympy and torch's decompositions (3 s and 80 MB of resident memory, for every model loaded): skipped
    torch.nn.init.normal_ = lambda t, *args, **kwargs: t if t.is_meta else normal(t, *args, **kwargs)
    try:
        with torch.device("meta"):
            model = make_model(cfg)
    finally:
        torch.set_default_dtype(before)
        torch.nn.init.normal_ = normal
    places: dict[int, list] = {}  # a parameter held by several modules (a tied unembedding): where it is held
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            places.setdefault(id(p), []).append((module, name))
    for (first, name), *others in places.values():  # model.to_empty(device="cpu"), by hand: see above
        p = getattr(first, name)
        real = torch.nn.Parameter(torch.empty(p.shape, dtype=p.dtype), requires_grad=p.requires_grad)
        for module, other in [(first, name), *others]:
            setattr(module, other, real)
    for module in model.modules():
        for name, b in module.named_buffers(recurse=False):
            if b is not None and b.is_meta:
                setattr(module, name, torch.empty(b.shape, dtype=b.dtype))
    for module in model.modules():
        if hasattr(module, "reset_buffers"):
            module.reset_buffers()
    return model

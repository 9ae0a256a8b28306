"""Tests for qkv.config: derived sizes, validation, --set overrides and dict round trips."""

import json

import pytest

from qkv import ModelConfig, TrainConfig
from qkv.core.spec.config import apply_overrides


def test_defaults_derive_d_head_and_d_mlp():
    cfg = ModelConfig(d_model=96, n_heads=6)
    assert cfg.d_head == 16
    assert cfg.d_mlp == 4 * 96
    cfg = ModelConfig()
    assert cfg.d_head == cfg.d_model // cfg.n_heads
    assert cfg.d_mlp == 4 * cfg.d_model


def test_explicit_d_head_and_d_mlp_are_kept():
    cfg = ModelConfig(d_model=30, n_heads=4, d_head=8, d_mlp=50)
    assert (cfg.d_head, cfg.d_mlp) == (8, 50)


def test_indivisible_d_model_names_both_numbers():
    with pytest.raises(ValueError) as e:
        ModelConfig(d_model=100, n_heads=7)
    assert "100" in str(e.value) and "7" in str(e.value)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(pos="alibi"), "pos"),
        (dict(norm="sandwich"), "norm"),
        (dict(activation="swish"), "activation"),
        (dict(d_model=-8), "d_model"),
        (dict(n_layers=0), "n_layers"),
        (dict(n_heads=-1), "n_heads"),
        (dict(d_vocab=-5), "d_vocab"),
        (dict(n_ctx=0), "n_ctx"),
        (dict(d_mlp=-1), "d_mlp"),
        (dict(d_head=0), "d_head"),
        (dict(dropout_attn=1.0), "dropout_attn"),
        (dict(dropout_resid=1.0), "dropout_resid"),
        (dict(dropout_embed=-0.1), "dropout_embed"),
        (dict(causal="yes"), "causal"),
        (dict(n_layers=2.5), "n_layers"),
        (dict(n_layers=True), "n_layers"),
        (dict(pos="rope", d_model=12, n_heads=4), "d_head"),  # d_head 3 is odd
        (dict(pos="rope", d_model=64, n_heads=4, d_head=7), "d_head"),
    ],
)
def test_invalid_model_config_raises(kwargs, field):
    with pytest.raises(ValueError, match=field):
        ModelConfig(**kwargs)


def test_rope_with_even_d_head_is_fine():
    assert ModelConfig(pos="rope", d_model=16, n_heads=4).d_head == 4


def test_dropout_just_below_one_is_allowed():
    assert ModelConfig(dropout_attn=0.99).dropout_attn == 0.99


def test_apply_overrides_parses_types():
    model, train = apply_overrides(
        {"d_model": 64},
        {"steps": 10},
        ["n_layers=3", "lr=0.002", "causal=false", "tie_embeddings=yes", "d_head=none", "steps=7", "pos=rope"],
    )
    assert model["n_layers"] == 3 and type(model["n_layers"]) is int
    assert model["causal"] is False
    assert model["tie_embeddings"] is True
    assert model["d_head"] is None
    assert model["pos"] == "rope"
    assert model["d_model"] == 64
    assert train["lr"] == 0.002 and type(train["lr"]) is float
    assert train["steps"] == 7
    # the result builds valid configs
    assert ModelConfig(**model).n_layers == 3
    assert TrainConfig(**train).steps == 7


def test_apply_overrides_returns_new_dicts():
    m0, t0 = {"n_layers": 2}, {"steps": 3}
    m1, t1 = apply_overrides(m0, t0, ["n_layers=5", "steps=9"])
    assert m0 == {"n_layers": 2} and t0 == {"steps": 3}
    assert m1["n_layers"] == 5 and t1["steps"] == 9


def test_apply_overrides_unknown_key_hints():
    with pytest.raises(ValueError, match=r"did you mean n_layers\?"):
        apply_overrides({}, {}, ["n_layer=3"])
    with pytest.raises(ValueError, match="unknown") as e:
        apply_overrides({}, {}, ["qqqqqqq=3"])
    assert "did you mean" not in str(e.value)


@pytest.mark.parametrize("pair", ["n_layers=abc", "lr=fast", "causal=maybe", "n_layers=2.5", "noequals"])
def test_apply_overrides_rejects_bad_values(pair):
    with pytest.raises(ValueError):
        apply_overrides({}, {}, [pair])


def test_dropout_shorthand_sets_all_three():
    model, _ = apply_overrides({}, {}, ["dropout=0.1"])
    assert model == {"dropout_embed": 0.1, "dropout_resid": 0.1, "dropout_attn": 0.1}
    cfg = ModelConfig(**model)
    assert cfg.dropout_embed == cfg.dropout_resid == cfg.dropout_attn == 0.1


def test_to_dict_from_dict_roundtrip():
    cfg = ModelConfig(
        d_vocab=77,
        n_ctx=19,
        d_model=24,
        n_heads=3,
        n_layers=2,
        pos="rope",
        norm="post",
        causal=False,
        activation="relu",
        tie_embeddings=True,
        dropout_attn=0.25,
    )
    d = cfg.to_dict()
    assert d["d_head"] == 8 and d["pos"] == "rope"
    back = ModelConfig.from_dict(json.loads(json.dumps(d)))
    assert back == cfg
    tc = TrainConfig(steps=12, lr=0.01)
    assert TrainConfig.from_dict(tc.to_dict()) == tc


def test_from_dict_unknown_field():
    d = ModelConfig().to_dict()
    d["n_layerz"] = 3
    with pytest.raises(ValueError, match="n_layerz"):
        ModelConfig.from_dict(d)
    with pytest.raises(ValueError):
        TrainConfig.from_dict({"stepz": 1})


def test_from_dict_not_a_dict():
    with pytest.raises(ValueError):
        ModelConfig.from_dict([1, 2])


def test_from_dict_validates_values():
    with pytest.raises(ValueError, match="pos"):
        ModelConfig.from_dict({"pos": "bogus"})


def test_embed_scale_follows_the_positions_unless_set():
    assert ModelConfig(pos="sinusoidal").embed_scale is True  # the 2017 paper: sqrt(d_model) * W_E[ids] + PE
    assert [ModelConfig(pos=p).embed_scale for p in ("learned", "rope", "none")] == [False, False, False]
    assert ModelConfig(pos="sinusoidal", embed_scale=False).embed_scale is False
    assert ModelConfig(pos="learned", embed_scale=True).embed_scale is True
    with pytest.raises(ValueError, match="embed_scale"):
        ModelConfig(embed_scale="yes")
    model, _ = apply_overrides({"pos": "sinusoidal"}, {}, ["embed_scale=auto"])
    assert ModelConfig(**model).embed_scale is True


def test_a_config_saved_before_embed_scale_keeps_its_unscaled_embeddings():
    new = ModelConfig(pos="sinusoidal")
    saved = new.to_dict()
    assert ModelConfig.from_dict(json.loads(json.dumps(saved))) == new  # a config saved now: scaled
    del saved["embed_scale"]  # what a checkpoint written before the field existed holds
    old = ModelConfig.from_dict(saved)
    assert old.embed_scale is False and old.pos == "sinusoidal"


def test_every_choice_is_declared_once_and_checked():
    """Each choice field is typed by its Literal, CHOICES holds exactly those values, the families of
    Arch are FAMILIES', and a value outside the table is refused with the table's values in the message."""
    import typing

    from qkv.core.spec import config
    from qkv.core.spec.family import FAMILIES

    hints = typing.get_type_hints(ModelConfig)
    assert set(config.CHOICES) == {"arch", "pos", "norm", "values", "activation", "mlp", "rope_layout"}
    for name, allowed in config.CHOICES.items():
        assert typing.get_origin(hints[name]) is typing.Literal
        assert typing.get_args(hints[name]) == allowed
        with pytest.raises(ValueError, match=f"{name} must be one of {', '.join(allowed)}; got 'nope'"):
            ModelConfig(**{name: "nope"})
    assert set(config.CHOICES["arch"]) == set(FAMILIES)
    assert apply_overrides({}, {}, ["norm=rms"])[0] == {"norm": "rms"}  # --set reads a Literal field as its text

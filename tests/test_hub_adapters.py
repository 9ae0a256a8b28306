"""The hub's adapters and what it refuses: one adapter per family, found by model_type through a registry
that reads hub/adapters/ (so a new family is one new file), and every refusal a user meets when a
Hugging Face directory cannot be read (an unknown model_type, a missing tokenizer file, a missing or
broken weight file, a hub name while offline) said in English as before and in Chinese from the
catalogue's area "hub"."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from safetensors.torch import load_file, save_file
from test_pretrained_dirs import bert_dir, gpt2_dir  # noqa: F401 (fixtures)

from qkv.core.hub import adapter as registry
from qkv.core.hub.pretrained import load_pretrained
from qkv.presentation.i18n import say_error

HAN = re.compile("[\u4e00-\u9fff]")
SUPPORTED_EN = (
    "GPT-2 (model_type gpt2), Gemma 2, Gemma 3 (gemma2, gemma3_text), Llama, Mistral, Qwen2, Qwen3 (llama, mistral, "
    "qwen2, qwen3), OLMo-2 (olmo2), BERT (bert), GPT-NeoX, Pythia (gpt_neox) and Phi-3 (phi3)"
)
SUPPORTED_ZH = (
    "GPT-2（model_type gpt2）、Gemma 2、Gemma 3（gemma2、gemma3_text）、Llama、Mistral、Qwen2、Qwen3（llama、mistral、"
    "qwen2、qwen3）、OLMo-2（olmo2）、BERT（bert）、GPT-NeoX、Pythia（gpt_neox） 和 Phi-3（phi3）"
)


def test_the_registry_holds_each_family_once_in_its_order():
    found = registry.adapters()
    assert [a.titles for a in found] == [
        ("GPT-2",),
        ("Gemma 2", "Gemma 3"),
        ("Llama", "Mistral", "Qwen2", "Qwen3"),
        ("OLMo-2",),
        ("BERT",),
        ("GPT-NeoX", "Pythia"),
        ("Phi-3",),
    ]
    types = [t for a in found for t in a.model_types]
    assert len(types) == len(set(types)) == 11
    assert str(registry.supported()) == SUPPORTED_EN


TOY = """
from qkv.core.hub.adapter import Adapter
from qkv.core.spec.config import ModelConfig

ADAPTER = Adapter(
    titles=("Toy",),
    model_types=("toy",),
    config=lambda hc: ModelConfig(d_vocab=hc["vocab_size"], n_ctx=8, d_model=8, n_heads=2, n_layers=1),
    weights=lambda cfg, names: {},
    tokenizer=lambda d, cfg: None,
    tokenizer_files=("toy.json",),
    order=9,
)
"""


@pytest.fixture
def toy_family(tmp_path, monkeypatch):
    """An adapter file of a family qkv does not have, in a folder the adapters' package also reads."""
    from qkv.core.hub import adapters

    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY, encoding="utf-8")
    monkeypatch.setattr(adapters, "__path__", [*adapters.__path__, str(folder)])
    registry.adapters.cache_clear()
    yield
    registry.adapters.cache_clear()


def test_a_new_family_is_its_adapter_file_alone(toy_family, tmp_path):
    toy = registry.adapter_for({"model_type": "toy"}, tmp_path)
    assert toy.titles == ("Toy",) and toy.config({"vocab_size": 5}).d_vocab == 5
    assert str(registry.supported()).endswith("BERT (bert), GPT-NeoX, Pythia (gpt_neox), Phi-3 (phi3) and Toy (toy)")
    assert registry.adapter_for({"model_type": "gpt2"}, tmp_path).titles == ("GPT-2",)


def copy(d, tmp_path):
    return shutil.copytree(d, tmp_path / "model")


def edit_config(d, **fields):
    hc = json.loads((d / "config.json").read_text())
    hc.update(fields)
    (d / "config.json").write_text(json.dumps(hc))


def unknown_type(d):
    edit_config(d, model_type="gemma", architectures=["GemmaForCausalLM"])


def unknown_type_no_architectures(d):
    edit_config(d, model_type="gemma", architectures=None)


def no_tokenizer(d):
    (d / "tokenizer.json").unlink()


def no_weights(d):
    (d / "model.safetensors").unlink()


def garbage_weights(d):
    (d / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not a header")


def truncated_weights(d):
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[:-100])


def missing_tensor(d):
    tensors = load_file(str(d / "model.safetensors"))
    del tensors["transformer.h.1.mlp.c_proj.weight"]
    save_file(tensors, str(d / "model.safetensors"))


def weights_under_another_name(d):
    (d / "model.safetensors").rename(d / "weights.safetensors")


def too_many_layers(d):
    edit_config(d, n_layer=5000)


def a_llama_of_gpt2_fields(d):
    edit_config(d, model_type="llama", architectures=["LlamaForCausalLM"])


# (directory, how it is broken, the key, what English says, a piece of what Chinese says)
CASES = [
    (
        "gpt2",
        too_many_layers,
        "hub.in_file",
        "config.json: field 'n_layer' must be an integer from 1 to 1,024; got 5000",
        "config.json：字段 'n_layer' 必须是从 1 到 1,024 的整数，收到的是 5000",
    ),
    (
        "gpt2",
        a_llama_of_gpt2_fields,
        "hub.in_file",
        "config.json: field 'hidden_size' is missing (it must be an integer from 1 to 65,536)",
        "config.json：缺少字段 'hidden_size'（它应当是从 1 到 65,536 的整数）",
    ),
    (
        "gpt2",
        unknown_type,
        "hub.unknown_model_type",
        f"model_type 'gemma' (GemmaForCausalLM) is not supported; qkv reads {SUPPORTED_EN}",
        f"不支持 model_type 'gemma'（GemmaForCausalLM）；qkv 能读的是 {SUPPORTED_ZH}",
    ),
    (
        "gpt2",
        unknown_type_no_architectures,
        "hub.unknown_model_type",
        "model_type 'gemma' (unknown architecture) is not",
        "（架构不明）",
    ),
    (
        "gpt2",
        no_tokenizer,
        "hub.no_bpe_tokenizer",
        "has no tokenizer.json, nor vocab.json and merges.txt: cannot read its GPT-2 tokenizer",
        "读不出它的 GPT-2 分词器",
    ),
    (
        "bert",
        no_tokenizer,
        "hub.no_wordpiece_tokenizer",
        "has no tokenizer.json or vocab.txt: cannot read its WordPiece tokenizer",
        "读不出它的 WordPiece 分词器",
    ),
    (
        "gpt2",
        no_weights,
        "hub.no_safetensors",
        "holds no .safetensors weights (found .bin files: none); save with safe_serialization=True",
        "找到的 .bin 文件：无",
    ),
    (
        "gpt2",
        weights_under_another_name,
        "hub.weights_unnamed",
        "(it holds weights.safetensors): name the weights model.safetensors",
        "请把权重文件命名为 model.safetensors",
    ),
    (
        "gpt2",
        garbage_weights,
        "hub.not_safetensors",
        "model.safetensors is not a valid safetensors file: ",
        "不是有效的 safetensors 文件",
    ),
    (
        "gpt2",
        truncated_weights,
        "hub.not_safetensors",
        "model.safetensors is not a valid safetensors file: ",
        "不是有效的 safetensors 文件",
    ),
    (
        "gpt2",
        missing_tensor,
        "hub.tensor_missing",
        "tensor transformer.h.1.mlp.c_proj.weight is missing",
        "缺少张量 transformer.h.1",
    ),
]


@pytest.mark.parametrize("which, spoil, key, english, chinese", CASES, ids=[f"{c[0]}-{c[1].__name__}" for c in CASES])
def test_what_the_hub_refuses_is_said_in_both_languages(
    which,
    spoil,
    key,
    english,
    chinese,
    gpt2_dir,
    bert_dir,
    tmp_path,  # noqa: F811
):
    d = copy({"gpt2": gpt2_dir, "bert": bert_dir}[which][0], tmp_path)
    spoil(d)
    with pytest.raises(ValueError) as err:
        load_pretrained(d)
    en, zh = str(err.value), say_error(err.value, "zh")
    assert err.value.key == key, en
    assert english in en and "\n" not in en, en
    assert chinese in zh and HAN.search(zh) and zh != en and "\n" not in zh, zh
    assert say_error(err.value, "en") == en


LLAMA = dict(
    model_type="llama",
    vocab_size=50,
    hidden_size=24,
    intermediate_size=48,
    num_hidden_layers=1,
    num_attention_heads=6,
    num_key_value_heads=2,
    max_position_embeddings=32,
)


@pytest.mark.parametrize(
    "fields, english, chinese",
    [
        (
            dict(num_key_value_heads=4),
            "field 'num_attention_heads' (6) is not a multiple of 'num_key_value_heads' (4)",
            "字段 'num_attention_heads'（6）不是 'num_key_value_heads'（4）的倍数",
        ),
        (
            dict(rope_scaling={"rope_type": "yarn", "factor": 4.0}),
            "field 'rope_type' must be one of default, llama3 (the RoPE types qkv builds); got 'yarn'",
            "字段 'rope_type' 必须是以下之一：default、llama3（qkv 能搭建的 RoPE 类型），收到的是 'yarn'",
        ),
        (
            dict(attention_bias=True),
            "fields 'attention_bias' and 'mlp_bias' must be equal (qkv has one switch for both)",
            "字段 'attention_bias' 和 'mlp_bias' 必须相同（qkv 用一个开关同时管这两处偏置）",
        ),
        (
            dict(model_type="qwen3", attention_bias=True),
            "field 'attention_bias' must be false (a Qwen3 with attention biases is not built)",
            "字段 'attention_bias' 必须是 false（qkv 不搭建带注意力偏置的 Qwen3）",
        ),
        (
            dict(pretraining_tp=2),
            "field 'pretraining_tp' must be 1 (weights split for tensor parallelism are not read); got 2",
            "字段 'pretraining_tp' 必须是数值 1（qkv 不读按张量并行切开的权重），收到的是 2",
        ),
    ],
)
def test_what_a_family_config_map_refuses_is_said_in_both_languages(fields, english, chinese):
    from qkv.core.hub.adapters.llama import llama_config

    assert llama_config(LLAMA).n_kv_heads == 2
    with pytest.raises(ValueError) as err:
        llama_config({**LLAMA, **fields})
    assert str(err.value) == english
    assert say_error(err.value, "zh") == chinese


def test_a_llama_directory_without_tokenizer_json_is_refused_in_both_languages(tmp_path):
    from qkv.core.hub.adapters.llama import ADAPTER

    with pytest.raises(ValueError) as err:
        ADAPTER.tokenizer(tmp_path, None)
    assert str(err.value) == f"{tmp_path} has no tokenizer.json (a SentencePiece tokenizer.model alone is not read)"
    assert (
        say_error(err.value, "zh")
        == f"{tmp_path} 里没有 tokenizer.json（只有 SentencePiece 的 tokenizer.model 是读不了的）"
    )


def test_a_hub_name_offline_is_refused_in_both_languages(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError) as err:
        load_pretrained("hf:gpt2")
    assert err.value.key == "hub.fetch_offline"
    assert str(err.value) == (
        "could not fetch 'gpt2' from the Hugging Face hub: it is not in the local cache and the hub cannot be "
        "reached (no network, or HF_HUB_OFFLINE is set)"
    )
    assert say_error(err.value, "zh").startswith("无法从 Hugging Face hub 获取 'gpt2'：本地缓存里没有它")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cli_says_a_hub_refusal_in_its_language(capsys, monkeypatch, gpt2_dir, tmp_path, lang):  # noqa: F811
    from qkv.apps.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    d = copy(gpt2_dir[0], tmp_path)
    unknown_type(d)
    said = []
    for ckpt in ("hf:gpt2", str(d)):
        assert main(["explain", "the cat", "--ckpt", ckpt, "--lang", lang]) != 0
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
        said.append(err.strip())
    if lang == "en":
        assert said[0].startswith("qkv: error: could not fetch 'gpt2' from the Hugging Face hub: it is not in"), said
        assert (
            said[1]
            == f"qkv: error: {d}: model_type 'gemma' (GemmaForCausalLM) is not supported; qkv reads {SUPPORTED_EN}"
        )
    else:
        assert said[0].startswith("qkv: 错误：无法从 Hugging Face hub 获取 'gpt2'：本地缓存里没有它"), said
        assert said[1] == f"qkv: 错误：{d}：不支持 model_type 'gemma'（GemmaForCausalLM）；qkv 能读的是 {SUPPORTED_ZH}"


def test_what_gpt2_cannot_compute_is_refused_in_both_languages():
    from qkv import GPT, ModelConfig
    from qkv.core.hub.adapters.gpt2 import to_hf

    cfg = ModelConfig(d_vocab=30, n_ctx=8, d_model=16, n_heads=2, n_layers=1, pos="rope", embed_scale=True)
    with pytest.raises(ValueError) as err:
        to_hf(GPT(cfg))
    assert str(err.value) == (
        "cannot export to GPT-2: pos=rope (GPT-2 uses learned positions); "
        "embed_scale=true (GPT-2 does not multiply its token embeddings by sqrt(d_model))"
    )
    assert say_error(err.value, "zh") == (
        "无法导出为 GPT-2：pos=rope（GPT-2 用的是学出来的位置嵌入）；"
        "embed_scale=true（GPT-2 不会把词元嵌入乘以 sqrt(d_model)）"
    )


def test_an_export_qkv_refuses_is_said_in_both_languages(tmp_path):
    from qkv import Encoder, ModelConfig, export_hf, train_tokenizer

    tok = train_tokenizer("char", "the cat sat")
    encoder = Encoder(ModelConfig(arch="bert", d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1))
    with pytest.raises(ValueError) as err:
        export_hf(encoder, tok, tmp_path / "out")
    assert str(err.value).endswith("can be exported as AutoModelForCausalLM; this model is an encoder")
    assert say_error(err.value, "zh").endswith("才能导出为 AutoModelForCausalLM；这个模型是一个编码器（encoder）")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("mine")
    with pytest.raises(ValueError) as err:
        export_hf(encoder, tok, tmp_path / "full")
    assert (
        say_error(err.value, "zh") == f"{tmp_path / 'full'} 是一个非空目录：导出只写入新目录或空目录，不会覆盖任何东西"
    )


def test_a_model_too_large_for_the_machine_is_refused_in_both_languages(gpt2_dir, monkeypatch):  # noqa: F811
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: 1000)
    with pytest.raises(ValueError) as err:
        load_pretrained(gpt2_dir[0])
    config = gpt2_dir[0] / "config.json"
    assert re.fullmatch(
        rf"{re.escape(str(config))} describes [\d,]+ parameters \([\d.]+ [kKM]B as float32\); "
        r"this machine has 1.0 kB of memory available",
        str(err.value),
    ), str(err.value)
    zh = say_error(err.value, "zh")
    assert zh.startswith(f"{config} 描述的模型有 ") and zh.endswith("这台机器只有 1.0 kB 可用内存"), zh

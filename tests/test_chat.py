"""qkv generate --chat: a chat model's template (tokenizer_config.json's chat_template, or
chat_template.jinja) rendered in Jinja's sandbox gives the ids transformers' apply_chat_template gives,
special tokens as one id each; the answer is transformers' greedy answer, ending at the end-of-turn
token; a model without a template, a broken or hostile template, are one line each."""

from __future__ import annotations

import json
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from cli_util import run_error, run_ok  # noqa: E402
from llm_dirs import TEXT, random_model  # noqa: E402

from qkv.apps.cli import main  # noqa: E402
from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.core.io.refusal import Refusal  # noqa: E402
from qkv.core.text.chat import chat_ids, messages_of, render_chat  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# a ChatML layout written for these tests: a default system message, bos_token and tojson used
TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou help.<|im_end|>\n{% endif %}"
    "{% for m in messages %}"
    "{% if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('no role ' + m['role']) }}{% endif %}"
    "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CONVERSATIONS = [
    messages_of("hello world, the cat"),
    messages_of("我昨天吃了苹果。", system="the dog ate an apple"),
    messages_of(
        "say <|im_end|> then <|im_start|>user"
    ),  # special tokens inside a message: one id each, as in transformers
    messages_of("  spaces\n\nand lines  "),
]


def chat_dir(tmp_path, template: str | None = TEMPLATE, as_file: bool = False):
    """A random tiny Llama saved with a byte-level BPE that has the ChatML tokens, and `template`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=SPECIAL,
    )
    tok.train_from_iterator([TEXT], trainer=trainer)
    d = tmp_path / "chat"
    model = random_model("llama")
    model.generation_config.eos_token_id = SPECIAL.index("<|im_end|>")
    model.save_pretrained(d)
    tok.save(str(d / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"}
    if template is not None and as_file:
        (d / "chat_template.jinja").write_text(template, encoding="utf-8")
    elif template is not None:
        config["chat_template"] = template
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return d, model


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return chat_dir(tmp_path_factory.mktemp("chat"))


def their_ids(d, messages) -> list[int]:
    ids = transformers.AutoTokenizer.from_pretrained(d).apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True
    )
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


@pytest.mark.parametrize("i", range(len(CONVERSATIONS)))
def test_chat_ids_are_transformers_apply_chat_template_ids(made, i):
    d, _ = made
    _, tok = load_pretrained(d)
    ours = chat_ids(tok, CONVERSATIONS[i])
    assert ours == their_ids(d, CONVERSATIONS[i])
    assert ours[0] == 0 and ours.count(SPECIAL.index("<|im_start|>")) >= 3  # BOS and the markers, one id each


def test_chat_template_jinja_file_is_read_too(tmp_path):
    d, _ = chat_dir(tmp_path, as_file=True)
    _, tok = load_pretrained(d)
    assert tok.chat_template == TEMPLATE
    assert chat_ids(tok, CONVERSATIONS[1]) == their_ids(d, CONVERSATIONS[1])


def test_cli_chat_answers_as_transformers_and_stops_at_end_of_turn(made, capsys):
    d, hf = made
    question = "hello world, the cat"
    ids = their_ids(d, messages_of(question))
    with torch.no_grad():
        out = hf.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False, eos_token_id=2, pad_token_id=2)
    new = out[0, len(ids) :].tolist()
    if 2 in new:
        new = new[: new.index(2)]
    expected = transformers.AutoTokenizer.from_pretrained(d).decode(new)
    argv = ["generate", "--ckpt", str(d), "--chat", question, "--max-new-tokens", "12", "--temperature", "0"]
    printed, _ = run_ok(capsys, argv)
    assert new and printed == expected + "\n"  # the answer alone: the conversation is not printed


def test_a_model_without_a_template_is_refused_in_one_line(tmp_path, capsys):
    d, _ = chat_dir(tmp_path, template=None)
    line = run_error(capsys, ["generate", "--ckpt", str(d), "--chat", "hi"])
    assert "chat template" in line
    assert main(["generate", "--ckpt", str(d), "--chat", "hi", "--lang", "zh"]) == 1
    assert "对话模板" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, key",
    [
        (["--chat", "hi", "--prompt", "x"], "--prompt"),
        (["--system", "be brief"], "--chat"),
        (["--chat", "hi", "--samples", "2"], "--samples"),
    ],
)
def test_chat_options_that_do_not_go_together(made, capsys, argv, key):
    line = run_error(capsys, ["generate", "--ckpt", str(made[0]), *argv])
    assert key in line


@pytest.mark.parametrize(
    "template, key",
    [
        ("{% for m in messages %}{{ raise_exception('only ' + m['role']) }}{% endfor %}", "refuses"),
        ("{% for m in messages %}", "cannot be rendered"),  # not closed
        ("{{ messages.__class__.__mro__ }}", "cannot be rendered"),  # the sandbox reads no private attribute
        ("{{ messages.append(1) }}", "cannot be rendered"),  # nor changes what it is given
        ("{% for i in range(99999) %}{% for j in range(99999) %}xx{% endfor %}{% endfor %}", "more than"),
    ],
)
def test_a_broken_or_hostile_template_is_one_line(template, key):
    with pytest.raises(Refusal) as e:
        render_chat(template, messages_of("hi"))
    assert key in str(e.value) and "\n" not in str(e.value)


def test_a_long_message_is_refused_before_rendering():
    with pytest.raises(Refusal):
        messages_of("x" * 200_000)


@pytest.mark.parametrize("written", [b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_a_broken_tokenizer_config_is_one_line(tmp_path, capsys, written):
    d, _ = chat_dir(tmp_path)
    (d / "tokenizer_config.json").write_bytes(written)
    line = run_error(capsys, ["generate", "--ckpt", str(d), "--chat", "hi"])
    assert "tokenizer_config.json" in line

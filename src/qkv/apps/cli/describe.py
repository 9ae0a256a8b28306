"""The handlers of `qkv info` and `qkv corpus`: what a checkpoint, a pretrained model or the built-in
corpus holds, read and printed (the other handlers are in commands.py)."""

from __future__ import annotations

from qkv.apps.cli.lang import decide
from qkv.core.io.files import format_bytes
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import say_error, t

DESIGNS = ("decoder", "encoder", "encoder-decoder")  # qkv.core.spec.family.Family.design


def info(args) -> None:
    from qkv.core.hub.gguf.find import names_gguf
    from qkv.core.hub.pretrained import is_pretrained_ref
    from qkv.core.train.checkpoint import load_checkpoint

    lang = args.lang
    if names_gguf(args.ckpt):
        return _info_gguf(args.ckpt, lang)
    if is_pretrained_ref(args.ckpt):
        return _info_pretrained(args.ckpt, lang)
    ckpt = load_checkpoint(args.ckpt)
    cfg = ckpt.model.cfg
    if ckpt.model.family.translates:
        _info_translation(args.ckpt, ckpt, lang)
    else:
        params, tok = f"{ckpt.model.num_params():,}", ckpt.tokenizer
        step = ckpt.state["step"]
        print(t("cli.info_gpt", lang, ref=args.ckpt, step=step, params=params, kind=tok.kind, n=tok.vocab_size))
    for key, value in cfg.to_dict().items():
        print(f"  {key} = {value}")
    for key in ("train_loss", "val_loss"):
        if ckpt.state.get(key) is not None:
            print(f"  {key}: {ckpt.state[key]:.4f}")
    _finite(ckpt.model, lang)


def _finite(model, lang: str) -> None:
    """Say so when the weights hold NaN or infinities (a diverged fine-tune): every number built on them may too."""
    from qkv.core.io.finite import weights_phrase

    why = weights_phrase(model)
    if why is not None:
        print(t("cli.info_warning", lang, note=say_error(why, lang)))


def _info_translation(ref, ckpt, lang: str) -> None:
    """The header of `qkv info` for an encoder-decoder: what it translates, its two stacks, its data."""
    from qkv.core.train.translate import direction_of

    cfg, tok = ckpt.model.cfg, ckpt.tokenizer
    source, target = direction_of(ckpt.config) or (t("cli.info_source", lang), t("cli.info_target", lang))
    params, step = f"{ckpt.model.num_params():,}", ckpt.state["step"]
    print(t("cli.info_translation", lang, ref=ref, source=source, target=target, step=step, params=params))
    print(t("cli.info_stacks", lang, encoder=cfg.n_encoder_layers, decoder=cfg.n_layers, heads=cfg.n_heads))
    shared = t("cli.info_shared" if cfg.share_embeddings else "cli.info_separate", lang)
    print(t("cli.info_mt_tokenizer", lang, kind=tok.kind, n=tok.vocab_size, shared=shared))
    data = ckpt.config.get("data")
    if isinstance(data, dict) and data.get("pairs") is not None:
        print(_trained_on(data, lang))


def _trained_on(data: dict, lang: str) -> str:
    """What a translation model was trained on: its pairs, from where, and its validation pairs."""
    builtin, everyday = data.get("kind") == "builtin", data.get("everyday") == "hsk"
    where = data.get("path")
    if builtin:
        where = t("cli.info_builtin_hsk" if everyday else "cli.info_builtin", lang)
    held = t("cli.info_held_hsk" if everyday else "cli.info_held", lang) if builtin else ""
    left = t("cli.info_left_out", lang, n=data["val_left_out"]) if data.get("val_left_out") else ""
    pairs, val = f"{data['pairs']:,}", f"{data.get('val_pairs', 0):,}"
    return t("cli.info_trained_on", lang, pairs=pairs, where=where, val=val, held=held, left=left)


def _info_gguf(ref, lang: str) -> None:
    """`qkv info` for a GGUF file: what its header says (no tensor is read)."""
    from qkv.core.hub.gguf.find import gguf_file, title_of
    from qkv.core.hub.gguf.header import read_header
    from qkv.core.hub.gguf.summary import summary

    path = gguf_file(ref)
    header = read_header(path)
    s = summary(header)
    types = ", ".join(f"{kind} ×{n}" for kind, n in s["types"].items())
    template = t("gguf.info_template_yes" if s["chat_template"] else "gguf.info_template_no", lang)
    name, size = title_of(ref, header) or s["architecture"], format_bytes(s["file_bytes"])
    print(
        t("gguf.info_file", lang, ref=ref, name=name, arch=s["architecture"], params=f"{s['parameters']:,}", size=size)
    )
    print(t("gguf.info_types", lang, types=types))
    print(t("gguf.info_tokenizer", lang, kind=s["tokenizer"], n=s["vocab"], template=template))
    print(t("gguf.info_path", lang, path=path))
    for key, value in s["config"].items():
        print(f"  {s['architecture']}.{key} = {value}")


def _info_pretrained(ref, lang: str) -> None:
    """`qkv info` for "minilm" or a Hugging Face directory: what it is, where it came from, its size."""
    from qkv.analysis.model_info import model_info
    from qkv.core.io.refusal import family_title
    from qkv.core.train.checkpoint import load

    model, tokenizer = load(ref)
    m = model_info(model, tokenizer, str(ref))
    src, family = m["loaded_from"], model.family
    size = t("cli.info_size", lang, size=format_bytes(m["weights_bytes"])) if m["weights_bytes"] else ""
    title = say_error(family_title(family), lang)
    if m["has_lm_head"]:
        design = family.design  # the catalogue's words for it, when it has them (a family's design: one of three)
        design = t(f"cli.info_design_{design.replace('-', '_')}", lang) if design in DESIGNS else design
        kind = t("cli.info_lm_head", lang, title=title, design=design)
    else:
        kind = t("cli.info_no_lm_head", lang, title=title)
    name, params = src["title"] or src["architecture"], f"{m['parameters']:,}"
    line = t("cli.info_pretrained", lang, ref=ref, name=name, kind=kind, params=params, size=size)
    print(line + t("cli.info_tokenizer", lang, kind=tokenizer.kind, n=tokenizer.vocab_size))
    print(t("cli.info_from", lang, path=src["path"], arch=src["architecture"]))
    for key, value in model.cfg.to_dict().items():
        print(f"  {key} = {value}")
    _finite(model, lang)


def corpus(args) -> None:
    from qkv.core.text.corpus import generate, pairs, probes

    if not 1 <= args.n <= 1_000_000:
        raise Refusal.of("cli.n_range", got=args.n)
    if not 0 <= args.seed < 2**63:
        raise Refusal.of("cli.corpus_seed_range", max=2**63 - 1, got=args.seed)
    if args.probes and (args.pairs or args.heldout):
        raise Refusal.of("cli.probes_alone")
    if args.pairs and args.lang:
        raise Refusal.of("cli.pairs_lang")
    lang = args.lang or "both"
    if args.probes:
        for p in probes(args.probes, "zh" if lang == "both" else lang, args.seed)[: args.n]:
            print(
                t(
                    "cli.probe",
                    decide(args.lang),
                    prompt=p.prompt,
                    expected=p.expected,
                    others=" / ".join(p.alternatives),
                )
            )
    elif args.pairs or args.heldout:
        chosen = pairs("heldout", args.seed) if args.heldout else pairs("train", args.seed, args.n)
        for n, p in enumerate(chosen[: args.n], 1):
            if args.pairs:
                print(f"{n}. [{p.kind}] {p.text('zh')}\n   {p.text('en')}\n   {_alignment(p)}")
            else:
                print("\n".join(p.text(one) for one in (("zh", "en") if lang == "both" else (lang,))))
    else:
        print(generate(args.seed, args.n, lang), end="")


def _alignment(pair) -> str:
    """The gold alignment in one line: each group of linked words as zh→en (a phrase links all its words),
    words without a counterpart as 的→∅ or ∅→and."""
    group = {("zh", i): ("zh", i) for i in range(len(pair.zh))} | {("en", j): ("en", j) for j in range(len(pair.en))}

    def root(x):
        while group[x] != x:
            x = group[x]
        return x

    for z, e in pair.links:  # union the two ends of every link
        group[root(("en", e))] = root(("zh", z))
    members: dict = {}
    for word in group:
        members.setdefault(root(word), []).append(word)
    parts = []
    for words in sorted(
        members.values(), key=lambda ws: min((side != "zh", i) for side, i in ws)
    ):  # zh order, then ∅→en
        zh = " ".join(pair.zh[i] for side, i in sorted(words) if side == "zh") or "∅"
        en = " ".join(pair.en[i] for side, i in sorted(words) if side == "en") or "∅"
        parts.append(f"{zh}→{en}")
    return "  ".join(parts)

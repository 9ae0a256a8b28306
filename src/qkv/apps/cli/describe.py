"""The handlers of `qkv info` and `qkv corpus`: what a checkpoint, a pretrained model or the built-in
corpus holds, read and printed (the other handlers are in commands.py)."""

from __future__ import annotations

from qkv.core.io.files import format_bytes


def info(args) -> None:
    from qkv.core.hub.pretrained import is_pretrained_ref
    from qkv.core.train.checkpoint import load_checkpoint

    if is_pretrained_ref(args.ckpt):
        return _info_pretrained(args.ckpt)
    ckpt = load_checkpoint(args.ckpt)
    cfg = ckpt.model.cfg
    if ckpt.model.family.translates:
        _info_translation(args.ckpt, ckpt)
    else:
        print(
            f"{args.ckpt}: step {ckpt.state['step']}, {ckpt.model.num_params():,} parameters, {ckpt.tokenizer.kind} "
            f"tokenizer with {ckpt.tokenizer.vocab_size} tokens"
        )
    for key, value in cfg.to_dict().items():
        print(f"  {key} = {value}")
    for key in ("train_loss", "val_loss"):
        if ckpt.state.get(key) is not None:
            print(f"  {key}: {ckpt.state[key]:.4f}")
    _finite(ckpt.model)


def _finite(model) -> None:
    """Say so when the weights hold NaN or infinities (a diverged fine-tune): every number built on them may too."""
    from qkv.core.io.finite import weights_note

    note = weights_note(model)
    if note:
        print(f"  warning: {note}")


def _info_translation(ref, ckpt) -> None:
    """The header of `qkv info` for an encoder-decoder: what it translates, its two stacks, its data."""
    from qkv.core.train.translate import direction_of

    cfg, (source, target) = ckpt.model.cfg, direction_of(ckpt.config) or ("source", "target")
    shared = (
        "one embedding table for both languages" if cfg.share_embeddings else "separate source and target embeddings"
    )
    print(
        f"{ref}: translation model {source} -> {target} (encoder-decoder), step {ckpt.state['step']}, "
        f"{ckpt.model.num_params():,} parameters"
    )
    print(
        f"  encoder: {cfg.n_encoder_layers} blocks of self-attention over the whole source; decoder: {cfg.n_layers} "
        f"blocks of causal self-attention, then cross-attention to the encoder's output; {cfg.n_heads} heads each"
    )
    print(
        f"  {ckpt.tokenizer.kind} tokenizer with {ckpt.tokenizer.vocab_size} tokens (<pad> <s> </s> and the words "
        f"of both languages), {shared}"
    )
    data = ckpt.config.get("data")
    if isinstance(data, dict) and data.get("pairs") is not None:
        builtin, everyday = data.get("kind") == "builtin", data.get("everyday") == "hsk"
        where = "the built-in corpus" if builtin else data.get("path")
        where += " and the HSK training sentences" if builtin and everyday else ""
        held = (" (held-out frames and HSK sentences)" if everyday else " (held-out frames)") if builtin else ""
        left = (
            f" ({data['val_left_out']} more left out: they have words no training pair has)"
            if data.get("val_left_out")
            else ""
        )
        print(
            f"  trained on {data['pairs']:,} pairs from {where}; "
            f"{data.get('val_pairs', 0):,} validation pairs{held}{left}"
        )


def _info_pretrained(ref) -> None:
    """`qkv info` for "minilm" or a Hugging Face directory: what it is, where it came from, its size."""
    from qkv.analysis.model_info import model_info
    from qkv.core.train.checkpoint import load

    model, tokenizer = load(ref)
    m = model_info(model, tokenizer, str(ref))
    src = m["loaded_from"]
    size = f", {format_bytes(m['weights_bytes'])} of weights" if m["weights_bytes"] else ""
    how = f", a {model.family.design} with an LM head" if m["has_lm_head"] else " (no LM head: it cannot generate)"
    kind = model.family.title + how
    print(
        f"{ref}: pretrained {src['title'] or src['architecture']}, {kind}, {m['parameters']:,} parameters{size}, "
        f"{tokenizer.kind} tokenizer with {tokenizer.vocab_size} tokens"
    )
    print(f"  from {src['path']} (model_type {src['architecture']})")
    for key, value in model.cfg.to_dict().items():
        print(f"  {key} = {value}")
    _finite(model)


def corpus(args) -> None:
    from qkv.core.text.corpus import generate, pairs, probes

    if not 1 <= args.n <= 1_000_000:
        raise ValueError(f"-n must be between 1 and 1000000, got {args.n}")
    if not 0 <= args.seed < 2**63:
        raise ValueError(f"--seed must be between 0 and {2**63 - 1}, got {args.seed}")
    if args.probes and (args.pairs or args.heldout):
        raise ValueError("--probes prints the probes of a phenomenon; it does not go with --pairs or --heldout")
    if args.pairs and args.lang:
        raise ValueError("--pairs prints both languages and their alignment; --lang does not apply")
    lang = args.lang or "both"
    if args.probes:
        for p in probes(args.probes, "zh" if lang == "both" else lang, args.seed)[: args.n]:
            print(f"{p.prompt} [{p.expected}]  not: {' / '.join(p.alternatives)}")
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

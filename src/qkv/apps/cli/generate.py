"""`qkv generate`: continue a prompt (or answer a chat message) with a model, streaming the tokens."""

from __future__ import annotations

import codecs
import sys

from qkv.apps.cli.reading import load_model, say_cropped, say_unread
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import t

DEFAULT_NEW = 200  # --max-new-tokens, where the model's context holds them


def stream(tokenizer, ids, out=None, prev: int | None = None) -> None:
    """Write tokens as they arrive, each after what the tokenizer puts between it and the one before
    (`prev`: the last token already written); a character split over several byte tokens waits for its
    last byte."""
    out = sys.stdout if out is None else out  # looked up now: sys.stdout may have been replaced since import
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for i in ids:
        out.write(decoder.decode(tokenizer.separator(prev, i) + tokenizer.token_bytes(i)))
        out.flush()
        prev = i
    out.write(decoder.decode(b"", final=True))


def _prompt(args, tokenizer) -> tuple[str, list[int]]:
    """(what is printed before the continuation, the ids the model reads): --prompt's text, or with
    --chat the conversation its chat template lays out (not printed: only the answer is)."""
    if args.chat is None:
        if args.system is not None:
            raise Refusal.of("chat.system_without_chat")
        prompt = "\n" if args.prompt is None else args.prompt
        return prompt, tokenizer.encode(prompt)
    from qkv.core.text.chat import chat_ids, messages_of

    if args.prompt is not None:
        raise Refusal.of("chat.with_prompt")
    if args.samples != 1:
        raise Refusal.of("chat.with_samples")
    return "", chat_ids(tokenizer, messages_of(args.chat, args.system))


def generate(args) -> None:
    from qkv.core.decode.sample import check_generates, check_sampling, generate_ids
    from qkv.core.machine.device import resolve

    check_sampling(args.temperature, args.top_k, args.top_p, args.max_new_tokens or DEFAULT_NEW)
    if not 1 <= args.samples <= 1024:
        raise Refusal.of("cli.samples_range", got=args.samples)
    device = resolve(args.device)
    model, tokenizer = load_model(args.ckpt, device)  # without --ckpt, the bundled model; in --dtype
    model.to(device)  # its KV cache is made there too
    check_generates(model)  # before the prompt is printed
    prompt, ids = _prompt(args, tokenizer)
    if not ids:
        raise Refusal.of("cli.prompt_empty")
    say_unread(tokenizer, args.chat if args.chat is not None else args.prompt, args.lang)
    n_ctx = model.cfg.n_ctx
    if args.max_new_tokens is None:  # as many as every new token can read the whole text for, up to 200
        args.max_new_tokens = max(1, min(DEFAULT_NEW, n_ctx - len(ids) + 1))
    if len(ids) > n_ctx:
        say_cropped("prompt", len(ids), n_ctx, args.lang)
    elif len(ids) + args.max_new_tokens - 1 > n_ctx:  # token i is picked from the len(ids) + i before it
        first = n_ctx - len(ids) + 2
        note = t("cli.past_context", args.lang, prompt=len(ids), new=args.max_new_tokens, n_ctx=n_ctx, first=first)
        print(note, file=sys.stderr)
    if args.samples > 1:  # one batch of rows, printed when all are done; row i is seeded seed + i
        from qkv.core.decode.sample import generate_texts

        texts = generate_texts(
            model,
            tokenizer,
            [prompt] * args.samples,
            args.max_new_tokens,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            seed=args.seed,
        )
        for i, text in enumerate(texts):
            print(t("cli.sample", args.lang, i=i + 1, n=args.samples) + f"\n{prompt}{text}")
        return
    sys.stdout.write(prompt)
    try:
        new = generate_ids(  # it ends at the model's end of text (a pretrained model's generation_config.json)
            model,
            ids,
            args.max_new_tokens,
            args.temperature,
            args.top_k,
            args.top_p,
            args.seed,
            use_cache=not args.no_cache,
        )
        stream(tokenizer, new, prev=ids[-1] if prompt else None)
    finally:  # the text's line ends, also before an error (a NaN step) or Ctrl-C is said
        sys.stdout.write("\n")
        sys.stdout.flush()

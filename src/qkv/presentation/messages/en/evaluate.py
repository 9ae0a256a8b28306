"""qkv eval (qkv.core.train.evaluate, qkv.apps.cli.evaluate): its refusals and its report, in English (the same
keys as zh/evaluate.py)."""

MESSAGES = {
    "unit": "window",  # the progress bar counts windows: 12/40 [00:03, 4.1window/s]
    "no_next_token": (
        "this model does not predict the next token (an encoder such as BERT has no unembedding): "
        "qkv eval scores a GPT, a Llama-family model or a GGUF file"
    ),
    "translates": (
        "a translation model predicts a translation of a source sentence, not the next token of a text: "
        "qkv eval scores a GPT, a Llama-family model or a GGUF file"
    ),
    "ctx_range": "--ctx must be between 1 and the model's context of {n_ctx} tokens; got {got}",
    "stride_range": "--stride must be between 1 and the window of {ctx} tokens (--ctx); got {got}",
    "batch_range": "--batch must be at least 1; got {got}",
    "text_empty": "the text is empty: there is nothing to score",
    "text_too_short": (
        "the text is {n} token(s) long: qkv eval scores each token after the first, so it needs at least 2"
    ),
    "text_too_long": (
        "the text is {bytes} bytes of UTF-8, more than qkv eval reads at once ({most} bytes): split it into parts"
    ),
    "report": (
        "{model} on {text}\n"
        "  loss           {loss} nats per token\n"
        "  perplexity     {perplexity}\n"
        "  bits per byte  {bits_per_byte}\n"
        "  scored         {tokens} tokens, {bytes} bytes (every token after the first), in {windows} window(s)\n"
        "  windows        {windowing}"
    ),
    "windowing_apart": "{ctx} tokens each, one after the other (each token read after those before it in its window)",
    "windowing_stride": (
        "{ctx} tokens each, moved on {stride} at a time (each token read after at least {context} others)"
    ),
}

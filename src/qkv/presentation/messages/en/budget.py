"""Memory bounded before it is taken (qkv.core.machine.memory, qkv.apps.web.budget): the refusals, in English
(the same keys as zh/budget.py)."""

MESSAGES = {
    "too_large": (
        "{what} needs about {need}, more than this server lets one request take ({limit}): use a shorter text, "
        "or start the server with a larger QKV_MEMORY_BUDGET"
    ),
    "too_large_together": (
        "{what} needs about {need} while this request still holds {own} for its earlier passes: together more "
        "than this server lets one request take ({limit}); use a shorter text, or start the server with a larger "
        "QKV_MEMORY_BUDGET"
    ),
    "too_large_here": "{what} needs about {need}, more than this machine has free now ({limit}): use a shorter text",
    "busy": (
        "{what} needs about {need}, and requests in flight hold {held} of this server's {limit}: try again in a moment"
    ),
    "bad_setting": (
        "QKV_MEMORY_BUDGET must be a size such as 6GB, 500MB or a number of bytes, at least 1MB; got {value}"
    ),
    "what_trace": "a traced forward pass of {T} tokens ({n} activations recorded)",
    "what_lens": "the logit lens of {T} positions ({rows} rows of {d_vocab} probabilities each)",
}

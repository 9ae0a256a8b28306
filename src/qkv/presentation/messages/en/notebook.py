"""qkv.show, the explorer inline in a notebook (qkv.apps.notebook): in English (the same keys as zh/notebook.py)."""

MESSAGES = {
    "too_large": (
        "this view's page would take {size}, more than a notebook view holds ({limit}): show a shorter text "
        "(this one has {n} tokens), or explore it with `qkv serve`"
    ),
    "too_large_early": (
        "this view's page would take at least {size}, more than a notebook view holds ({limit}): show a shorter "
        "text (this one has {n} tokens), or explore it with `qkv serve`"
    ),
    "plain": "qkv explorer of {n} tokens ({model}), opening on layer {layer}, head {head}: {text}",
    "title": "qkv explorer: {text}",
    "still": (
        "A still picture of layer {layer}, head {head}: this viewer runs no scripts, so the live explorer that "
        "qkv.show made is not shown here. Open the notebook in Jupyter, VS Code or Colab to explore it."
    ),
}

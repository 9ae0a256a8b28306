"""The explorer's guided tour (qkv.apps.web.routes_tour, qkv.analysis.no_positions): its refusals, in English
(the same keys as zh/tour.py)."""

MESSAGES = {
    "positions_decoder": (
        "positions can be switched off only for a GPT (a decoder): this model is not one, so the tour's positions "
        "step shows the bundled model's numbers instead (qkv serve)"
    ),
    "no_translator": (
        "the bundled translation model is not installed here ({error}): train one with "
        "qkv train --task translate, or open it with qkv serve --ckpt translate"
    ),
}

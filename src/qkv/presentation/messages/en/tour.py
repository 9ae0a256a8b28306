"""The explorer's guided tour (qkv.apps.web.routes_tour, qkv.analysis.no_positions): its refusals, in English
(the same keys as zh/tour.py)."""

MESSAGES = {
    "positions_decoder": (
        "positions can be switched off only for a GPT (a decoder): this model is not one, so the tour's positions "
        "step cannot be measured on it; serve a decoder, such as the bundled model (qkv serve), to see it"
    ),
    "no_translator": (
        "the bundled translation model is not installed here ({error}): train one with "
        "qkv train --task translate, or serve a translation checkpoint directory with qkv serve --ckpt DIR"
    ),
}

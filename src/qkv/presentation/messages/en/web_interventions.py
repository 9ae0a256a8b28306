"""The explorer's intervention panels (qkv.apps.web.routes_interventions): their refusals, in English
(the same keys as zh/web_interventions.py)."""

MESSAGES = {
    "patch_work": (
        "patching {site} here runs {pieces} pieces of {T} tokens through a model of {params:,} parameters, "
        "{work:,} parameter-tokens, more than the page computes for one request ({most:,}): "
        "use at most {T_max} tokens, or qkv.analysis.patch in Python"
    ),
    "patch_too_large": (
        "patching {site} here runs {pieces} pieces through a model of {params:,} parameters, more than the page "
        "computes for one request ({most:,} parameter-tokens) even for one token: use qkv.analysis.patch in Python"
    ),
}

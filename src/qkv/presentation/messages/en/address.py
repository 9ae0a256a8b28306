"""A view the page keeps in its address and exports (qkv.apps.web.export, POST /api/export): the refusals, in
English (the same keys as zh/address.py)."""

MESSAGES = {
    "part": "part must be one of {parts} for this model, got {got}",
    "no_part": "part names one of a translation model's attentions; this model has one kind: leave it out (got {got})",
    "panel": "panel must be one of {panels}, got {got}",
    "inputs": "a panel's inputs may hold at most {n} values in all, of at most {chars} characters each; got {got}",
}

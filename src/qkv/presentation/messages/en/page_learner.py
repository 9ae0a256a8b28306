"""The explorer's learner-facing additions (qkv.apps.web): the heads' measured roles, the compare card's
reading of the model's own prediction (the same keys as zh/page_learner.py)."""

MESSAGES = {
    "role_short_cue": "cue verb",
    "role_short_previous": "previous",
    "role_short_start": "start",
    "role_short_self": "itself",
    "role_label_cue": "the verb that decides the word's sense",
    "role_label_previous": "the token just before",
    "role_label_start": "the first token (position 0)",
    "role_label_self": "its own position",
    "roles_family": "the roles are measured on a GPT's sense sentences: this model is not one",
    "roles_probes": "this model's tokenizer cannot write the sense sentences the roles are measured on",
}

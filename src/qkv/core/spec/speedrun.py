"""The checks of the speedrun's switches (modded-nanogpt's changes to a GPT and its training), kept out of
config.py so that it stays readable. Each raises ValueError with one line naming the field, as config.py does.

    ModelConfig.zero_init      W_O and the MLP's W_out start at zero: every block starts as the identity
    ModelConfig.value_embeds   the first N layers mix a table's row into their values: v = (1 - λ) v + λ VE[token]
    TrainConfig.optimizer      "muon": Muon for the blocks' matrices, AdamW for the rest (muon_lr its peak lr)

(ReLU², QK-norm, the logits' soft-cap and the untied head were already switches: activation="relu2",
qk_norm, output_logits_soft_cap, tie_embeddings=false.)
"""

from __future__ import annotations

import math

OPTIMIZERS = ("adamw", "muon")


def check_model_switches(cfg, family) -> None:
    """zero_init a boolean; value_embeds an integer from 0 to n_layers; either one a GPT's only (llm_parts);
    value embeddings need the values' own projection W_V (values="v")."""
    if not isinstance(cfg.zero_init, bool):
        raise ValueError(f"zero_init must be true or false; got {cfg.zero_init!r}")
    n = cfg.value_embeds
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= cfg.n_layers:
        raise ValueError(f"value_embeds must be an integer from 0 to n_layers ({cfg.n_layers}); got {n!r}")
    used = [name for name in ("zero_init", "value_embeds") if getattr(cfg, name)]
    if used and not family.llm_parts:
        raise ValueError(f"{used[0]} is for a GPT; {family.title} has none")
    if n and cfg.values != "v":
        raise ValueError("value_embeds mixes a row into the values v: it needs values='v' (their own W_V)")


def check_train_switches(tc) -> None:
    """optimizer one of OPTIMIZERS; muon_lr a number from 0 to 10."""
    if tc.optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {tc.optimizer!r}")
    lr = tc.muon_lr
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not math.isfinite(lr) or not 0 <= lr <= 10:
        raise ValueError(f"muon_lr must be a number from 0 to 10; got {lr!r}")

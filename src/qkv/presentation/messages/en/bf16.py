"""What qkv says about computing in bfloat16 (--dtype bfloat16 for generate, explain and every command
that reads a model; qkv.core.machine.cpu), in English (the same keys as zh/bf16.py)."""

MESSAGES = {
    "slow_here": (
        "note: this CPU has no native bfloat16 (neither AMX nor AVX-512 BF16): every bfloat16 product is "
        "widened to float32 first, so bfloat16 runs slower here than float32 (it still halves the memory)"
    ),
    "computed_in": (
        "Computed in {dtype}: the weights and every number below are {dtype} (8 significant bits, about 3 "
        "decimal digits), so they may differ from float32's from the third digit on."
    ),
}

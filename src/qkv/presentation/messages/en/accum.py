"""What training says about how a step computes (qkv.core.train): gradient accumulation, torch.compile,
and the float type --precision auto chose (the run's first line), in English (the same keys as zh/accum.py)."""

MESSAGES = {
    # --set grad_accum=N
    "rank_rows": (
        "batch_size={batch_size} does not split into {nproc} process(es) x grad_accum={n} micro-batches "
        "(choose a batch_size that is a multiple of {multiple})"
    ),
    "translate": (
        "--task translate does not accumulate gradients (its batches' target lengths differ): "
        "leave grad_accum at 1 and set batch_size instead"
    ),
    # --compile
    "compiling": "compiling the model with torch.compile: the first step takes longer (on a CPU, a minute or more)",
    "compile_failed": ("torch.compile cannot compile the model on this machine ({reason}); train without --compile"),
    "compile_translate": "--task translate does not compile its model: train it without --compile",
    # the run's first line: which float type a step computes in, and why
    "precision": "precision: {name} ({why})",
    "name_float32": "float32",
    "name_bfloat16": "bfloat16 autocast, float32 weights",
    "name_float16": "float16 autocast with a gradient scaler, float32 weights",
    "why_asked": "as --precision asked",
    "why_cpu_amx": "this CPU has AMX, matrix units that multiply bfloat16",
    "why_cpu_avx512": "this CPU has AVX-512 BF16",
    "why_cpu_avx512_narrow": "this CPU has AVX-512 BF16 but no AMX, and at d_model < 256 bfloat16 does not pay there",
    "why_cpu_none": "this CPU has neither AMX nor AVX-512 BF16, so bfloat16 would be slower here",
    "why_cuda_bf16": "this GPU computes in bfloat16",
    "why_cuda_fp16": "this GPU lacks bfloat16",
    "why_mps": "auto is float32 on MPS",
}

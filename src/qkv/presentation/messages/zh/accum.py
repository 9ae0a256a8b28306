"""训练时关于每一步怎样计算的话（qkv.core.train）：梯度累积、torch.compile，以及 --precision auto
选了哪种浮点类型（训练的第一行）。与 en/accum.py 同键。"""

MESSAGES = {
    # --set grad_accum=N
    "rank_rows": (
        "batch_size={batch_size} 无法平分成 {nproc} 个进程 × grad_accum={n} 个微批次"
        "（请把 batch_size 设为 {multiple} 的倍数）"
    ),
    "translate": "--task translate 不做梯度累积（各批次的目标句长度不同）：请让 grad_accum 保持 1，改设 batch_size",
    # --compile
    "compiling": "正在用 torch.compile 编译模型：第一步会慢一些（在 CPU 上可能要一分钟以上）",
    "compile_failed": "torch.compile 在这台机器上编译不了模型（{reason}）；请去掉 --compile 再训练",
    "compile_translate": "--task translate 不编译它的模型：请去掉 --compile 再训练",
    # 训练的第一行：每一步用哪种浮点类型计算，为什么
    "precision": "精度：{name}（{why}）",
    "name_float32": "float32",
    "name_bfloat16": "bfloat16 自动混合精度，权重仍为 float32",
    "name_float16": "float16 自动混合精度加梯度缩放，权重仍为 float32",
    "why_asked": "按 --precision 的要求",
    "why_cpu_amx": "这颗 CPU 有 AMX，能直接做 bfloat16 矩阵乘法的矩阵单元",
    "why_cpu_avx512": "这颗 CPU 有 AVX-512 BF16 指令",
    "why_cpu_avx512_narrow": "这颗 CPU 有 AVX-512 BF16 但没有 AMX，模型的 d_model 小于 256 时 bfloat16 并不更快",
    "why_cpu_none": "这颗 CPU 既没有 AMX 也没有 AVX-512 BF16，用 bfloat16 反而更慢",
    "why_cuda_bf16": "这块 GPU 能用 bfloat16 计算",
    "why_cuda_fp16": "这块 GPU 不支持 bfloat16",
    "why_mps": "在 MPS 上 auto 就是 float32",
}

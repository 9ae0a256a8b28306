"""qkv 关于用 bfloat16 计算时说的话（generate、explain 及所有读取模型的命令的 --dtype bfloat16；
qkv.core.machine.cpu），中文（与 en/bf16.py 键相同）。"""

MESSAGES = {
    "slow_here": (
        "提示：这台 CPU 没有原生 bfloat16 指令（既无 AMX，也无 AVX-512 BF16）：每次 bfloat16 乘法都要先转成 "
        "float32 再算，所以这里 bfloat16 比 float32 慢（但内存仍减半）"
    ),
    "computed_in": (
        "以 {dtype} 计算：权重和下面的每个数都是 {dtype}（8 位有效二进制位，约 3 位十进制有效数字），"
        "所以与 float32 的结果可能从第三位有效数字起不同。"
    ),
}

"""Whether the CPU multiplies bfloat16 natively is read from /proc/cpuinfo's flags (core/machine/cpu.py),
which benchmarks/smollm2_speed.py prints beside its bfloat16 figures."""

from __future__ import annotations

from qkv.core.machine.cpu import BF16_KINDS, bf16_support, cpu_flags

CPUINFO = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx2 avx512f {extra}\nbugs\t\t: spectre\n"


def test_amx_then_avx512_bf16_then_none():
    assert bf16_support(cpu_flags(CPUINFO.format(extra="avx512_bf16 amx_bf16 amx_tile"))) == "amx"
    assert bf16_support(cpu_flags(CPUINFO.format(extra="avx512_bf16"))) == "avx512"
    assert bf16_support(cpu_flags(CPUINFO.format(extra=""))) == "none"
    assert cpu_flags(CPUINFO.format(extra="")) >= {"avx512f", "sse2"} and "spectre" not in cpu_flags(CPUINFO)


def test_a_machine_without_flags_has_none():
    assert cpu_flags("processor : 0\n") == set() and bf16_support(set()) == "none"
    assert bf16_support() in BF16_KINDS  # this machine's, whatever it is

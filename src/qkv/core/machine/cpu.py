"""What this CPU computes in bfloat16 natively, read from /proc/cpuinfo's flags (Linux, x86).

bfloat16 halves the bytes of every weight, which a generation (one token at a time) reads in full at
each step; whether the arithmetic is fast depends on the instructions the CPU has:

    amx       Intel AMX (amx_bf16, Sapphire Rapids and later): tile matrix products in bf16,
              several times float32's speed
    avx512    AVX-512 BF16 (avx512_bf16, Cooper Lake, Zen 4) without AMX: bf16 dot products in
              vector registers, about 2.5x float32 at the same width
    none      neither: every bf16 product is widened to float32 first, so bf16 is slower than
              float32 (it only halves the memory)

    bf16_support()          # "amx", "avx512" or "none"
"""

from __future__ import annotations

from pathlib import Path

BF16_KINDS = ("amx", "avx512", "none")


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The flags of the first CPU in /proc/cpuinfo (or in the text `cpuinfo`); empty where there is none."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")[:1_000_000]  # the first CPUs are enough
        except OSError:  # not Linux
            return set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86 says flags, ARM Features
            return set(value.split())
    return set()


def bf16_support(flags: set[str] | None = None) -> str:
    """How this CPU multiplies bfloat16 matrices: "amx", "avx512" or "none" (see the module's table)."""
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:
        return "amx"
    if "avx512_bf16" in flags:
        return "avx512"
    return "none"

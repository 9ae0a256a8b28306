"""Training speed in float32 and under bfloat16 autocast on this CPU: tokens/s of qkv's own training step
(LMData.step, as `qkv train --precision float32|bfloat16` runs it) at the `baby` and `small` presets,
alternating rounds in one process. It measures what `--precision auto` decides from the CPU's flags
(qkv.core.machine.cpu.bf16_support: AMX, AVX-512 BF16 or neither).

    python benchmarks/cpu_precision.py [--presets baby small] [--steps 10] [--rounds 5]
"""

from __future__ import annotations

from common import interleaved, machine, median
from compile_speed import BATCH, trainer, training_args

from qkv.core.machine.cpu import bf16_support
from qkv.core.machine.device import autocast_dtype


def main() -> None:
    args = training_args(__doc__).parse_args()
    auto = f"{autocast_dtype('cpu', width=128)} / {autocast_dtype('cpu', width=384)}"
    print(
        f"training in float32 and bf16 autocast, {machine()}, CPU bf16: {bf16_support()}, auto at d_model 128 / 384: "
        f"{auto}"
    )
    print(f"{'preset':<8}{'batch':>6}{'float32 tok/s':>15}{'bf16 tok/s':>12}{'bf16/f32':>10}")
    for preset in args.presets:
        BATCH[preset], fns, tokens = args.batch or BATCH[preset], {}, 0
        for precision in ("float32", "bfloat16"):
            fns[precision], tokens = trainer(preset, precision, compile=False)
            for _ in range(3):  # warm up: allocator, kernels, optimizer state
                fns[precision]()
        times = interleaved({k: (lambda f=f: [f() for _ in range(args.steps)]) for k, f in fns.items()}, args.rounds)
        f32, bf16 = (args.steps * tokens / median(times[k]) for k in ("float32", "bfloat16"))
        print(f"{preset:<8}{BATCH[preset]:>6}{f32:>15,.0f}{bf16:>12,.0f}{bf16 / f32:>10.2f}")


if __name__ == "__main__":
    main()

"""Print some of the built-in corpus: ``python -m qkv.corpus [-n N] [--lang L]``."""

from __future__ import annotations

import argparse

from . import LANGS, PHENOMENA, generate, probes


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m qkv.corpus")
    parser.add_argument("-n", type=int, default=20, help="number of sentences")
    parser.add_argument("--lang", default="both", choices=LANGS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probes", choices=PHENOMENA,
                        help="print held-out probes for a phenomenon instead")
    args = parser.parse_args()
    if args.probes:
        lang = "zh" if args.lang == "both" else args.lang
        for p in probes(args.probes, lang, args.seed)[: args.n]:
            print(f"{p.prompt} [{p.expected}]  not: {' / '.join(p.alternatives)}")
    else:
        print(generate(args.seed, args.n, args.lang), end="")


if __name__ == "__main__":
    main()

"""Throughput of the synthetic roll generator: images per second in one process.

    python tests/benchmarks/bench_synth.py [--n 60] [--size 640 640] [--seed 0]

Prints images/s for whole samples (physics, rendering, JPEG) by wall clock and by CPU time
(the two agree on an idle machine; on a busy one the CPU-time figure is the fair one), and the
share spent in physics.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from vision.synth import (
    make_sample,  # noqa: E402
    physics,  # noqa: E402
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--size", type=int, nargs=2, default=(640, 640))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    spent = [0.0]
    original = physics.simulate

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent[0] += time.perf_counter() - t

    import vision.synth.sample as sample_module

    sample_module.simulate = timed
    make_sample(args.seed, 10**6, *args.size)  # warm-up (imports, caches)
    spent[0] = 0.0
    times, dice, labelled, states = [], 0, 0, {}
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(args.n):
        t = time.perf_counter()
        s = make_sample(args.seed, i, *args.size)
        times.append(time.perf_counter() - t)
        dice += len(s.dice)
        labelled += sum(d["labelled"] for d in s.dice)
        for d in s.dice:
            states[d["state"]] = states.get(d["state"], 0) + 1
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    w, h = args.size
    print(f"synth {w}x{h}, {args.n} images, seed {args.seed}, 1 process")
    print(f"images/s: {args.n / total:.2f} (wall clock)")
    print(f"images/s per CPU-second: {args.n / cpu:.2f} (what one process does on a free core)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average during run: {load:.1f} on {os.cpu_count()} cores")
    print(
        f"ms per image: median {1000 * np.median(times):.0f}, p90 {1000 * np.percentile(times, 90):.0f}"
    )
    print(f"physics share: {100 * spent[0] / total:.0f}%")
    print(f"dice: {dice} ({labelled} labelled), states: {states}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""PyTorch twin of bench/bench_elementwise.cpp (2 threads): median seconds per
call of add/mul/exp/add_/broadcast add/copy for 1M, 4M, 16M floats, as JSON lines."""
import json
import statistics
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)


def bench(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


for n in (1 << 20, 1 << 22, 1 << 24):
    a, b = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    m, row = torch.rand(n // 1024, 1024), torch.rand(1024)
    reps = 200 if n <= 1 << 20 else 40
    cases = {
        "copy": (lambda: out.copy_(a), 8),
        "add": (lambda: a + b, 12),
        "add_inplace": (lambda: a.add_(b), 12),
        "mul": (lambda: a * b, 12),
        "exp": (lambda: a.exp(), 8),
        "add_broadcast_row": (lambda: m + row, 8),
    }
    for name, (fn, bytes_per) in cases.items():
        t = bench(fn, reps)
        print(json.dumps({"op": name, "n": n, "seconds": t, "GBps": n * bytes_per / t / 1e9}))

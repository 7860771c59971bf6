#!/usr/bin/python3
"""PyTorch twin of bench/bench_reduction.cpp (2 threads): median seconds per
call of float32 sum over all / last dim for 1M, 4M, 16M floats, [4096, 4096]
sum over dim 0 and 1, amax and last-dim softmax, as JSON lines."""
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
    a = torch.rand(n)
    m = torch.rand(n // 1024, 1024)
    reps = 200 if n <= 1 << 20 else 40
    print(json.dumps({"op": "sum_all", "n": n, "seconds": bench(lambda: a.sum(), reps)}))
    print(json.dumps({"op": "sum_lastdim", "n": n, "seconds": bench(lambda: m.sum(1), reps)}))
sq = torch.rand(4096, 4096)
for dim in (0, 1):
    print(json.dumps({"op": f"sum_4096_dim{dim}", "n": 4096 * 4096,
                      "seconds": bench(lambda: sq.sum(dim), 40)}))
a = torch.rand(1 << 22)
print(json.dumps({"op": "amax_all", "n": 1 << 22, "seconds": bench(lambda: a.amax(), 100)}))
s = torch.randn((1 << 22) // 1024, 1024)
print(json.dumps({"op": "softmax_lastdim", "n": 1 << 22, "seconds": bench(lambda: s.softmax(1), 100)}))

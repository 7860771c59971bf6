#!/usr/bin/python3
"""PyTorch twin of bench/bench_matmul.cpp (2 threads): torch.mm GFLOP/s
(median of calls, 2 n^3 per call) for float32 n = 64..2048 and bfloat16
n = 1024, 2048, as JSON lines: "mm" allocates its output each call (as
Ember's mm does), "mm_out" writes into a preallocated one (as anchors/w4_gemm.py)."""
import json
import statistics
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
torch.manual_seed(0)

for dtype, sizes in ((torch.float32, (64, 128, 256, 512, 1024, 2048)),
                     (torch.bfloat16, (1024, 2048))):
    for n in sizes:
        a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
        c = torch.empty(n, n, dtype=dtype)
        for op, fn in (("mm", lambda: torch.mm(a, b)), ("mm_out", lambda: torch.mm(a, b, out=c))):
            fn()
            t0 = time.perf_counter()
            fn()
            reps = max(5, min(500, int(0.5 / max(time.perf_counter() - t0, 1e-9))))
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            med = statistics.median(times)
            print(json.dumps({"op": op, "dtype": str(dtype).split(".")[-1], "n": n,
                              "gflops_median": 2 * n ** 3 / med / 1e9, "reps": reps}), flush=True)

#!/usr/bin/python3
"""PyTorch twin of bench/bench_pool.cpp (2 threads): W1's MaxPool2d(2) on
[128,32,28,28] and [128,64,14,14] float32 — forward without grad, forward with
indices, forward+backward — as JSON lines of median ms and img/s."""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
torch.manual_seed(0)


def median_ms(fn, reps=30):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


for name, (n, c, hw) in {"w1_pool1": (128, 32, 28), "w1_pool2": (128, 64, 14)}.items():
    x = torch.randn(n, c, hw, hw)
    xg = x.clone().requires_grad_()
    g = torch.randn(n, c, hw // 2, hw // 2)

    def fwd():
        with torch.no_grad():
            F.max_pool2d(x, 2)

    def fwd_indices():
        with torch.no_grad():
            F.max_pool2d(x, 2, return_indices=True)

    def fwd_bwd():
        xg.grad = None
        F.max_pool2d(xg, 2).backward(g)

    for kind, fn in (("forward", fwd), ("forward_indices", fwd_indices), ("forward_backward", fwd_bwd)):
        ms = median_ms(fn)
        print(json.dumps({"bench": f"max_pool_{kind}/{name}", "ms": round(ms, 3), "img_per_s": round(n / ms * 1e3, 1)}))

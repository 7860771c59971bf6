#!/usr/bin/python3
"""PyTorch twin of bench/bench_conv.cpp (2 threads): W1's CNN layers at batch
128 (conv1 1->32 28x28, conv2 32->64 14x14, 3x3 pad 1; forward and
forward+backward; MaxPool2d(2) forward+backward) as JSON lines of median ms
and img/s. W6 itself is /work/shared/anchors/w6_conv.py."""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
torch.manual_seed(0)


def median_ms(fn, reps=10):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


for name, (n, cin, cout, hw, input_grad) in {"w1_conv1": (128, 1, 32, 28, False),
                                             "w1_conv2": (128, 32, 64, 14, True)}.items():
    x = torch.randn(n, cin, hw, hw)
    w = (torch.randn(cout, cin, 3, 3) * 0.05).requires_grad_()
    b = torch.randn(cout).requires_grad_()
    g = torch.randn(n, cout, hw, hw)
    xg = x.clone().requires_grad_(input_grad)

    def fwd():
        with torch.no_grad():
            F.conv2d(x, w, b, padding=1)

    def fwd_bwd():
        w.grad = b.grad = xg.grad = None
        F.conv2d(xg, w, b, padding=1).backward(g)

    for kind, fn in (("forward", fwd), ("forward_backward", fwd_bwd)):
        ms = median_ms(fn)
        print(json.dumps({"bench": f"{kind}/{name}", "ms": round(ms, 3), "img_per_s": round(n / ms * 1e3, 1)}))

for name, (n, c, hw) in {"w1_pool1": (128, 32, 28), "w1_pool2": (128, 64, 14)}.items():
    x = torch.randn(n, c, hw, hw, requires_grad=True)
    g = torch.randn(n, c, hw // 2, hw // 2)

    def pool():
        x.grad = None
        F.max_pool2d(x, 2).backward(g)

    ms = median_ms(pool)
    print(json.dumps({"bench": f"max_pool_forward_backward/{name}", "ms": round(ms, 3), "img_per_s": round(n / ms * 1e3, 1)}))

#!/usr/bin/python3
"""PyTorch twin of bench/bench_transformer_infer.cpp: the W8 TransformerEncoder
(4 layers, d_model 256, 4 heads, ff 1024, batch_first) in eval mode under
no_grad on a [16, 128, 256] input (PyTorch 1.13 takes its fused encoder fast
path here), median ms per forward over `reps` calls after 3 warm-up calls.
Usage: /usr/bin/python3 transformer_infer.py [threads] [reps]; one JSON line."""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
torch.set_num_threads(threads)
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=4).eval()
x = torch.randn(16, 128, 256)
with torch.no_grad():
    for _ in range(3):
        model(x)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        model(x)
        ts.append((time.perf_counter() - t0) * 1e3)
ts.sort()
print(json.dumps({"workload": "w8_inference_torch", "threads": threads, "torch": torch.__version__,
                  "figures": {"eager_no_grad": {"ms": {"median": statistics.median(ts), "min": ts[0],
                                                        "max": ts[-1], "n": len(ts)}}}}))

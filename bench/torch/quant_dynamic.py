#!/usr/bin/python3
"""PyTorch twin of bench/bench_quant.cpp's Mlp and Lstm rows (issue 15):
torch.quantization.quantize_dynamic (qint8, Linear and LSTM) against the float
model, both in eval mode under inference_mode, at batch 1, 32 and 64.
  mlp:  W2's shapes, Linear 784-256-256-10 with ReLU between
  lstm: LSTM(32 -> 64, batch_first) over 50 steps, the last h through Linear(64 -> 2)
Median samples/s over `reps` timed calls (each call at least 2 ms of work,
repeated inside) after warm-up. Usage:
  /usr/bin/python3 quant_dynamic.py [threads] [reps] [mlp|lstm|all]; one JSON line."""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
which = sys.argv[3] if len(sys.argv) > 3 else "all"
torch.set_num_threads(threads)
torch.manual_seed(0)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.net(x)


class LstmCore(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.fc = nn.Linear(64, 2)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h[0])


def samples_per_s(model, x):
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        t0 = time.perf_counter()
        model(x)
        inner = max(1, int(0.002 / max(time.perf_counter() - t0, 1e-7)))  # >= 2 ms per timed call
        rates = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(inner):
                model(x)
            rates.append(inner * x.shape[0] / (time.perf_counter() - t0))
    rates.sort()
    return {"median": statistics.median(rates), "min": rates[0], "max": rates[-1], "n": len(rates)}


figures = {}
for name, model, shape in [("mlp", Mlp().eval(), (784,)), ("lstm", LstmCore().eval(), (50, 32))]:
    if which not in ("all", name):
        continue
    int8 = torch.quantization.quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)
    for batch in (1, 32, 64):
        x = torch.randn(batch, *shape)
        figures[f"{name}_fp32_b{batch}"] = {"samples_per_s": samples_per_s(model, x)}
        figures[f"{name}_int8_b{batch}"] = {"samples_per_s": samples_per_s(int8, x)}
print(json.dumps({"workload": "quant_dynamic_torch", "threads": threads, "torch": torch.__version__,
                  "quant_engine": torch.backends.quantized.engine, "figures": figures}))

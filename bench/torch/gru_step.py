#!/usr/bin/python3
"""PyTorch twin of bench/bench_lstm.cpp's BM_gru_train_step (issue 21's small
recurrent step): GRU(32 -> 64, batch_first) over x [16, 20, 32], the last
step's h through Linear(64 -> 10), cross-entropy, backward, Adam(1e-3).
Prints one JSON line: steps/s (median of `reps` timed runs of `steps` steps
after warm-up), and the peak RSS net of the interpreter with torch imported
(ru_maxrss before building the model, and at the end). Usage:
  /usr/bin/python3 gru_step.py [--threads N] [--steps S] [--reps R]"""
import argparse
import json
import resource
import statistics
import time

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--reps", type=int, default=5)
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

gru = nn.GRU(32, 64, batch_first=True)
head = nn.Linear(64, 10)
opt = torch.optim.Adam(list(gru.parameters()) + list(head.parameters()), 1e-3)
x, y = torch.randn(16, 20, 32), torch.randint(0, 10, (16,))


def step():
    opt.zero_grad()
    h = gru(x)[0][:, -1]
    loss = nn.functional.cross_entropy(head(h), y)
    loss.backward()
    opt.step()


for _ in range(20):
    step()
rates = []
for _ in range(a.reps):
    t = time.perf_counter()
    for _ in range(a.steps):
        step()
    rates.append(a.steps / (time.perf_counter() - t))
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"steps_per_s": {"median": statistics.median(rates), "all": rates},
                  "baseline_rss_mib": baseline_kib / 1024, "peak_rss_mib": peak_kib / 1024,
                  "net_peak_rss_mib": (peak_kib - baseline_kib) / 1024}))

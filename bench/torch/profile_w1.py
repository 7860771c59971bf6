#!/usr/bin/python3
"""torch.profiler breakdown of W1 training steps (the anchor model, batch 128, Adam, 2 threads): docs/performance.md."""
import os, sys, torch, torch.nn as nn
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/anchors"))
from w1_fmnist_cnn import make_model
torch.set_num_threads(2)
torch.manual_seed(0)
model = make_model(); opt = torch.optim.Adam(model.parameters(), lr=1e-3); lossf = nn.CrossEntropyLoss()
x = torch.randn(128, 1, 28, 28); y = torch.randint(0, 10, (128,))
def step():
    loss = lossf(model(x), y); opt.zero_grad(); loss.backward(); opt.step()
for _ in range(5): step()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU]) as p:
    for _ in range(30): step()
print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))

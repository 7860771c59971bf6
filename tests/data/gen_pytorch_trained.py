#!/usr/bin/python3
"""A W1 CNN trained by PyTorch, for `model.init_from` (issue 16).

Run once with Debian's python3-torch: /usr/bin/python3 tests/data/gen_pytorch_trained.py
Trains BENCHMARKS.md's W1 model (the zoo `cnn`: same layers, same state_dict
keys) for 2 epochs on the first 12,000 Fashion-MNIST training images (Adam
1e-3, batch 128, seed 0), then writes
  tests/data/pytorch/w1_cnn_trained.pt          torch.save(model.state_dict()), zip format
  tests/data/pytorch/w1_cnn_trained_test.safetensors
      predictions  uint8[10000]  PyTorch's argmax for every t10k image, in file order
      correct      int64[1]      how many of them match the labels
Ember must give the same prediction for every test image (tests/train/test_init_from.cpp).
"""
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "shared", "anchors"))
from w1_fmnist_cnn import load, make_model  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(2)
xtr, ytr = load("train")
xte, yte = load("t10k")
xtr, ytr = xtr[:12000], ytr[:12000]
model = make_model()
opt = torch.optim.Adam(model.parameters(), 1e-3)
for epoch in range(2):
    model.train()
    perm = torch.randperm(len(xtr))
    for i in range(0, len(xtr), 128):
        idx = perm[i:i + 128]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
        loss.backward()
        opt.step()
    print(f"epoch {epoch + 1}: last loss {loss.item():.4f}", flush=True)
model.eval()
with torch.no_grad():
    pred = torch.cat([model(xte[i:i + 500]).argmax(1) for i in range(0, len(xte), 500)])
correct = int((pred == yte).sum())
print(f"test accuracy {correct / len(yte):.4f} ({correct} of {len(yte)})")
os.makedirs(os.path.join(HERE, "pytorch"), exist_ok=True)
torch.save(model.state_dict(), os.path.join(HERE, "pytorch", "w1_cnn_trained.pt"))

tensors = {"predictions": (pred.to(torch.uint8).numpy().tobytes(), "U8", [len(pred)]),
           "correct": (struct.pack("<q", correct), "I64", [1])}
header, blobs, off = {}, [], 0
for k, (data, dt, shape) in tensors.items():
    header[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
    off += len(data)
    blobs.append(data)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(HERE, "pytorch", "w1_cnn_trained_test.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

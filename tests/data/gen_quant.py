# Generates tests/data/quant_reference.safetensors: PyTorch 1.13's (Debian
# python3-torch) quantize_per_tensor / quantize_per_channel integers,
# dequantized values and reprs (rounding ties, clamping), choose_qparams
# (torch._choose_qparams_per_tensor), the per-channel symmetric weight
# observer, and quantize_dynamic outputs of a Linear stack and an LSTM on the
# same weights (onednn engine: Debian's torch has no fbgemm).
# Run with /usr/bin/python3; the file is committed, so tests never need PyTorch.
import json
import os
import struct
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.ao.quantization import (default_per_channel_weight_observer, per_channel_dynamic_qconfig,
                                   quantize_dynamic)

torch.manual_seed(0)
torch.backends.quantized.engine = "onednn"
T = OrderedDict()
META = OrderedDict()


def put(name, t):
    T[name] = t.detach().clone().contiguous()


def strip(s):
    return s.replace("torch.", "")


# ---- quantize / dequantize, per tensor ----
# Ties: with scale 0.5, x * 2 lands on k + 0.5 exactly; nearbyint rounds to even.
ties = torch.tensor([-2.75, -1.25, -0.75, -0.25, 0.25, 0.75, 1.25, 1.75, 2.25, 3.0])
cases = {
    "ties_qint8": (ties, 0.5, 0, torch.qint8),
    "ties_quint8": (ties, 0.5, 3, torch.quint8),
    "clamp_qint8": (torch.tensor([-1000.0, -64.2, -64.0, 0.0, 63.5, 63.6, 1000.0]), 0.5, -1, torch.qint8),
    "clamp_quint8": (torch.tensor([-5.0, -0.1, 0.0, 0.35, 12.7, 25.5, 30.0]), 0.1, 10, torch.quint8),
    "random_quint8": (torch.randn(3, 30), 0.037, 128, torch.quint8),
    "random_qint8": (torch.randn(2, 3, 4), 0.02, 5, torch.qint8),
}
for k, (x, s, z, dt) in cases.items():
    q = torch.quantize_per_tensor(x, s, z, dt)
    put(f"pt.{k}.x", x)
    put(f"pt.{k}.int", q.int_repr().to(torch.int64))
    put(f"pt.{k}.deq", q.dequantize())
    META[f"pt.{k}.scale"] = repr(s)
    META[f"pt.{k}.zero_point"] = str(z)
    META[f"pt.{k}.dtype"] = str(dt).replace("torch.", "")
    META[f"pt.{k}.repr"] = strip(repr(q))

# ---- per channel ----
pc = {
    "w_axis0": (torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), torch.tensor([0, 1, -2]), 0,
                torch.qint8),
    "x_axis1": (torch.randn(2, 3, 4) * 3, torch.tensor([0.05, 0.5, 0.013], dtype=torch.float64),
                torch.tensor([128, 0, 255]), 1, torch.quint8),
}
for k, (x, s, z, axis, dt) in pc.items():
    q = torch.quantize_per_channel(x, s, z, axis, dt)
    put(f"pc.{k}.x", x)
    put(f"pc.{k}.scales", s)
    put(f"pc.{k}.zero_points", z)
    put(f"pc.{k}.int", q.int_repr().to(torch.int64))
    put(f"pc.{k}.deq", q.dequantize())
    META[f"pc.{k}.axis"] = str(axis)
    META[f"pc.{k}.dtype"] = str(dt).replace("torch.", "")
    META[f"pc.{k}.repr"] = strip(repr(q))

# ---- choose_qparams (quint8 [0, 255], fbgemm's ChooseQuantizationParams) ----
ranges = [(-1.0, 1.0), (0.0, 6.0), (-3.7, 0.0), (0.5, 2.0), (-2.0, -0.5), (0.0, 0.0), (-1e-7, 2e-7),
          (-0.31, 5.27), (-123.4, 0.01)]
rows = []
for lo, hi in ranges:
    x = torch.tensor([lo, hi])
    for rr in (False, True):
        s, z = torch._choose_qparams_per_tensor(x, rr)
        rows.append([lo, hi, 1.0 if rr else 0.0, s, float(z)])
put("choose_qparams", torch.tensor(rows, dtype=torch.float64))

# ---- per-channel symmetric weight observer ----
w = torch.randn(5, 7)
w[2] = 0.0  # an all-zero row: scale = eps
w[3] *= 100
obs = default_per_channel_weight_observer()
obs(w)
s, z = obs.calculate_qparams()
put("obs.w", w)
put("obs.scales", s.to(torch.float64))
put("obs.zero_points", z.to(torch.int64))
qw = torch.quantize_per_channel(w, s.to(torch.float64), z, 0, torch.qint8)
put("obs.int", qw.int_repr().to(torch.int64))

# ---- quantize_dynamic: Linear stack and LSTM ----
mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).eval()
x = torch.randn(6, 16) * 2
for n, p in mlp.named_parameters():
    put(f"mlp.p.{n}", p)
put("mlp.x", x)
put("mlp.float", mlp(x))
qmlp = quantize_dynamic(mlp, {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
put("mlp.int8", qmlp(x))
META["mlp.repr"] = strip(repr(qmlp))

lstm = nn.LSTM(8, 12).eval()
xs = torch.randn(5, 3, 8)
for n, p in lstm.named_parameters():
    put(f"lstm.p.{n}", p)
put("lstm.x", xs)
put("lstm.float", lstm(xs)[0])
qlstm = quantize_dynamic(nn.Sequential(lstm), {nn.LSTM}, dtype=torch.qint8)[0]
put("lstm.int8", qlstm(xs)[0])


# ---- write safetensors ----
def write(path):
    names = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64", torch.bool: "BOOL"}
    header = OrderedDict()
    header["__metadata__"] = META
    blobs = []
    off = 0
    for k, t in T.items():
        t = t.contiguous()
        data = t.numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "quant_reference.safetensors"))

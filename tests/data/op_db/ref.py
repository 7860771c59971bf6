"""Writes the reference cases of tests/op_db (PyTorch 1.13, Debian's python3-torch).

Each group's generator (gen_<group>.py, run with /usr/bin/python3) builds a
RefFile, adds cases and writes tests/data/op_db/<group>.safetensors, which is
committed: the tests never need PyTorch. A case "<op>.<variant>" stores
  x0, x1, ...  the inputs (float64 unless the case says otherwise)
  y0, y1, ...  the outputs, in PyTorch's order
  gy<k>        the upstream gradient used for floating output k
  gx<i>        d(sum_k (y_k * gy_k).sum()) / d x_i for each floating input
Written with json + struct (no safetensors package here), which also checks
Ember's reader against an independent writer.
"""
import json
import os
import struct
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64", torch.int32: "I32",
         torch.bool: "BOOL", torch.uint8: "U8"}


class RefFile:
    def __init__(self, group, seed=0):
        self.group = group
        self.tensors = OrderedDict()
        torch.manual_seed(seed)

    def put(self, key, t):
        assert key not in self.tensors, f"{key} written twice"
        self.tensors[key] = t.detach().clone().contiguous()

    def case(self, op, variant, inputs, fn, grad=True):
        """Runs fn(*inputs); grad=False for ops marked not differentiable."""
        assert "." not in variant
        key = f"{op}.{variant}"
        xs = [x.detach().clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
        for i, x in enumerate(xs):
            self.put(f"{key}.x{i}", x)
        ys = fn(*xs)
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        for k, y in enumerate(ys):
            self.put(f"{key}.y{k}", y)
        if not grad:
            return
        outs, gys = [], []
        for k, y in enumerate(ys):
            if y.is_floating_point() and y.requires_grad:
                gy = torch.randn_like(y)
                self.put(f"{key}.gy{k}", gy)
                outs.append(y)
                gys.append(gy)
        assert outs, f"{key}: no differentiable output (pass grad=False)"
        gxs = torch.autograd.grad(outs, [x for x in xs if x.requires_grad], gys, allow_unused=True)
        it = iter(gxs)
        for i, x in enumerate(xs):
            if x.requires_grad:
                g = next(it)
                self.put(f"{key}.gx{i}", g if g is not None else torch.zeros_like(x))

    def write(self):
        header = OrderedDict()
        blobs, off = [], 0
        for k, t in self.tensors.items():
            data = t.numpy().tobytes()
            header[k] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
            off += len(data)
            blobs.append(data)
        h = json.dumps(header, separators=(",", ":")).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        path = os.path.join(HERE, f"{self.group}.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for b in blobs:
                f.write(b)
        print(f"wrote {path}: {len(self.tensors)} tensors")


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


def uniform(lo, hi, *shape):
    return torch.empty(*shape, dtype=torch.float64).uniform_(lo, hi)

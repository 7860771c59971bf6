#!/usr/bin/python3
"""Writes tests/data/op_db/tensor_methods.txt: the names of tests/op_db/surface.txt
that PyTorch 1.13 (Debian's python3-torch) has as torch.Tensor methods, and
their in-place forms (name_). OpDbTable.EveryPyTorchTensorMethodExists checks
include/ember/core/tensor.h declares each one."""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SURFACE = os.path.join(HERE, "..", "..", "op_db", "surface.txt")

names = []
with open(SURFACE) as f:
    for line in f:
        line = line.strip()
        if line and not line.startswith(("#", "[")):
            names.append(line)
methods = []
for n in names:
    for m in (n, n + "_"):
        if hasattr(torch.Tensor, m) and m not in methods:
            methods.append(m)
out = os.path.join(HERE, "tensor_methods.txt")
with open(out, "w") as f:
    f.write("# torch.Tensor methods among tests/op_db/surface.txt's names (PyTorch "
            + torch.__version__.split("+")[0] + "), written by gen_methods.py\n")
    for m in methods:
        f.write(m + "\n")
print(f"wrote {out}: {len(methods)} methods")

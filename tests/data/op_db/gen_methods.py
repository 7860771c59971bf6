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


def write_list(file, what, items):
    out = os.path.join(HERE, file)
    with open(out, "w") as f:
        f.write(f"# {what} among tests/op_db/surface.txt's names (PyTorch "
                + torch.__version__.split("+")[0] + "), written by gen_methods.py\n")
        for m in items:
            f.write(m + "\n")
    print(f"wrote {out}: {len(items)} names")


write_list("tensor_methods.txt", "torch.Tensor methods", methods)

# torch's and torch.nn.functional's free in-place functions (torch.relu_(x),
# F.elu_(x)) over the same names: OpDbTable.EveryFreeInPlaceFunctionExists
# checks include/ember/ops declares each one.
functions = []
for n in names:
    f = n + "_"
    if (hasattr(torch, f) or hasattr(torch.nn.functional, f)) and f not in functions:
        functions.append(f)
write_list("inplace_functions.txt", "torch.<name>_ and torch.nn.functional.<name>_", functions)

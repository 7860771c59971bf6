#!/usr/bin/python3
"""Reference cases of tests/op_db/functional.cpp (see ref.py for the layout)."""
import torch
import torch.nn.functional as F

from ref import RefFile, randn

r = RefFile("functional")
r.case("softmax", "dim1", [randn(3, 4, 2)], lambda x: F.softmax(x, 1))
r.case("mse_loss", "sum", [randn(3, 4), randn(3, 4)], lambda x, y: F.mse_loss(x, y, reduction="sum"))
r.write()

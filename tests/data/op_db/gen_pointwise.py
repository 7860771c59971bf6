#!/usr/bin/python3
"""Reference cases of tests/op_db/pointwise.cpp (see ref.py for the layout)."""
import torch

from ref import RefFile, randn

r = RefFile("pointwise")
r.case("exp", "default", [randn(3, 4)], torch.exp)
r.case("mul", "broadcast", [randn(3, 1, 4), randn(2, 1)], torch.mul)
r.write()

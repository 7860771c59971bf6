#!/usr/bin/python3
"""Reference cases of tests/op_db/tensor.cpp (see ref.py for the layout)."""
import torch

from ref import RefFile, randn

r = RefFile("tensor")
r.case("cumsum", "dim1", [randn(3, 4, 2)], lambda x: torch.cumsum(x, 1))
r.case("sort", "descending", [randn(3, 5)], lambda x: torch.sort(x, -1, descending=True))
r.write()

"""Writes the reference cases of tests/op_db (PyTorch 1.13, Debian's python3-torch).

Each group's generator (gen_<group>.py, run with /usr/bin/python3) builds a
RefFile, adds cases and writes tests/data/op_db/<group>.safetensors, which is
committed: the tests never need PyTorch. A case "<op>.<variant>" stores
  x0, x1, ...  the inputs (float64 unless the case says otherwise)
  y0, y1, ...  the outputs, in PyTorch's order
  gy<k>        the upstream gradient used for floating output k
  gx<i>        d(sum_k (y_k * gy_k).sum()) / d x_i for each floating input
and "<op>.<variant>__empty.y<k>" (or "__empty.raised") for the same inputs
narrowed to 0 rows, and the integer-dtype cases (int_cases).
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
         torch.int16: "I16", torch.int8: "I8", torch.bool: "BOOL", torch.uint8: "U8"}


# The integer dtypes a case is also run in (int_variants): its floating
# inputs become round(3 x) in the dtype, and where PyTorch accepts them the
# case "<op>.<variant>__<i64|i32|i16|i8|u8|bool>" stores those inputs and PyTorch's outputs
# (forward only). Where PyTorch raises, no case: Ember is not asked to do
# what PyTorch does not.
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)


def as_int(x, dt):
    """A case's floating input in an integer dtype: round(3 x), its magnitude
    for uint8 (no wrap-around of negatives), and x > 0 for bool."""
    if dt == torch.bool:
        return x.detach() > 0
    r = (x.detach() * 3).round()
    return (r.abs() if dt == torch.uint8 else r).to(dt)


class RefFile:
    def __init__(self, group, seed=0, int_variants=False):
        self.group = group
        self.tensors = OrderedDict()
        self.int_variants = int_variants
        torch.manual_seed(seed)

    def put(self, key, t):
        assert key not in self.tensors, f"{key} written twice"
        self.tensors[key] = t.detach().clone().contiguous()

    def int_cases(self, key, inputs, fn, retype=False):
        """retype: an all-int64 case (bitwise ops) is also run with every input
        converted to each dtype of INT_DTYPES but int64 (as torch converts)."""
        floats = [x for x in inputs if x.is_floating_point()]
        if retype:
            assert inputs and all(x.dtype == torch.int64 for x in inputs), f"{key}: retype needs int64 inputs"
            convert = lambda x, dt: x.detach().to(dt)
            dtypes = [dt for dt in INT_DTYPES if dt != torch.int64]
        else:
            if not floats or not all(bool(torch.isfinite(x).all()) for x in floats):
                return
            convert = lambda x, dt: as_int(x, dt) if x.is_floating_point() else x.detach()
            dtypes = INT_DTYPES
        rng = torch.get_rng_state()  # a random op must not shift the later cases' inputs
        for dt in dtypes:
            xs = [convert(x, dt) for x in inputs]
            try:
                ys = fn(*xs)
            except Exception:
                continue
            ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
            if not all(isinstance(y, torch.Tensor) and y.dtype in NAMES for y in ys):
                continue
            name = f"{key}__{NAMES[dt].lower()}"
            for i, x in enumerate(xs):
                self.put(f"{name}.x{i}", x)
            for k, y in enumerate(ys):
                self.put(f"{name}.y{k}", y)
        torch.set_rng_state(rng)

    def empty_case(self, key, inputs, fn):
        """The case with every input that has a dim narrowed to 0 rows:
        "<key>__empty.y<k>" holds PyTorch's outputs, or "<key>__empty.raised"
        says PyTorch refused (forward only)."""
        if all(x.dim() == 0 for x in inputs):
            return
        xs = [x.detach().narrow(0, 0, 0).clone() if x.dim() > 0 else x.detach() for x in inputs]
        rng = torch.get_rng_state()  # a random op must not shift the later cases' inputs
        try:
            ys = fn(*xs)
        except Exception:
            self.put(f"{key}__empty.raised", torch.tensor(True))
            return
        finally:
            torch.set_rng_state(rng)
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        if not all(isinstance(y, torch.Tensor) and y.dtype in NAMES for y in ys):
            return
        for k, y in enumerate(ys):
            self.put(f"{key}__empty.y{k}", y)

    def case(self, op, variant, inputs, fn, grad=True, retype=False):
        """Runs fn(*inputs); grad=False for ops marked not differentiable;
        retype=True for an all-int64 case to run in the other integer dtypes."""
        assert "." not in variant
        key = f"{op}.{variant}"
        if self.int_variants:
            self.int_cases(key, inputs, fn, retype)
        self.empty_case(key, inputs, fn)
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

    def committed(self, path):
        """The committed file's tensors as raw bytes by key ({} when absent)."""
        if not os.path.exists(path):
            return {}
        with open(path, "rb") as f:
            raw = f.read()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        body = raw[8 + n:]
        return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
                for k, v in header.items() if k != "__metadata__"}

    def write(self):
        # A regenerated case that differs from the committed one only in the
        # last bits (another machine's BLAS sums in another order) keeps the
        # committed bytes, so adding a case does not churn the others.
        path = os.path.join(HERE, f"{self.group}.safetensors")
        old = self.committed(path)
        header = OrderedDict()
        blobs, off = [], 0
        for k, t in self.tensors.items():
            data = t.numpy().tobytes()
            prev = old.get(k)
            if prev and prev[0] == NAMES[t.dtype] and prev[1] == list(t.shape) and prev[2] != data:
                was = torch.frombuffer(bytearray(prev[2]), dtype=t.dtype).reshape(t.shape) if t.numel() else t
                if t.is_floating_point() and torch.allclose(was, t, rtol=1e-12, atol=1e-14, equal_nan=True):
                    data = prev[2]
            header[k] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
            off += len(data)
            blobs.append(data)
        h = json.dumps(header, separators=(",", ":")).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
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

#!/usr/bin/python3
"""Reference cases of tests/op_db/pointwise.cpp (see ref.py for the layout):
OPS.md's Pointwise ops, the elementwise predicates of Comparison and sorting,
and torch.nn.functional's elementwise activations."""
import math

import torch
import torch.nn.functional as F

from ref import RefFile, randn, uniform

r = RefFile("pointwise", int_variants=True)
inf, nan = math.inf, math.nan


def f64(*values):
    return torch.tensor(values, dtype=torch.float64)


def i64(*values):
    return torch.tensor(values, dtype=torch.int64)


# Values with NaN, infinities and signed zeros, for forward-only cases.
EDGE = f64(nan, inf, -inf, 0.0, -0.0, 1.5, -2.5, 1e-300)

# ---- existing core ops ----
r.case("exp", "default", [randn(3, 4)], torch.exp)
r.case("mul", "broadcast", [randn(3, 1, 4), randn(2, 1)], torch.mul)
r.case("mul", "scalar", [randn(3, 4)], lambda x: x * 2.5)
r.case("add", "broadcast_alpha", [randn(2, 3), randn(3)], lambda a, b: torch.add(a, b, alpha=2))
r.case("add", "int_float", [torch.randint(-5, 5, (2, 3)), randn(2, 3)], torch.add)
r.case("sub", "broadcast", [randn(4, 1), randn(1, 3)], torch.sub)
r.case("div", "default", [randn(3, 4), uniform(0.5, 2, 3, 4)], torch.div)
r.case("div", "trunc", [randn(3, 4) * 4, uniform(0.3, 2, 4)], lambda a, b: torch.div(a, b, rounding_mode="trunc"))
r.case("div", "floor", [randn(3, 4) * 4, uniform(0.3, 2, 4)], lambda a, b: torch.div(a, b, rounding_mode="floor"))
r.case("div", "trunc_int", [i64(7, -7, 7, -7, 0), i64(2, 2, -2, -2, 3)],
       lambda a, b: torch.div(a, b, rounding_mode="trunc"), grad=False)
r.case("div", "floor_int", [i64(7, -7, 7, -7, 0), i64(2, 2, -2, -2, 3)],
       lambda a, b: torch.div(a, b, rounding_mode="floor"), grad=False)
r.case("div", "int_true", [i64(7, -7, 1), i64(2, 2, 3)], torch.div, grad=False)
r.case("floor_divide", "default", [randn(3, 4) * 4, uniform(0.3, 2, 3, 4)], torch.floor_divide, grad=False)
r.case("remainder", "default", [randn(3, 4) * 4, uniform(0.3, 2, 3, 4)], torch.remainder)
r.case("remainder", "int", [i64(7, -7, 7, -7), i64(3, 3, -3, -3)], torch.remainder, grad=False)
r.case("pow", "tensor_tensor", [uniform(0.5, 2, 3, 4), randn(3, 4)], torch.pow)
r.case("pow", "tensor_scalar", [randn(3, 4)], lambda x: torch.pow(x, 3))
r.case("pow", "scalar_tensor", [randn(3, 4)], lambda x: torch.pow(2.5, x))
r.case("pow", "fractional", [uniform(0.5, 2, 5)], lambda x: torch.pow(x, 0.7))
r.case("neg", "default", [randn(3, 4)], torch.neg)
r.case("abs", "default", [randn(3, 4)], torch.abs)
r.case("expm1", "default", [randn(3, 4)], torch.expm1)
r.case("log", "default", [uniform(0.1, 5, 3, 4)], torch.log)
r.case("log1p", "default", [uniform(-0.9, 5, 3, 4)], torch.log1p)
r.case("sqrt", "default", [uniform(0.1, 5, 3, 4)], torch.sqrt)
r.case("rsqrt", "default", [uniform(0.1, 5, 3, 4)], torch.rsqrt)
r.case("sin", "default", [randn(3, 4)], torch.sin)
r.case("cos", "default", [randn(3, 4)], torch.cos)
r.case("tanh", "default", [randn(3, 4)], torch.tanh)
r.case("sigmoid", "default", [randn(3, 4)], torch.sigmoid)
r.case("erf", "default", [randn(3, 4)], torch.erf)
r.case("reciprocal", "default", [uniform(0.5, 2, 3, 4)], torch.reciprocal)
r.case("square", "default", [randn(3, 4)], torch.square)
r.case("sign", "default", [f64(-2.0, 0.0, 3.0, -0.5)], torch.sign)
r.case("floor", "default", [randn(3, 4) * 3], torch.floor)
r.case("ceil", "default", [randn(3, 4) * 3], torch.ceil)
r.case("trunc", "default", [randn(3, 4) * 3], torch.trunc)
r.case("round", "default", [f64(0.5, 1.5, 2.5, -0.5, -1.5, 1.2, -3.7)], torch.round)
r.case("round", "decimals", [randn(3, 4) * 10], lambda x: torch.round(x, decimals=2))
r.case("round", "negative_decimals", [randn(3, 4) * 1000], lambda x: torch.round(x, decimals=-2))
r.case("clamp", "scalar", [randn(3, 4)], lambda x: torch.clamp(x, -0.5, 0.5))
r.case("clamp", "min_only", [randn(3, 4)], lambda x: torch.clamp(x, min=0.1))
r.case("clamp", "tensor_bounds", [randn(3, 4), randn(3, 1) - 1, randn(4) + 1], torch.clamp)
r.case("lerp", "default", [randn(3, 4), randn(3, 4)], lambda a, b: torch.lerp(a, b, 0.3))
r.case("addcmul", "default", [randn(3, 4), randn(3, 4), randn(4)], lambda a, b, c: torch.addcmul(a, b, c, value=0.5))
r.case("addcdiv", "default", [randn(3, 4), randn(3, 4), uniform(0.5, 2, 4)],
       lambda a, b, c: torch.addcdiv(a, b, c, value=2))
r.case("logical_and", "default", [torch.tensor([True, False, True, False]), torch.tensor([True, True, False, False])],
       torch.logical_and, grad=False)
r.case("logical_or", "default", [torch.tensor([True, False, True, False]), torch.tensor([True, True, False, False])],
       torch.logical_or, grad=False)
r.case("logical_xor", "default", [torch.tensor([True, False, True, False]), torch.tensor([True, True, False, False])],
       torch.logical_xor, grad=False)
r.case("logical_not", "float", [f64(0.0, 1.5, -0.0, nan)], torch.logical_not, grad=False)
r.case("bitwise_and", "default", [i64(12, -7, 255, 0), i64(10, 3, -1, 5)], torch.bitwise_and, grad=False, retype=True)
r.case("bitwise_or", "default", [i64(12, -7, 255, 0), i64(10, 3, -1, 5)], torch.bitwise_or, grad=False, retype=True)
r.case("bitwise_xor", "default", [i64(12, -7, 255, 0), i64(10, 3, -1, 5)], torch.bitwise_xor, grad=False, retype=True)
r.case("bitwise_not", "default", [i64(12, -7, 0)], torch.bitwise_not, grad=False, retype=True)

# ---- new unary math ----
r.case("tan", "default", [uniform(-1.4, 1.4, 3, 4)], torch.tan)
r.case("asin", "default", [uniform(-0.95, 0.95, 3, 4)], torch.asin)
r.case("acos", "default", [uniform(-0.95, 0.95, 3, 4)], torch.acos)
r.case("atan", "default", [randn(3, 4) * 3], torch.atan)
r.case("sinh", "default", [randn(3, 4)], torch.sinh)
r.case("cosh", "default", [randn(3, 4)], torch.cosh)
r.case("asinh", "default", [randn(3, 4) * 3], torch.asinh)
r.case("acosh", "default", [uniform(1.1, 5, 3, 4)], torch.acosh)
r.case("atanh", "default", [uniform(-0.95, 0.95, 3, 4)], torch.atanh)
r.case("asin", "edge", [f64(1.5, -1.0, 1.0, nan)], torch.asin, grad=False)
r.case("log2", "default", [uniform(0.1, 5, 3, 4)], torch.log2)
r.case("log10", "default", [uniform(0.1, 5, 3, 4)], torch.log10)
r.case("log2", "edge", [f64(0.0, -1.0, inf, 8.0)], torch.log2, grad=False)
r.case("exp2", "default", [randn(3, 4) * 3], torch.exp2)
r.case("erfc", "default", [randn(3, 4) * 2], torch.erfc)
r.case("erfinv", "default", [uniform(-0.99, 0.99, 3, 4)], torch.erfinv)
r.case("erfinv", "edge", [f64(1.0, -1.0, 1.5, 0.0, 0.999999, -1e-10)], torch.erfinv, grad=False)
r.case("lgamma", "default", [uniform(0.1, 6, 3, 4)], torch.lgamma)
r.case("lgamma", "negative", [f64(-0.5, -1.5, -2.3, -3.7)], torch.lgamma)
r.case("digamma", "default", [uniform(0.1, 12, 3, 4)], torch.digamma)
r.case("digamma", "negative", [f64(-0.5, -1.5, -2.3, -3.7)], torch.digamma)
r.case("digamma", "edge", [f64(0.0, -0.0, -2.0, 10.0, 1e20)], torch.digamma, grad=False)
r.case("deg2rad", "default", [randn(3, 4) * 180], torch.deg2rad)
r.case("rad2deg", "default", [randn(3, 4)], torch.rad2deg)
r.case("frac", "default", [randn(3, 4) * 3], torch.frac)
r.case("sinc", "default", [torch.cat([randn(7), f64(0.0)])], torch.sinc)
r.case("sgn", "default", [f64(-2.0, 0.0, 3.0, -0.5)], torch.sgn)
r.case("signbit", "default", [EDGE], torch.signbit, grad=False)
r.case("signbit", "int", [i64(-3, 0, 5)], torch.signbit, grad=False)
r.case("logit", "default", [uniform(0.05, 0.95, 3, 4)], torch.logit)
r.case("logit", "eps", [f64(0.0, 0.01, 0.3, 0.7, 0.99, 1.0)], lambda x: torch.logit(x, eps=0.05))
r.case("nan_to_num", "default", [f64(nan, inf, -inf, 1.5, -2.0)], torch.nan_to_num)
r.case("nan_to_num", "values", [f64(nan, inf, -inf, 1.5, -2.0)],
       lambda x: torch.nan_to_num(x, nan=0.5, posinf=100.0, neginf=-100.0))

# ---- new binary math ----
r.case("atan2", "broadcast", [randn(3, 4), randn(4)], torch.atan2)
r.case("atan2", "signed_zeros", [f64(0.0, -0.0, 0.0, -0.0, 1.0, -1.0), f64(0.0, 0.0, -0.0, -0.0, 0.0, -0.0)],
       torch.atan2, grad=False)
r.case("hypot", "broadcast", [randn(3, 4), randn(3, 1)], torch.hypot)
r.case("copysign", "default", [randn(3, 4), randn(3, 4)], torch.copysign)
r.case("copysign", "signed_zeros", [f64(1.0, 2.0, -3.0, 0.0), f64(-0.0, 0.0, nan, -1.0)], torch.copysign, grad=False)
r.case("copysign", "scalar", [randn(3, 4)], lambda x: torch.copysign(x, -1.0))
r.case("nextafter", "default", [f64(1.0, 1.0, 0.0, -2.0), f64(2.0, 0.0, -1.0, -2.0)], torch.nextafter, grad=False)
r.case("fmod", "default", [randn(3, 4) * 4, uniform(0.3, 2, 3, 4) * torch.tensor([1.0, -1.0]).repeat(6).view(3, 4)],
       torch.fmod)
r.case("fmod", "scalar", [randn(3, 4) * 4], lambda x: torch.fmod(x, 1.5))
r.case("fmod", "int", [i64(7, -7, 7, -7), i64(3, 3, -3, -3)], torch.fmod, grad=False)
# Counts within [0, 64): PyTorch 1.13 shifts by larger or negative counts as
# the CPU happens to (C's undefined behaviour); Ember gives PyTorch 2's defined
# results there (0, or the sign fill), tested in tests/ops/test_pointwise_ops.cpp.
r.case("bitwise_left_shift", "default", [i64(1, -3, 5, 7, 1), i64(3, 2, 0, 60, 63)], torch.bitwise_left_shift,
       grad=False)
r.case("bitwise_right_shift", "default", [i64(64, -64, 5, -7, 9), i64(3, 2, 0, 63, 1)],
       torch.bitwise_right_shift, grad=False)
# Counts within [0, 8): defined in every integer dtype, so run in all of them.
r.case("bitwise_left_shift", "narrow", [i64(1, -3, 5, 7, 100, -128), i64(3, 2, 0, 7, 1, 1)],
       torch.bitwise_left_shift, grad=False, retype=True)
r.case("bitwise_right_shift", "narrow", [i64(64, -64, 5, -7, 127, -128), i64(3, 2, 0, 7, 1, 6)],
       torch.bitwise_right_shift, grad=False, retype=True)
r.case("logaddexp", "broadcast", [randn(3, 4), randn(4)], torch.logaddexp)
r.case("logaddexp", "edge", [f64(inf, -inf, -inf, 1.0, inf), f64(inf, -inf, 2.0, -inf, -inf)], torch.logaddexp,
       grad=False)
r.case("logaddexp2", "broadcast", [randn(3, 4), randn(4)], torch.logaddexp2)
r.case("xlogy", "default", [randn(3, 4), uniform(0.1, 3, 3, 4)], torch.xlogy)
r.case("xlogy", "edge", [f64(0.0, 0.0, 1.0, 2.0, 0.0), f64(0.0, nan, nan, 0.0, 2.0)], torch.xlogy, grad=False)
r.case("xlogy", "scalar_self", [uniform(0.1, 3, 3, 4)], lambda y: torch.xlogy(2.0, y))
r.case("float_power", "default", [uniform(0.5, 2, 3, 4), randn(3, 4)], torch.float_power)
r.case("float_power", "int", [i64(2, 3, -2), i64(3, 2, 2)], torch.float_power, grad=False)
r.case("float_power", "scalar", [uniform(0.5, 2, 3, 4)], lambda x: torch.float_power(x, 2.5))

# ---- comparison: elementwise predicates ----
r.case("fmax", "nan", [f64(1.0, nan, nan, -2.0, 3.0), f64(nan, 2.0, nan, 5.0, 3.0)], torch.fmax, grad=False)
r.case("fmax", "broadcast", [randn(3, 4), randn(4)], torch.fmax)
r.case("fmin", "nan", [f64(1.0, nan, nan, -2.0, 3.0), f64(nan, 2.0, nan, 5.0, 3.0)], torch.fmin, grad=False)
r.case("fmin", "broadcast", [randn(3, 4), randn(4)], torch.fmin)
r.case("maximum", "broadcast", [randn(3, 4), randn(4)], torch.maximum)
r.case("maximum", "nan", [f64(1.0, nan, -2.0), f64(nan, 2.0, 5.0)], torch.maximum, grad=False)
r.case("minimum", "broadcast", [randn(3, 4), randn(4)], torch.minimum)
r.case("eq", "broadcast", [f64(1.0, 2.0, nan, 3.0), f64(1.0, 2.5, nan, 3.0)], torch.eq, grad=False)
r.case("ne", "broadcast", [f64(1.0, 2.0, nan, 3.0), f64(1.0, 2.5, nan, 3.0)], torch.ne, grad=False)
r.case("lt", "scalar", [f64(1.0, 2.0, nan, 3.0)], lambda x: torch.lt(x, 2.0), grad=False)
r.case("le", "scalar", [f64(1.0, 2.0, nan, 3.0)], lambda x: torch.le(x, 2.0), grad=False)
r.case("gt", "broadcast", [randn(3, 4), randn(4)], torch.gt, grad=False)
r.case("ge", "int_float", [i64(1, 2, 3), f64(1.0, 2.5, 2.9)], torch.ge, grad=False)
r.case("isnan", "default", [EDGE], torch.isnan, grad=False)
r.case("isfinite", "default", [EDGE], torch.isfinite, grad=False)
r.case("isinf", "default", [EDGE], torch.isinf, grad=False)
r.case("isinf", "int", [i64(1, -2)], torch.isinf, grad=False)
r.case("isposinf", "default", [EDGE], torch.isposinf, grad=False)
r.case("isneginf", "default", [EDGE], torch.isneginf, grad=False)
r.case("isclose", "default", [f64(1.0, 1.0, nan, inf, inf, 0.0, 1e-9), f64(1.0 + 1e-6, 1.1, nan, inf, -inf, 1e-9, 0.0)],
       torch.isclose, grad=False)
r.case("isclose", "equal_nan", [f64(1.0, nan, 2.0), f64(1.0 + 1e-3, nan, 2.0)],
       lambda a, b: torch.isclose(a, b, rtol=1e-2, atol=0.0, equal_nan=True), grad=False)
r.case("isin", "default", [i64(1, 2, 3, 4, 5, 2).view(2, 3), i64(2, 5, 9)], torch.isin, grad=False)
r.case("isin", "invert", [f64(1.0, 2.5, nan, 4.0), f64(2.5, nan)], lambda a, b: torch.isin(a, b, invert=True),
       grad=False)
r.case("allclose", "default", [f64(1.0, 2.0), f64(1.0 + 1e-7, 2.0)], lambda a, b: torch.tensor(torch.allclose(a, b)),
       grad=False)
r.case("allclose", "far", [f64(1.0, 2.0), f64(1.1, 2.0)], lambda a, b: torch.tensor(torch.allclose(a, b)), grad=False)
r.case("equal", "default", [f64(1.0, 2.0), f64(1.0, 2.0)], lambda a, b: torch.tensor(torch.equal(a, b)), grad=False)
r.case("equal", "shape", [f64(1.0, 2.0), f64(1.0, 2.0, 3.0)], lambda a, b: torch.tensor(torch.equal(a, b)),
       grad=False)

# ---- torch.nn.functional: elementwise activations ----
# Samples stay clear of the kinks (gradients there follow each op's own rule,
# checked in tests/ops/test_pointwise_ops.cpp).
ACT = randn(3, 5) * 3
r.case("relu", "default", [ACT], F.relu)
r.case("threshold", "default", [ACT], lambda x: F.threshold(x, 0.5, -2.0))
r.case("relu6", "default", [ACT * 2], F.relu6)
r.case("hardtanh", "default", [ACT], F.hardtanh)
r.case("hardtanh", "range", [ACT], lambda x: F.hardtanh(x, -2.0, 0.5))
r.case("hardswish", "default", [ACT * 1.5], F.hardswish)
r.case("hardsigmoid", "default", [ACT * 1.5], F.hardsigmoid)
r.case("elu", "default", [ACT], F.elu)
r.case("elu", "alpha", [ACT], lambda x: F.elu(x, alpha=0.5))
r.case("selu", "default", [ACT], F.selu)
r.case("celu", "alpha", [ACT], lambda x: F.celu(x, alpha=1.5))
r.case("leaky_relu", "default", [ACT], F.leaky_relu)
r.case("leaky_relu", "slope", [ACT], lambda x: F.leaky_relu(x, 0.2))
r.case("prelu", "channels", [randn(2, 3, 4), f64(0.25, -0.5, 1.5)], F.prelu)
r.case("prelu", "shared", [randn(2, 3), f64(0.1)], F.prelu)
r.case("rrelu", "eval", [ACT], lambda x: F.rrelu(x, training=False))
# lower == upper: the random slope is fixed, so training mode is deterministic.
r.case("rrelu", "train_fixed", [ACT], lambda x: F.rrelu(x, 0.2, 0.2, training=True))
r.case("glu", "default", [randn(3, 4)], F.glu)
r.case("glu", "dim0", [randn(4, 3)], lambda x: F.glu(x, 0))
r.case("gelu", "default", [ACT], F.gelu)
r.case("gelu", "tanh", [ACT], lambda x: F.gelu(x, approximate="tanh"))
r.case("logsigmoid", "default", [torch.cat([ACT.flatten(), f64(-40.0, 40.0)])], F.logsigmoid)
r.case("hardshrink", "default", [ACT], F.hardshrink)
r.case("hardshrink", "lambd", [ACT], lambda x: F.hardshrink(x, 1.5))
r.case("softshrink", "default", [ACT], F.softshrink)
r.case("softshrink", "lambd", [ACT], lambda x: F.softshrink(x, 1.5))
r.case("tanhshrink", "default", [ACT], F.tanhshrink)
r.case("softsign", "default", [ACT], F.softsign)
r.case("softplus", "default", [ACT], F.softplus)
r.case("softplus", "beta", [ACT * 5], lambda x: F.softplus(x, beta=2, threshold=10))
r.case("silu", "default", [ACT], F.silu)
r.case("mish", "default", [ACT], F.mish)
r.case("softmin", "dim1", [randn(3, 5)], lambda x: F.softmin(x, 1))
r.case("softmin", "dim0", [randn(3, 5)], lambda x: F.softmin(x, 0))
r.case("softmax", "lastdim_3d", [randn(2, 3, 4)], lambda x: F.softmax(x, -1))
r.case("log_softmax", "dim1_3d", [randn(2, 3, 4)], lambda x: F.log_softmax(x, 1))
# The sample is random; its sum over dim is 1 and the straight-through
# gradient of that sum is 0 whatever the noise.
r.case("gumbel_softmax", "sum_hard", [randn(3, 5)], lambda x: F.gumbel_softmax(x, tau=0.5, hard=True).sum(-1))
r.case("gumbel_softmax", "sum_soft", [randn(3, 5)], lambda x: F.gumbel_softmax(x, tau=2.0).sum(-1))

# dtype=: the input is cast first (an integer tensor is accepted; float64 -> float32 keeps the gradient).
r.case("softmax", "dtype_from_int64", [torch.tensor([[1, 2, 3], [0, -1, 4]])],
       lambda x: F.softmax(x, 1, dtype=torch.float64), grad=False)
r.case("log_softmax", "dtype_float32", [randn(3, 4)], lambda x: F.log_softmax(x, -1, dtype=torch.float32))
r.case("softmin", "dtype_float32", [randn(2, 5)], lambda x: F.softmin(x, 0, dtype=torch.float32))
# Appended last: a case added earlier would shift every later case's random inputs.
r.case("lerp", "tensor_weight", [randn(3, 4), randn(4), uniform(0, 1, 3, 1)], torch.lerp)
r.write()

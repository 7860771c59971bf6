// op_db entries: pointwise ops, the elementwise predicates of Comparison and
// sorting, and torch.nn.functional's elementwise activations (OPS.md).
// Reference cases: tests/data/op_db/gen_pointwise.py. An op's first entry is
// the differentiable one where it has one (docs/ops.md reads it).
#include "op_db.h"

namespace ember::op_db {
namespace {

// The body of a one-output OpFn over the inputs x.
#define EMBER_FN(expr) one([](const Tensors& x) { return expr; })

class Entries {
 public:
  // A kernel op (or one built on its own kernel).
  OpInfo& kernel(std::string op, std::string variant, OpFn fn) { return add(op, variant, std::move(fn), Impl::kernel); }
  // A composite of other differentiable ops.
  OpInfo& composite(std::string op, std::string variant, OpFn fn) {
    return add(op, variant, std::move(fn), Impl::composite);
  }
  // Bool or integer results, or a case with NaN/inf/signed zeros: forward only.
  OpInfo& forward_only(std::string op, std::string variant, OpFn fn, Impl impl = Impl::kernel) {
    OpInfo& info = add(op, variant, std::move(fn), impl);
    info.differentiable = false;
    return info;
  }
  std::vector<OpInfo> ops;

 private:
  OpInfo& add(std::string& op, std::string& variant, OpFn fn, Impl impl) {
    OpInfo info;
    info.op = std::move(op);
    info.variant = std::move(variant);
    info.group = "pointwise";
    info.fn = std::move(fn);
    info.impl = impl;
    ops.push_back(std::move(info));
    return ops.back();
  }
};

const std::vector<ScalarType> kF32 = {kFloat32};
const std::vector<ScalarType> kF32BF16 = {kFloat32, kBFloat16};

void core_arithmetic(Entries& e) {
  e.kernel("exp", "default", EMBER_FN(exp(x[0]))).dtypes = kF32BF16;
  e.kernel("mul", "broadcast", EMBER_FN(mul(x[0], x[1]))).dtypes = kF32BF16;
  e.kernel("mul", "scalar", EMBER_FN(mul(x[0], 2.5))).dtypes = kF32;
  e.kernel("add", "broadcast_alpha", EMBER_FN(add(x[0], x[1], 2))).dtypes = kF32;
  e.kernel("add", "int_float", EMBER_FN(add(x[0], x[1])));
  e.kernel("sub", "broadcast", EMBER_FN(sub(x[0], x[1]))).dtypes = kF32;
  e.kernel("div", "default", EMBER_FN(div(x[0], x[1]))).dtypes = kF32;
  e.composite("div", "trunc", EMBER_FN(div(x[0], x[1], "trunc")));
  e.kernel("div", "floor", EMBER_FN(div(x[0], x[1], "floor")));
  e.forward_only("div", "trunc_int", EMBER_FN(div(x[0], x[1], "trunc")));
  e.forward_only("div", "floor_int", EMBER_FN(div(x[0], x[1], "floor")));
  e.forward_only("div", "int_true", EMBER_FN(div(x[0], x[1])));
  e.forward_only("floor_divide", "default", EMBER_FN(floor_divide(x[0], x[1])));
  e.kernel("remainder", "default", EMBER_FN(remainder(x[0], x[1]))).dtypes = kF32;
  e.forward_only("remainder", "int", EMBER_FN(remainder(x[0], x[1])));
  e.kernel("pow", "tensor_tensor", EMBER_FN(pow(x[0], x[1]))).dtypes = kF32;
  e.kernel("pow", "tensor_scalar", EMBER_FN(pow(x[0], 3))).dtypes = kF32;
  e.kernel("pow", "scalar_tensor", EMBER_FN(pow(2.5, x[0]))).dtypes = kF32;
  e.kernel("pow", "fractional", EMBER_FN(pow(x[0], 0.7))).dtypes = kF32;
  e.kernel("neg", "default", EMBER_FN(neg(x[0]))).dtypes = kF32BF16;
  e.kernel("abs", "default", EMBER_FN(abs(x[0]))).dtypes = kF32BF16;
  e.kernel("expm1", "default", EMBER_FN(expm1(x[0]))).dtypes = kF32;
  e.kernel("log", "default", EMBER_FN(log(x[0]))).dtypes = kF32;
  e.kernel("log1p", "default", EMBER_FN(log1p(x[0]))).dtypes = kF32;
  e.kernel("sqrt", "default", EMBER_FN(sqrt(x[0]))).dtypes = kF32BF16;
  e.kernel("rsqrt", "default", EMBER_FN(rsqrt(x[0]))).dtypes = kF32;
  e.kernel("sin", "default", EMBER_FN(sin(x[0]))).dtypes = kF32;
  e.kernel("cos", "default", EMBER_FN(cos(x[0]))).dtypes = kF32;
  e.kernel("tanh", "default", EMBER_FN(tanh(x[0]))).dtypes = kF32BF16;
  e.kernel("sigmoid", "default", EMBER_FN(sigmoid(x[0]))).dtypes = kF32BF16;
  e.kernel("erf", "default", EMBER_FN(erf(x[0]))).dtypes = kF32;
  e.kernel("reciprocal", "default", EMBER_FN(reciprocal(x[0]))).dtypes = kF32;
  e.composite("square", "default", EMBER_FN(square(x[0]))).dtypes = kF32;
  // The samples include 0 (sign) and ties (round): finite differences would
  // straddle the jump there, so only the analytic zero gradient is compared.
  OpInfo& sign_entry = e.kernel("sign", "default", EMBER_FN(sign(x[0])));
  sign_entry.dtypes = kF32;
  sign_entry.gradcheck = false;
  e.kernel("floor", "default", EMBER_FN(floor(x[0]))).dtypes = kF32;
  e.kernel("ceil", "default", EMBER_FN(ceil(x[0]))).dtypes = kF32;
  e.kernel("trunc", "default", EMBER_FN(trunc(x[0]))).dtypes = kF32;
  OpInfo& round_entry = e.kernel("round", "default", EMBER_FN(round(x[0])));
  round_entry.dtypes = kF32;
  round_entry.gradcheck = false;
  e.kernel("round", "decimals", EMBER_FN(round(x[0], 2)));
  e.kernel("round", "negative_decimals", EMBER_FN(round(x[0], -2)));
  e.kernel("clamp", "scalar", EMBER_FN(clamp(x[0], -0.5, 0.5))).dtypes = kF32;
  e.kernel("clamp", "min_only", EMBER_FN(clamp(x[0], 0.1, std::nullopt)));
  e.composite("clamp", "tensor_bounds", EMBER_FN(clamp(x[0], x[1], x[2])));
  e.composite("lerp", "default", EMBER_FN(lerp(x[0], x[1], 0.3))).dtypes = kF32;
  e.composite("lerp", "tensor_weight", EMBER_FN(x[0].lerp(x[1], x[2]))).dtypes = kF32;
  e.composite("addcmul", "default", EMBER_FN(addcmul(x[0], x[1], x[2], 0.5))).dtypes = kF32;
  e.composite("addcdiv", "default", EMBER_FN(addcdiv(x[0], x[1], x[2], 2))).dtypes = kF32;
  e.forward_only("logical_and", "default", EMBER_FN(logical_and(x[0], x[1])));
  e.forward_only("logical_or", "default", EMBER_FN(logical_or(x[0], x[1])));
  e.forward_only("logical_xor", "default", EMBER_FN(logical_xor(x[0], x[1])));
  e.forward_only("logical_not", "float", EMBER_FN(logical_not(x[0])));
  e.forward_only("bitwise_and", "default", EMBER_FN(bitwise_and(x[0], x[1])));
  e.forward_only("bitwise_or", "default", EMBER_FN(bitwise_or(x[0], x[1])));
  e.forward_only("bitwise_xor", "default", EMBER_FN(bitwise_xor(x[0], x[1])));
  e.forward_only("bitwise_not", "default", EMBER_FN(bitwise_not(x[0])));
}

void more_unary(Entries& e) {
  e.kernel("tan", "default", EMBER_FN(tan(x[0]))).dtypes = kF32;
  e.kernel("asin", "default", EMBER_FN(asin(x[0]))).dtypes = kF32;
  e.forward_only("asin", "edge", EMBER_FN(asin(x[0])));
  e.kernel("acos", "default", EMBER_FN(acos(x[0]))).dtypes = kF32;
  e.kernel("atan", "default", EMBER_FN(atan(x[0]))).dtypes = kF32;
  e.kernel("sinh", "default", EMBER_FN(sinh(x[0]))).dtypes = kF32;
  e.kernel("cosh", "default", EMBER_FN(cosh(x[0]))).dtypes = kF32;
  e.kernel("asinh", "default", EMBER_FN(asinh(x[0]))).dtypes = kF32;
  e.kernel("acosh", "default", EMBER_FN(acosh(x[0]))).dtypes = kF32;
  e.kernel("atanh", "default", EMBER_FN(atanh(x[0]))).dtypes = kF32;
  e.kernel("log2", "default", EMBER_FN(log2(x[0]))).dtypes = kF32;
  e.forward_only("log2", "edge", EMBER_FN(log2(x[0])));
  e.kernel("log10", "default", EMBER_FN(log10(x[0]))).dtypes = kF32;
  e.kernel("exp2", "default", EMBER_FN(exp2(x[0]))).dtypes = kF32;
  e.kernel("erfc", "default", EMBER_FN(erfc(x[0]))).dtypes = kF32;
  e.kernel("erfinv", "default", EMBER_FN(erfinv(x[0]))).dtypes = kF32;
  // Inputs a hair from +-1: their float32 roundings have other inverses.
  e.forward_only("erfinv", "edge", EMBER_FN(erfinv(x[0]))).float32 = false;
  e.kernel("lgamma", "default", EMBER_FN(lgamma(x[0]))).dtypes = kF32;
  e.kernel("lgamma", "negative", EMBER_FN(lgamma(x[0])));
  // Twice differentiable: trigamma's derivative is polygamma(2, x) from differentiable ops.
  OpInfo& digamma_default = e.kernel("digamma", "default", EMBER_FN(digamma(x[0])));
  digamma_default.dtypes = kF32;
  e.kernel("digamma", "negative", EMBER_FN(digamma(x[0])));
  e.forward_only("digamma", "edge", EMBER_FN(digamma(x[0])));
  e.composite("deg2rad", "default", EMBER_FN(deg2rad(x[0]))).dtypes = kF32;
  e.composite("rad2deg", "default", EMBER_FN(rad2deg(x[0]))).dtypes = kF32;
  e.composite("frac", "default", EMBER_FN(frac(x[0]))).dtypes = kF32;
  // Its own backward (a Taylor series near 0), so the second derivative at 0 is -pi^2/3.
  OpInfo& sinc_default = e.composite("sinc", "default", EMBER_FN(sinc(x[0])));
  sinc_default.dtypes = kF32;
  e.composite("sgn", "default", EMBER_FN(sgn(x[0]))).gradcheck = false;  // a sample at 0, like sign's
  e.forward_only("signbit", "default", EMBER_FN(signbit(x[0])));
  e.forward_only("signbit", "int", EMBER_FN(signbit(x[0])));
  e.composite("logit", "default", EMBER_FN(logit(x[0]))).dtypes = kF32;
  // Samples 0 and 1 sit outside [eps, 1 - eps]: zero gradient, no kink hit.
  e.composite("logit", "eps", EMBER_FN(logit(x[0], 0.05)));
  // NaN and infinities as inputs: PyTorch's gradient there is 0, as ours;
  // finite differences would perturb infinities, so only the analytic check.
  // The default replacements are the dtype's own extremes.
  OpInfo& nan_default = e.composite("nan_to_num", "default", EMBER_FN(nan_to_num(x[0])));
  nan_default.gradcheck = false;
  nan_default.float32 = false;
  e.composite("nan_to_num", "values", EMBER_FN(nan_to_num(x[0], 0.5, 100.0, -100.0))).gradcheck = false;
}

void more_binary(Entries& e) {
  e.kernel("atan2", "broadcast", EMBER_FN(atan2(x[0], x[1]))).dtypes = kF32;
  e.forward_only("atan2", "signed_zeros", EMBER_FN(atan2(x[0], x[1])));
  e.kernel("hypot", "broadcast", EMBER_FN(hypot(x[0], x[1]))).dtypes = kF32;
  e.kernel("copysign", "default", EMBER_FN(copysign(x[0], x[1]))).dtypes = kF32;
  e.forward_only("copysign", "signed_zeros", EMBER_FN(copysign(x[0], x[1])));
  e.kernel("copysign", "scalar", EMBER_FN(copysign(x[0], -1.0)));
  e.forward_only("nextafter", "default", EMBER_FN(nextafter(x[0], x[1])));
  e.kernel("fmod", "default", EMBER_FN(fmod(x[0], x[1]))).dtypes = kF32;
  e.kernel("fmod", "scalar", EMBER_FN(fmod(x[0], 1.5)));
  e.forward_only("fmod", "int", EMBER_FN(fmod(x[0], x[1])));
  e.forward_only("bitwise_left_shift", "default", EMBER_FN(bitwise_left_shift(x[0], x[1])));
  e.forward_only("bitwise_right_shift", "default", EMBER_FN(bitwise_right_shift(x[0], x[1])));
  e.forward_only("bitwise_left_shift", "narrow", EMBER_FN(bitwise_left_shift(x[0], x[1])));
  e.forward_only("bitwise_right_shift", "narrow", EMBER_FN(bitwise_right_shift(x[0], x[1])));
  e.composite("logaddexp", "broadcast", EMBER_FN(logaddexp(x[0], x[1]))).dtypes = kF32;
  e.forward_only("logaddexp", "edge", EMBER_FN(logaddexp(x[0], x[1])), Impl::composite);
  e.composite("logaddexp2", "broadcast", EMBER_FN(logaddexp2(x[0], x[1]))).dtypes = kF32;
  e.composite("xlogy", "default", EMBER_FN(xlogy(x[0], x[1]))).dtypes = kF32;
  e.forward_only("xlogy", "edge", EMBER_FN(xlogy(x[0], x[1])), Impl::composite);
  e.composite("xlogy", "scalar_self", EMBER_FN(xlogy(2.0, x[0])));
  // float_power computes and returns float64 whatever the inputs (the float32 run would check another dtype).
  e.composite("float_power", "default", EMBER_FN(float_power(x[0], x[1]))).float32 = false;
  e.forward_only("float_power", "int", EMBER_FN(float_power(x[0], x[1])), Impl::composite).float32 = false;
  e.composite("float_power", "scalar", EMBER_FN(float_power(x[0], 2.5))).float32 = false;
}

void predicates(Entries& e) {
  e.composite("fmax", "broadcast", EMBER_FN(fmax(x[0], x[1]))).dtypes = kF32;
  e.forward_only("fmax", "nan", EMBER_FN(fmax(x[0], x[1])), Impl::composite);
  e.composite("fmin", "broadcast", EMBER_FN(fmin(x[0], x[1]))).dtypes = kF32;
  e.forward_only("fmin", "nan", EMBER_FN(fmin(x[0], x[1])), Impl::composite);
  e.kernel("maximum", "broadcast", EMBER_FN(maximum(x[0], x[1]))).dtypes = kF32BF16;
  e.forward_only("maximum", "nan", EMBER_FN(maximum(x[0], x[1])));
  e.kernel("minimum", "broadcast", EMBER_FN(minimum(x[0], x[1]))).dtypes = kF32BF16;
  e.forward_only("eq", "broadcast", EMBER_FN(eq(x[0], x[1])));
  e.forward_only("ne", "broadcast", EMBER_FN(ne(x[0], x[1])));
  e.forward_only("lt", "scalar", EMBER_FN(lt(x[0], 2.0)));
  e.forward_only("le", "scalar", EMBER_FN(le(x[0], 2.0)));
  e.forward_only("gt", "broadcast", EMBER_FN(gt(x[0], x[1])));
  e.forward_only("ge", "int_float", EMBER_FN(ge(x[0], x[1])));
  e.forward_only("isnan", "default", EMBER_FN(isnan(x[0])));
  e.forward_only("isfinite", "default", EMBER_FN(isfinite(x[0])), Impl::composite);
  e.forward_only("isinf", "default", EMBER_FN(isinf(x[0])), Impl::composite);
  e.forward_only("isinf", "int", EMBER_FN(isinf(x[0])), Impl::composite);
  e.forward_only("isposinf", "default", EMBER_FN(isposinf(x[0])), Impl::composite);
  e.forward_only("isneginf", "default", EMBER_FN(isneginf(x[0])), Impl::composite);
  e.forward_only("isclose", "default", EMBER_FN(isclose(x[0], x[1])), Impl::composite);
  e.forward_only("isclose", "equal_nan", EMBER_FN(isclose(x[0], x[1], 1e-2, 0.0, true)), Impl::composite);
  e.forward_only("isin", "default", EMBER_FN(isin(x[0], x[1])), Impl::composite);
  e.forward_only("isin", "invert", EMBER_FN(isin(x[0], x[1], false, true)), Impl::composite);
  e.forward_only("allclose", "default", EMBER_FN(scalar_tensor(allclose(x[0], x[1]), kBool)), Impl::composite);
  e.forward_only("allclose", "far", EMBER_FN(scalar_tensor(allclose(x[0], x[1]), kBool)), Impl::composite);
  e.forward_only("equal", "default", EMBER_FN(scalar_tensor(equal(x[0], x[1]), kBool)), Impl::composite);
  e.forward_only("equal", "shape", EMBER_FN(scalar_tensor(equal(x[0], x[1]), kBool)), Impl::composite);
}

void activations(Entries& e) {
  e.kernel("relu", "default", EMBER_FN(relu(x[0]))).dtypes = kF32BF16;
  e.composite("threshold", "default", EMBER_FN(threshold(x[0], 0.5, -2.0))).dtypes = kF32;
  e.composite("relu6", "default", EMBER_FN(relu6(x[0]))).dtypes = kF32;
  e.composite("hardtanh", "default", EMBER_FN(hardtanh(x[0]))).dtypes = kF32;
  e.composite("hardtanh", "range", EMBER_FN(hardtanh(x[0], -2.0, 0.5)));
  e.composite("hardswish", "default", EMBER_FN(hardswish(x[0]))).dtypes = kF32;
  e.composite("hardsigmoid", "default", EMBER_FN(hardsigmoid(x[0]))).dtypes = kF32;
  e.composite("elu", "default", EMBER_FN(elu(x[0]))).dtypes = kF32;
  e.composite("elu", "alpha", EMBER_FN(elu(x[0], 0.5)));
  e.composite("selu", "default", EMBER_FN(selu(x[0]))).dtypes = kF32;
  e.composite("celu", "alpha", EMBER_FN(celu(x[0], 1.5))).dtypes = kF32;
  e.composite("leaky_relu", "default", EMBER_FN(leaky_relu(x[0]))).dtypes = kF32;
  e.composite("leaky_relu", "slope", EMBER_FN(leaky_relu(x[0], 0.2)));
  e.composite("prelu", "channels", EMBER_FN(prelu(x[0], x[1]))).dtypes = kF32;
  e.composite("prelu", "shared", EMBER_FN(prelu(x[0], x[1])));
  e.composite("rrelu", "eval", EMBER_FN(rrelu(x[0], 1.0 / 8, 1.0 / 3, false))).dtypes = kF32;
  e.composite("rrelu", "train_fixed", EMBER_FN(rrelu(x[0], 0.2, 0.2, true)));
  e.composite("glu", "default", EMBER_FN(glu(x[0]))).dtypes = kF32;
  e.composite("glu", "dim0", EMBER_FN(glu(x[0], 0)));
  e.kernel("gelu", "default", EMBER_FN(gelu(x[0]))).dtypes = kF32;
  e.kernel("gelu", "tanh", EMBER_FN(gelu(x[0], "tanh"))).dtypes = kF32;
  e.composite("logsigmoid", "default", EMBER_FN(logsigmoid(x[0]))).dtypes = kF32;
  e.composite("hardshrink", "default", EMBER_FN(hardshrink(x[0]))).dtypes = kF32;
  e.composite("hardshrink", "lambd", EMBER_FN(hardshrink(x[0], 1.5)));
  e.composite("softshrink", "default", EMBER_FN(softshrink(x[0]))).dtypes = kF32;
  e.composite("softshrink", "lambd", EMBER_FN(softshrink(x[0], 1.5)));
  e.composite("tanhshrink", "default", EMBER_FN(tanhshrink(x[0]))).dtypes = kF32;
  e.composite("softsign", "default", EMBER_FN(softsign(x[0]))).dtypes = kF32;
  e.composite("softplus", "default", EMBER_FN(softplus(x[0]))).dtypes = kF32;
  e.composite("softplus", "beta", EMBER_FN(softplus(x[0], 2, 10)));
  e.kernel("silu", "default", EMBER_FN(silu(x[0]))).dtypes = kF32BF16;
  e.composite("mish", "default", EMBER_FN(mish(x[0]))).dtypes = kF32;
  e.composite("softmin", "dim1", EMBER_FN(softmin(x[0], 1))).dtypes = kF32;
  e.composite("softmin", "dim0", EMBER_FN(softmin(x[0], 0)));
  e.kernel("softmax", "lastdim_3d", EMBER_FN(softmax(x[0], -1))).dtypes = kF32;
  e.kernel("log_softmax", "dim1_3d", EMBER_FN(log_softmax(x[0], 1))).dtypes = kF32;
  // dtype=: the input is cast first.
  e.forward_only("softmax", "dtype_from_int64", EMBER_FN(softmax(x[0], 1, kFloat64))).float32 = false;  // dtype= fixes it
  // float32 results: compared at float32's tolerance; finite differences of
  // a float32 output say nothing, so only the gradient is checked (against PyTorch's).
  // (One at a time: the table is a vector, a later entry may move an earlier one.)
  auto float32_result = [](OpInfo& info) {
    info.rtol = 1e-6;
    info.atol = 1e-7;
    info.gradcheck = info.gradgrad = false;
  };
  float32_result(e.kernel("log_softmax", "dtype_float32", EMBER_FN(x[0].log_softmax(-1, kFloat32))));
  float32_result(e.composite("softmin", "dtype_float32", EMBER_FN(softmin(x[0], 0, kFloat32))));
  // Random samples: the checks see their sum over dim (1, gradient 0);
  // the distribution is tested in tests/ops/test_pointwise_ops.cpp.
  e.composite("gumbel_softmax", "sum_hard", EMBER_FN(sum(gumbel_softmax(x[0], 0.5, true), {-1})));
  e.composite("gumbel_softmax", "sum_soft", EMBER_FN(sum(gumbel_softmax(x[0], 2.0), {-1})));
}

#undef EMBER_FN

std::vector<OpInfo> entries() {
  Entries e;
  core_arithmetic(e);
  more_unary(e);
  more_binary(e);
  predicates(e);
  activations(e);
  return std::move(e.ops);
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

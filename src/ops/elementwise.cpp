// Elementwise ops: dtype rules, broadcasting, output allocation; the loops
// are the kernels registered for each Op.
#include "ember/ops/elementwise.h"

#include "ember/core/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/core/trace_hook.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/flat_binary.h"
#include "kernels/kernel_types.h"
#include "ops/autocast_util.h"
#include "ops/elementwise_kernel.h"
#include "ops/grad_utils.h"
#include "ops/op_util.h"
#include "ops/trace_util.h"

namespace ember {
namespace {

Tensor as_dtype(const Tensor& t, ScalarType dt) { return t.dtype() == dt ? t : t.to(dt); }

// out = op(a, b) computed in `compute` dtype, written as `out_dtype`.
Tensor binary(Op op, const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype) {
  // Casts only when needed; the common same-dtype, same-shape call copies no
  // handles or shapes (per-op overhead matters for small tensors).
  Tensor a_cast, b_cast;
  const Tensor* a2 = &a;
  const Tensor* b2 = &b;
  if (a.dtype() != compute) a2 = &(a_cast = a.to(compute));
  if (b.dtype() != compute) b2 = &(b_cast = b.to(compute));
  DimVector broadcast;
  IntArrayRef shape = a.sizes();
  const bool same_shape = a.sizes().equals(b.sizes());
  if (!same_shape) shape = broadcast = broadcast_shapes(a.sizes(), b.sizes(), op_name(op).data());
  Tensor out = empty(shape, TensorOptions(out_dtype).device(a.device()));
  if (same_shape && a2->is_contiguous() && b2->is_contiguous()) {
    if (compute == kFloat32 && out_dtype == kFloat32 && out.numel() <= kFlatLoopMaxNumel &&
        a.device().is_cpu() && b.device().is_cpu()) {
      if (FlatBinaryF32* loop = flat_binary_f32(op)) {  // Note [flat float loops]
        loop(reinterpret_cast<const float*>(a2->impl()->data()), reinterpret_cast<const float*>(b2->impl()->data()),
             reinterpret_cast<float*>(out.impl()->data()), out.numel());
        if (trace_hook()) [[unlikely]] trace_elementwise(op, out, a2, b2);
        return out;
      }
    }
    TensorIter iter(TensorIter::Flat{}, {&out, a2, b2}, 1);
    run_elementwise(op, iter, {}, a.device());
  } else {
    TensorIter iter({&out, a2, b2}, 1, op_name(op).data());
    run_elementwise(op, iter, {}, a.device());
  }
  if (trace_hook()) [[unlikely]] trace_elementwise(op, out, a2, b2);
  return out;
}

// Writes op(a, b) into a (in-place): the result dtype must cast to a's
// dtype and the broadcast shape must equal a's shape.
Tensor out_of_place(Op op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case Op::add: return add(a, b);
    case Op::sub: return sub(a, b);
    case Op::mul: return mul(a, b);
    case Op::div: return div(a, b);
    case Op::pow: return pow(a, b);
    case Op::remainder: return remainder(a, b);
    case Op::floor_divide: return floor_divide(a, b);
    case Op::maximum: return maximum(a, b);
    case Op::minimum: return minimum(a, b);
    default: EMBER_ERROR("{}_: in-place form not supported under autograd", op_name(op));
  }
}

Tensor out_of_place(Op op, const Tensor& a) {
  switch (op) {
    case Op::neg: return neg(a);
    case Op::abs: return abs(a);
    case Op::exp: return exp(a);
    case Op::log: return log(a);
    case Op::sqrt: return sqrt(a);
    case Op::relu: return relu(a);
    case Op::sigmoid: return sigmoid(a);
    case Op::tanh: return tanh(a);
    default: EMBER_ERROR("{}_: in-place form not supported under autograd", op_name(op));
  }
}

Tensor& binary_inplace(Op op, Tensor& a, const Tensor& b, ScalarType compute) {
  const char* name = op_name(op).data();
  if (any_requires_grad({&a, &b})) {
    std::string label = fmt::format("{}_", name);
    // An operand aliasing self (x.mul_(x)) must be read before self changes.
    Tensor b_safe = b.storage().get() == a.storage().get() ? b.clone() : b;
    return inplace_with_grad(a, label.c_str(), [&](const Tensor& old) { return out_of_place(op, old, b_safe); });
  }
  EMBER_CHECK(can_cast(compute, a.dtype()),
              "{}_: result type {} can't be cast to the desired output type {}", name,
              to_string(compute), to_string(a.dtype()));
  DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  EMBER_CHECK(shape == DimVector(a.sizes()),
              "{}_: output with shape [{}] doesn't match the broadcast shape [{}]", name,
              fmt::join(a.sizes(), ", "), fmt::join(shape, ", "));
  Tensor b2 = as_dtype(b, compute);
  if (compute == a.dtype()) {
    TensorIter iter({&a, &a, &b2}, 1, name);
    run_elementwise(op, iter, {}, a.device());
    if (trace_hook()) [[unlikely]] trace_elementwise(op, a, &a, &b2);
  } else {
    Tensor r = binary(op, a, b, compute, compute);
    copy_(a, r);
  }
  a.bump_version();
  return a;
}

Tensor wrap(const Scalar& s, ScalarType dt) { return scalar_tensor(s, dt); }

ScalarType float_result(ScalarType t) { return is_floating_point(t) ? t : kDefaultFloat; }

Tensor unary(Op op, const Tensor& a, ScalarType dt) {
  Tensor a2 = as_dtype(a, dt);
  Tensor out = empty(a.sizes(), TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &a2}, 1, op_name(op).data());
  run_elementwise(op, iter, {}, a.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(op, out, &a2);
  return out;
}
Tensor unary_float(Op op, const Tensor& a) { return unary(op, a, float_result(a.dtype())); }
Tensor unary_same(Op op, const Tensor& a) { return unary(op, a, a.dtype()); }

Tensor& unary_inplace(Op op, Tensor& a) {
  if (any_requires_grad({&a})) {
    std::string label = fmt::format("{}_", op_name(op));
    return inplace_with_grad(a, label.c_str(), [&](const Tensor& old) { return out_of_place(op, old); });
  }
  EMBER_CHECK(op == Op::neg || op == Op::abs || op == Op::relu || is_floating_point(a.dtype()),
              "{}_: result type {} can't be cast to the desired output type {}", op_name(op),
              to_string(kDefaultFloat), to_string(a.dtype()));
  TensorIter iter({&a, &a}, 1, op_name(op).data());
  run_elementwise(op, iter, {}, a.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(op, a, &a);
  a.bump_version();
  return a;
}

void check_not_bool_sub(const Tensor& a, ScalarType other) {
  EMBER_CHECK(!(a.dtype() == kBool && other == kBool),
              "sub: subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.");
}

Tensor compare(Op op, const Tensor& a, const Tensor& b) {
  return binary(op, a, b, result_type(a, b), kBool);
}
Tensor compare(Op op, const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return binary(op, a, wrap(b, dt), dt, kBool);
}

Tensor logical(Op op, const Tensor& a, const Tensor& b) {
  return binary(op, as_dtype(a, kBool), as_dtype(b, kBool), kBool, kBool);
}

Tensor bitwise(Op op, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(is_integral(dt, true), "{}: only integer and bool tensors are supported, got {}",
                   op_name(op), to_string(dt));
  return binary(op, a, b, dt, dt);
}

}  // namespace

// Can a value of type `from` be written into `to` without changing category
// upwards (PyTorch's canCast)?
bool can_cast(ScalarType from, ScalarType to) {
  return type_category(from) <= type_category(to);
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return a.dtype();  // the common case, whatever the dims
  bool za = a.dim() == 0, zb = b.dim() == 0;
  if (za == zb) return promote_types(a.dtype(), b.dtype());
  ScalarType dimmed = za ? b.dtype() : a.dtype();
  ScalarType zero = za ? a.dtype() : b.dtype();
  return type_category(zero) > type_category(dimmed) ? promote_types(dimmed, zero) : dimmed;
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ScalarType s = b.default_dtype();
  return type_category(s) > type_category(a.dtype()) ? s : a.dtype();
}

// ---- arithmetic ----
// Each op: forward, then (when an input requires grad) its derivative, one
// formula per input, written in tensor ops so double backward works.
namespace {
bool is_one(const Scalar& s) { return s.is_integral() && s.to_long() == 1; }

// alpha * b for a + alpha * b. A bool sum is a logical or, and alpha applies
// as bool(alpha), as in PyTorch's kernels: add(a, b, alpha=2) of bools stays bool.
Tensor alpha_times(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (result_type(a, b) == kBool) return alpha.to_bool() ? b : zeros_like(b);
  return mul(b, alpha);
}
}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (!is_one(alpha)) return add(a, alpha_times(a, b, alpha));
  ScalarType dt = result_type(a, b);
  Tensor out = binary(Op::add, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    record("AddBackward0", {&a, &b}, out,
           [ga = GradTarget(a, out), gb = GradTarget(b, out)](const variable_list& g) -> variable_list {
             return {ga(g[0]), gb(g[0])};
           });
  }
  return out;
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  ScalarType dt = result_type(a, b);
  bool integral = !b.is_floating_point() && !alpha.is_floating_point();
  Scalar v = is_one(alpha) ? b
                           : (integral ? Scalar(b.to_long() * alpha.to_long()) : Scalar(b.to_double() * alpha.to_double()));
  Tensor out = binary(Op::add, a, wrap(v, dt), dt, dt);
  if (any_requires_grad({&a}))
    record("AddBackward1", {&a}, out, [ta = a.dtype()](const variable_list& g) -> variable_list {
      return {g[0].dtype() == ta ? g[0] : g[0].to(ta)};
    });
  return out;
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_not_bool_sub(a, b.dtype());
  if (!is_one(alpha)) return sub(a, mul(b, alpha));
  ScalarType dt = result_type(a, b);
  Tensor out = binary(Op::sub, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    record("SubBackward0", {&a, &b}, out,
           [ga = GradTarget(a, out), gb = GradTarget(b, out)](const variable_list& g) -> variable_list {
             return {ga(g[0]), gb(neg(g[0]))};
           });
  }
  return out;
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_not_bool_sub(a, b.default_dtype());
  bool integral = !b.is_floating_point() && !alpha.is_floating_point();
  return add(a, integral ? Scalar(-(b.to_long() * alpha.to_long())) : Scalar(-b.to_double() * alpha.to_double()));
}
Tensor rsub(const Tensor& a, const Scalar& b) {
  check_not_bool_sub(a, b.default_dtype());
  ScalarType dt = result_type(a, b);
  Tensor out = binary(Op::sub, wrap(b, dt), a, dt, dt);
  if (any_requires_grad({&a}))
    record("RsubBackward1", {&a}, out, [](const variable_list& g) -> variable_list { return {neg(g[0])}; });
  return out;
}
Tensor mul(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  Tensor out = binary(Op::mul, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    bool need_a = a.requires_grad(), need_b = b.requires_grad();
    SavedTensor sa = need_b ? save(a) : SavedTensor(), sb = need_a ? save(b) : SavedTensor();
    record("MulBackward0", {&a, &b}, {sa, sb}, out,
           [sa, sb, need_a, need_b, ga = GradTarget(a, out), gb = GradTarget(b, out)](
               const variable_list& g) -> variable_list {
             return {need_a ? ga(g[0] * sb.unpack()) : Tensor(), need_b ? gb(g[0] * sa.unpack()) : Tensor()};
           });
  }
  return out;
}
Tensor mul(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  Tensor out = binary(Op::mul, a, wrap(b, dt), dt, dt);
  if (any_requires_grad({&a}))
    record("MulBackward1", {&a}, out, [b, ta = a.dtype()](const variable_list& g) -> variable_list {
      Tensor r = mul(g[0], b);
      return {r.dtype() == ta ? r : r.to(ta)};
    });
  return out;
}
Tensor div(const Tensor& a, const Tensor& b) {
  ScalarType dt = float_result(result_type(a, b));
  Tensor out = binary(Op::div, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    record("DivBackward0", {&a, &b}, {sa, sb}, out,
           [sa, sb, ga = GradTarget(a, out), gb = GradTarget(b, out)](const variable_list& g) -> variable_list {
             Tensor bv = sb.unpack();
             return {ga(div(g[0], bv)), gb(neg(g[0]) * sa.unpack() / (bv * bv))};
           });
  }
  return out;
}
Tensor div(const Tensor& a, const Scalar& b) {
  ScalarType dt = float_result(result_type(a, b));
  Tensor out = binary(Op::div, a, wrap(b, dt), dt, dt);
  if (any_requires_grad({&a}))
    record("DivBackward1", {&a}, out, [b, ta = a.dtype()](const variable_list& g) -> variable_list {
      Tensor r = div(g[0], b);
      return {r.dtype() == ta ? r : r.to(ta)};
    });
  return out;
}
// Integer-valued: not differentiable (zero gradient, like PyTorch).
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "floor_divide: not supported for bool tensors");
  return binary(Op::floor_divide, a, b, dt, dt);
}
Tensor floor_divide(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return floor_divide(a, wrap(b, dt));
}
Tensor remainder(const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  EMBER_CHECK_TYPE(dt != kBool, "remainder: not supported for bool tensors");
  Tensor out = binary(Op::remainder, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    record("RemainderBackward0", {&a, &b}, {sa, sb}, out,
           [sa, sb, shape_a = DimVector(a.sizes()), shape_b = DimVector(b.sizes()), ta = a.dtype(),
            tb = b.dtype()](const variable_list& g) -> variable_list {
             Tensor q = floor(div(sa.unpack(), sb.unpack()));
             return {grad_for(g[0], shape_a, ta), grad_for(neg(g[0]) * q, shape_b, tb)};
           });
  }
  return out;
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  return remainder(a, wrap(b, dt));
}
Tensor pow(const Tensor& a, const Tensor& e) {
  ScalarType dt = result_type(a, e);
  EMBER_CHECK_TYPE(dt != kBool, "pow: not supported for bool tensors");
  Tensor out = binary(Op::pow, a, e, dt, dt);
  if (any_requires_grad({&a, &e})) {
    SavedTensor sa = save(a), se = save(e), so = save_output(out);
    record("PowBackward1", {&a, &e}, {sa, se, so}, out,
           [sa, se, so, shape_a = DimVector(a.sizes()), shape_e = DimVector(e.sizes()), ta = a.dtype(),
            te = e.dtype()](const variable_list& g) -> variable_list {
             Tensor av = sa.unpack(), ev = se.unpack();
             Tensor ga = g[0] * ev * pow(av, ev - 1);
             // d/de a^e = a^e log a, taken as 0 where a == 0 and e >= 0.
             Tensor ge_ = where(logical_and(eq(av, 0.0), ge(ev, 0.0)), zeros_like(ga),
                                g[0] * so.unpack() * log(av));
             return {grad_for(ga, shape_a, ta), grad_for(ge_, shape_e, te)};
           });
  }
  return out;
}
Tensor pow(const Tensor& a, const Scalar& e) {
  ScalarType dt = result_type(a, e);
  EMBER_CHECK_TYPE(dt != kBool, "pow: not supported for bool tensors");
  EMBER_CHECK(!is_integral(dt, false) || e.to_long() >= 0, "pow: Integers to negative integer powers are not allowed.");
  if (is_floating_point(dt)) {
    double v = e.to_double();
    if (v == 2.0) return mul(as_dtype(a, dt), as_dtype(a, dt));
    if (v == 0.5) return sqrt(as_dtype(a, dt));
  }
  Tensor out = binary(Op::pow, a, wrap(e, dt), dt, dt);
  if (any_requires_grad({&a})) {
    SavedTensor sa = save(a);
    record("PowBackward0", {&a}, {sa}, out, [sa, e](const variable_list& g) -> variable_list {
      double v = e.to_double();
      if (v == 0.0) return {zeros_like(g[0])};
      return {g[0] * v * pow(sa.unpack(), v - 1)};
    });
  }
  return out;
}
Tensor pow(const Scalar& a, const Tensor& e) {
  ScalarType dt = result_type(e, a);
  Tensor out = binary(Op::pow, wrap(a, dt), e, dt, dt);
  if (any_requires_grad({&e})) {
    SavedTensor so = save_output(out);
    record("PowBackward2", {&e}, {so}, out, [so, a](const variable_list& g) -> variable_list {
      return {g[0] * so.unpack() * std::log(a.to_double())};
    });
  }
  return out;
}
namespace {
// maximum/minimum: the gradient goes to the chosen input, split evenly on ties.
Tensor extreme(Op op, const char* name, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  Tensor out = binary(op, a, b, dt, dt);
  if (any_requires_grad({&a, &b})) {
    SavedTensor sa = save(a), sb = save(b);
    bool is_max = op == Op::maximum;
    record(name, {&a, &b}, {sa, sb}, out,
           [sa, sb, is_max, shape_a = DimVector(a.sizes()), shape_b = DimVector(b.sizes()), ta = a.dtype(),
            tb = b.dtype()](const variable_list& g) -> variable_list {
             Tensor av = sa.unpack(), bv = sb.unpack();
             Tensor tie = where(eq(av, bv), g[0] / 2, g[0]);
             Tensor ga = masked_fill(tie, is_max ? lt(av, bv) : gt(av, bv), 0);
             Tensor gb = masked_fill(tie, is_max ? gt(av, bv) : lt(av, bv), 0);
             return {grad_for(ga, shape_a, ta), grad_for(gb, shape_b, tb)};
           });
  }
  return out;
}
}  // namespace
Tensor maximum(const Tensor& a, const Tensor& b) { return extreme(Op::maximum, "MaximumBackward0", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extreme(Op::minimum, "MinimumBackward0", a, b); }

// ---- comparisons and logic ----
Tensor eq(const Tensor& a, const Tensor& b) { return compare(Op::eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(Op::ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(Op::lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(Op::le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(Op::gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(Op::ge, a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return compare(Op::eq, a, b); }
Tensor ne(const Tensor& a, const Scalar& b) { return compare(Op::ne, a, b); }
Tensor lt(const Tensor& a, const Scalar& b) { return compare(Op::lt, a, b); }
Tensor le(const Tensor& a, const Scalar& b) { return compare(Op::le, a, b); }
Tensor gt(const Tensor& a, const Scalar& b) { return compare(Op::gt, a, b); }
Tensor ge(const Tensor& a, const Scalar& b) { return compare(Op::ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return logical(Op::logical_and, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical(Op::logical_or, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical(Op::logical_xor, a, b); }
Tensor logical_not(const Tensor& a) { return unary(Op::logical_not, as_dtype(a, kBool), kBool); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_and, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_or, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bitwise(Op::bitwise_xor, a, b); }
Tensor bitwise_not(const Tensor& a) {
  EMBER_CHECK_TYPE(is_integral(a.dtype(), true),
                   "bitwise_not: only integer and bool tensors are supported, got {}", to_string(a.dtype()));
  return unary_same(Op::bitwise_not, a);
}
Tensor isnan(const Tensor& a) {
  Tensor out = empty(a.sizes(), TensorOptions(kBool).device(a.device()));
  TensorIter iter({&out, &a}, 1, "isnan");
  run_elementwise(Op::isnan, iter, {}, a.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(Op::isnan, out, &a);
  return out;
}
Tensor isfinite(const Tensor& a) {
  if (!is_floating_point(a.dtype())) return ones(a.sizes(), kBool);
  return logical_not(logical_or(isnan(a), eq(abs(a), std::numeric_limits<double>::infinity())));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(), b.sizes().end())) return false;
  std::vector<bool> same = eq(a, b).to_vector<bool>();
  return std::all_of(same.begin(), same.end(), [](bool v) { return v; });
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  Tensor a64 = as_dtype(a, kFloat64), b64 = as_dtype(b, kFloat64);
  Tensor close = le(abs(sub(a64, b64)), add(mul(abs(b64), rtol), atol));
  close = logical_or(close, eq(a64, b64));  // equal infinities
  if (equal_nan) close = logical_or(close, logical_and(isnan(a64), isnan(b64)));
  std::vector<bool> ok = close.to_vector<bool>();
  return std::all_of(ok.begin(), ok.end(), [](bool v) { return v; });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_TYPE(cond.dtype() == kBool, "where: expected condition to be a bool tensor, got {}",
                   to_string(cond.dtype()));
  ScalarType dt = result_type(a, b);
  Tensor a2 = as_dtype(a, dt), b2 = as_dtype(b, dt);
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &cond, &a2, &b2}, 1, "where");
  run_elementwise(Op::where, iter, {}, a.device());
  if (trace_hook()) [[unlikely]] trace_elementwise(Op::where, out, &cond, &a2, &b2);
  if (any_requires_grad({&a, &b})) {
    SavedTensor sc = save(cond);
    record("WhereBackward0", {&a, &b}, {sc}, out,
           [sc, shape_a = DimVector(a.sizes()), shape_b = DimVector(b.sizes()), ta = a.dtype(), tb = b.dtype()](
               const variable_list& g) -> variable_list {
             Tensor c = sc.unpack();
             Tensor zero = zeros({}, g[0].dtype());
             return {grad_for(where(c, g[0], zero), shape_a, ta), grad_for(where(c, zero, g[0]), shape_b, tb)};
           });
  }
  return out;
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where(cond, a, wrap(b, result_type(a, b)));
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where(cond, wrap(a, result_type(b, a)), b);
}

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  ScalarType dt = a.dtype();
  if (min) dt = promote_types(dt, result_type(a, *min));
  if (max) dt = promote_types(dt, result_type(a, *max));
  EMBER_CHECK_TYPE(dt != kBool, "clamp: not supported for bool tensors");
  Tensor a2 = as_dtype(a, dt);
  Tensor out = empty(a.sizes(), TensorOptions(dt).device(a.device()));
  TensorIter iter({&out, &a2}, 1, "clamp");
  run_elementwise(Op::clamp, iter, {min, max}, a.device());
  if (TraceHook* th = trace_hook()) [[unlikely]] {
    TraceAttrs attrs;
    if (min) attrs.push_back({"a", *min});
    if (max) attrs.push_back({"b", *max});
    th->record(Op::clamp, {&a2}, {&out}, std::move(attrs));
  }
  if (any_requires_grad({&a})) {
    SavedTensor sa = save(a);
    record("ClampBackward1", {&a}, {sa}, out, [sa, min, max](const variable_list& g) -> variable_list {
      Tensor x = sa.unpack();
      Tensor inside = ones(x.sizes(), kBool);
      if (min) inside = logical_and(inside, ge(x, *min));
      if (max) inside = logical_and(inside, le(x, *max));
      return {where(inside, g[0], zeros({}, g[0].dtype()))};
    });
  }
  return out;
}
Tensor clamp_min(const Tensor& a, const Scalar& min) { return clamp(a, min, std::nullopt); }
Tensor clamp_max(const Tensor& a, const Scalar& max) { return clamp(a, std::nullopt, max); }

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK_TYPE(mask.dtype() == kBool,
                   "masked_fill: expected a bool mask, got mask with dtype {}", to_string(mask.dtype()));
  DimVector shape = broadcast_shapes(a.sizes(), mask.sizes(), "masked_fill");
  EMBER_CHECK(shape == DimVector(a.sizes()),
              "masked_fill: mask of shape [{}] must broadcast to the input shape [{}]",
              fmt::join(mask.sizes(), ", "), fmt::join(a.sizes(), ", "));
  return where(mask, wrap(value, a.dtype()), a);  // where's formula gives the gradient
}

Tensor lerp(const Tensor& a, const Tensor& end, const Scalar& weight) {
  return add(a, mul(sub(end, a), weight));
}
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight) {
  EMBER_CHECK_TYPE(weight.dtype() == a.dtype(), "lerp: expected dtype {} for `weight` but got dtype {}",
                   to_string(a.dtype()), to_string(weight.dtype()));
  return add(a, mul(sub(end, a), weight));
}
// On integer tensors value is cast to their dtype first, as in PyTorch
// (addcmul(int64, ..., value=2.7) scales by 2).
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  Tensor product = mul(t1, t2);
  return add(a, mul(product, scalar_in(value, result_type(a, product))));
}
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return add(a, mul(div(t1, t2), value));
}

// ---- unary ----
namespace {

// A unary op whose derivative is f(grad, input, result).
template <typename F>
Tensor unary_with_grad(const char* node, const Tensor& a, Tensor out, F formula) {
  if (any_requires_grad({&a})) {
    SavedTensor sa = save(a), so = save_output(out);
    record(node, {&a}, {sa, so}, out, [sa, so, formula](const variable_list& g) -> variable_list {
      return {formula(g[0], sa, so)};
    });
  }
  return out;
}

// Rounding-type ops: piecewise constant, zero gradient.
Tensor zero_grad_unary(const char* node, const Tensor& a, Tensor out) {
  if (any_requires_grad({&a}))
    record(node, {&a}, out, [](const variable_list& g) -> variable_list { return {zeros_like(g[0])}; });
  return out;
}

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double k2InvSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi)

}  // namespace

#define EMBER_G const Tensor &g, const SavedTensor &x, const SavedTensor &y
Tensor neg(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool,
                   "neg: negation, the `-` operator, on a bool tensor is not supported. If you are "
                   "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary_with_grad("NegBackward0", a, unary_same(Op::neg, a), [](EMBER_G) { (void)x; (void)y; return neg(g); });
}
Tensor abs(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool, "abs: not supported for bool tensors");
  return unary_with_grad("AbsBackward0", a, unary_same(Op::abs, a), [](EMBER_G) { (void)y; return g * sign(x.unpack()); });
}
Tensor exp(const Tensor& a) {
  return unary_with_grad("ExpBackward0", a, unary_float(Op::exp, a), [](EMBER_G) { (void)x; return g * y.unpack(); });
}
Tensor expm1(const Tensor& a) {
  return unary_with_grad("Expm1Backward0", a, unary_float(Op::expm1, a),
                         [](EMBER_G) { (void)x; return g * (y.unpack() + 1); });
}
Tensor log(const Tensor& a) {
  return unary_with_grad("LogBackward0", a, unary_float(Op::log, a), [](EMBER_G) { (void)y; return g / x.unpack(); });
}
Tensor log1p(const Tensor& a) {
  return unary_with_grad("Log1PBackward0", a, unary_float(Op::log1p, a),
                         [](EMBER_G) { (void)y; return g / (x.unpack() + 1); });
}
Tensor sqrt(const Tensor& a) {
  return unary_with_grad("SqrtBackward0", a, unary_float(Op::sqrt, a),
                         [](EMBER_G) { (void)x; return g / (2 * y.unpack()); });
}
Tensor rsqrt(const Tensor& a) {
  return unary_with_grad("RsqrtBackward0", a, unary_float(Op::rsqrt, a), [](EMBER_G) {
    (void)x;
    Tensor r = y.unpack();
    return g * (r * r * r) * -0.5;
  });
}
Tensor sin(const Tensor& a) {
  return unary_with_grad("SinBackward0", a, unary_float(Op::sin, a), [](EMBER_G) { (void)y; return g * cos(x.unpack()); });
}
Tensor cos(const Tensor& a) {
  return unary_with_grad("CosBackward0", a, unary_float(Op::cos, a),
                         [](EMBER_G) { (void)y; return neg(g) * sin(x.unpack()); });
}
Tensor tanh(const Tensor& a) {
  return unary_with_grad("TanhBackward0", a, unary_float(Op::tanh, a), [](EMBER_G) {
    (void)x;
    Tensor r = y.unpack();
    return g * (1 - r * r);
  });
}
Tensor sigmoid(const Tensor& a) {
  return unary_with_grad("SigmoidBackward0", a, unary_float(Op::sigmoid, a), [](EMBER_G) {
    (void)x;
    Tensor r = y.unpack();
    return g * r * (1 - r);
  });
}
namespace {
// grad where self > threshold, else 0; differentiable in grad (self only
// selects).
Tensor threshold_backward(const Tensor& grad, const Tensor& self, double threshold) {
  Tensor g = grad.dtype() == self.dtype() ? grad : grad.to(self.dtype());
  DimVector shape = broadcast_shapes(g.sizes(), self.sizes(), "threshold_backward");
  Tensor out = empty(shape, TensorOptions(self.dtype()).device(self.device()));
  TensorIter iter({&out, &g, &self}, 1, "threshold_backward");
  run_elementwise(Op::threshold_backward, iter, {Scalar(threshold), std::nullopt}, self.device());
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::threshold_backward, {&g, &self}, {&out}, {{"a", Scalar(threshold)}});
  if (any_requires_grad({&grad})) {
    SavedTensor ss = save(self);
    record("ThresholdBackwardBackward0", {&grad}, {ss}, out,
           [ss, threshold](const variable_list& gg) -> variable_list {
             return {threshold_backward(gg[0], ss.unpack(), threshold)};
           });
  }
  return out;
}
}  // namespace

Tensor bf16_rounded(const Tensor& t) {
  Tensor out = unary_same(Op::round_bf16, t);
  if (any_requires_grad({&t}))
    record("ToCopyBackward0", {&t}, out, [](const variable_list& g) -> variable_list { return {bf16_rounded(g[0])}; });
  return out;
}

Tensor relu(const Tensor& a) {
  EMBER_CHECK_TYPE(a.dtype() != kBool, "relu: not supported for bool tensors");
  return unary_with_grad("ReluBackward0", a, unary_same(Op::relu, a),
                         [](EMBER_G) { (void)x; return threshold_backward(g, y.unpack(), 0.0); });
}
namespace {
// GELU's derivative times g in one pass over float32 (the composites below
// take eight ops, each a pass over the activations); undefined where the
// composite must run: other dtypes, broadcasting, tracing, and double
// backward (create_graph records the composite's graph).
Tensor gelu_backward_f32(const Tensor& g, const Tensor& x, bool tanh_approx) {
  if (GradMode::is_enabled() || trace_hook() || g.dtype() != kFloat32 || x.dtype() != kFloat32 ||
      !g.sizes().equals(x.sizes()))
    return Tensor();
  const Tensor gc = g.contiguous(), xc = x.contiguous();
  Tensor out = empty(x.sizes(), kFloat32);
  const float *pg = gc.data_ptr<float>(), *px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  parallel_for(0, x.numel(), 2048, [&](int64_t b, int64_t e) {
    vec::gelu_backward_f32(pg + b, px + b, po + b, e - b, tanh_approx);
  });
  return out;
}
}  // namespace

Tensor gelu(const Tensor& a, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
  EMBER_CHECK_TYPE(is_floating_point(a.dtype()), "gelu: expected a floating-point tensor, got {}",
                   to_string(a.dtype()));
  if (approximate == "none") {
    return unary_with_grad("GeluBackward0", a, unary_same(Op::gelu, a), [](EMBER_G) {
      (void)y;
      Tensor v = x.unpack();
      if (Tensor fused = gelu_backward_f32(g, v, false); fused.defined()) return fused;
      Tensor cdf = (erf(v * kSqrt1_2) + 1) * 0.5;
      Tensor pdf = exp(v * v * -0.5) * kInvSqrt2Pi;
      return g * (cdf + v * pdf);
    });
  }
  return unary_with_grad("GeluBackward0", a, unary_same(Op::gelu_tanh, a), [](EMBER_G) {
    (void)y;
    constexpr double k = 0.7978845608028654, c = 0.044715;
    Tensor v = x.unpack();
    if (Tensor fused = gelu_backward_f32(g, v, true); fused.defined()) return fused;
    Tensor inner = (v + v * v * v * c) * k;
    Tensor t = tanh(inner);
    Tensor dinner = (v * v * (3 * c) + 1) * k;
    return g * ((t + 1) * 0.5 + v * 0.5 * (1 - t * t) * dinner);
  });
}
Tensor silu(const Tensor& a) {
  EMBER_CHECK_TYPE(is_floating_point(a.dtype()), "silu: expected a floating-point tensor, got {}",
                   to_string(a.dtype()));
  return unary_with_grad("SiluBackward0", a, unary_same(Op::silu, a), [](EMBER_G) {
    (void)y;
    Tensor v = x.unpack();
    Tensor s = sigmoid(v);
    return g * s * (v * (1 - s) + 1);
  });
}
Tensor erf(const Tensor& a) {
  return unary_with_grad("ErfBackward0", a, unary_float(Op::erf, a), [](EMBER_G) {
    (void)y;
    Tensor v = x.unpack();
    return g * exp(neg(v * v)) * k2InvSqrtPi;
  });
}
Tensor reciprocal(const Tensor& a) {
  return unary_with_grad("ReciprocalBackward0", a, unary_float(Op::reciprocal, a), [](EMBER_G) {
    (void)x;
    Tensor r = y.unpack();
    return neg(g) * r * r;
  });
}
#undef EMBER_G

Tensor sign(const Tensor& a) {
  if (a.dtype() == kBool) return a.clone();
  return zero_grad_unary("SignBackward0", a, unary_same(Op::sign, a));
}
// Rounding an integer is the identity (PyTorch returns a copy).
Tensor floor(const Tensor& a) {
  return is_floating_point(a.dtype()) ? zero_grad_unary("FloorBackward0", a, unary_same(Op::floor, a)) : a.clone();
}
Tensor ceil(const Tensor& a) {
  return is_floating_point(a.dtype()) ? zero_grad_unary("CeilBackward0", a, unary_same(Op::ceil, a)) : a.clone();
}
Tensor round(const Tensor& a) {
  return is_floating_point(a.dtype()) ? zero_grad_unary("RoundBackward0", a, unary_same(Op::round, a)) : a.clone();
}
Tensor trunc(const Tensor& a) {
  return is_floating_point(a.dtype()) ? zero_grad_unary("TruncBackward0", a, unary_same(Op::trunc, a)) : a.clone();
}
// PyTorch's square is pow(a, 2): bools square to int64.
Tensor square(const Tensor& a) {
  if (a.dtype() == kBool) return square(a.to(kInt64));
  return mul(a, a);
}

// ---- in-place ----
Tensor& add_(Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (!is_one(alpha)) return add_(a, alpha_times(a, b, alpha));
  return binary_inplace(Op::add, a, b, result_type(a, b));
}
Tensor& mul_(Tensor& a, const Tensor& b) { return binary_inplace(Op::mul, a, b, result_type(a, b)); }

namespace detail {
Tensor& binary_inplace_op(Op op, Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  if (op == Op::div) dt = float_result(dt);
  if (op == Op::sub) check_not_bool_sub(a, b.dtype());
  return binary_inplace(op, a, b, dt);
}
Tensor& binary_inplace_op(Op op, Tensor& a, const Scalar& b) {
  ScalarType dt = result_type(a, b);
  if (op == Op::div) dt = float_result(dt);
  return binary_inplace(op, a, wrap(b, dt), dt);
}
Tensor& unary_inplace_op(Op op, Tensor& a) { return unary_inplace(op, a); }
Tensor unary_kernel_op(Op op, const Tensor& a, ScalarType dt) { return unary(op, a, dt); }
Tensor binary_kernel_op(Op op, const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype) {
  return binary(op, a, b, compute, out_dtype);
}
}  // namespace detail

}  // namespace ember

// Reductions: dim lists, keepdim, dtype rules and empty-input rules following
// torch; the loops are the Reduce-family kernels (Note [ReduceIter]).
#include "ember/ops/reduction.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <limits>

#include "ember/core/grad_graph.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "kernels/reduce.h"
#include "ops/grad_utils.h"
#include "ember/core/trace_hook.h"

namespace ember {
namespace {

using DimMask = std::bitset<64>;

// The reduced dims as a mask; empty `dims` means all. Raises on duplicates.
DimMask dim_mask(const Tensor& t, IntArrayRef dims, const char* op) {
  DimMask m;
  const int64_t nd = t.dim();
  if (dims.empty()) {
    for (int64_t d = 0; d < nd; ++d) m.set(d);
    return m;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd, op);
    EMBER_CHECK(!m.test(w), "{}: dim {} appears multiple times in the list of dims [{}]", op, w,
                fmt::join(dims, ", "));
    m.set(w);
  }
  return m;
}

DimVector reduced_shape(const Tensor& t, DimMask m, bool keepdim) {
  DimVector out;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!m.test(d)) out.push_back(t.size(d));
    else if (keepdim) out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Tensor& t, DimMask m) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (m.test(d)) n *= t.size(d);
  return n;
}

// The tensor to read and its [outer, reduce, inner] geometry.
struct Geometry {
  Tensor src;
  int64_t outer = 1, reduce = 1, inner = 1;
};

// When t is dense in some dim order (contiguous, transposed, permuted) and
// its dims in memory order form [kept..., reduced..., kept...] with the kept
// dims in logical order, the kernel reads t in place.
bool dense_geometry(const Tensor& t, DimMask m, Geometry& g) {
  struct Dim { int64_t size, stride, dim; };
  std::vector<Dim> ds;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) ds.push_back({t.size(d), t.stride(d), d});
  std::stable_sort(ds.begin(), ds.end(), [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  int64_t expected = 1;
  for (auto it = ds.rbegin(); it != ds.rend(); ++it) {
    if (it->stride != expected) return false;
    expected *= it->size;
  }
  int64_t group[3] = {1, 1, 1};  // leading kept, reduced, trailing kept
  int phase = 0;
  int64_t last_kept = -1;
  for (const Dim& d : ds) {
    if (m.test(d.dim)) {
      if (phase == 2) return false;
      phase = 1;
      group[1] *= d.size;
    } else {
      if (d.dim < last_kept) return false;  // output order would differ
      last_kept = d.dim;
      if (phase == 1) phase = 2;
      group[phase == 0 ? 0 : 2] *= d.size;
    }
  }
  g = {t, group[0], group[1], group[2]};
  return true;
}

Geometry plan(const Tensor& t, DimMask m) {
  Geometry g{t, 1, reduced_count(t, m), 1};
  for (int64_t d = 0; d < t.dim(); ++d)
    if (!m.test(d)) g.outer *= t.size(d);
  // Empty input: either there is no output, or every fold is empty and the
  // kernel reads nothing.
  if (t.numel() == 0) return g;
  if (dense_geometry(t, m, g)) return g;
  DimVector perm;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (!m.test(d)) perm.push_back(d);
  for (int64_t d = 0; d < t.dim(); ++d)
    if (m.test(d)) perm.push_back(d);
  g.src = t.permute(perm).contiguous();
  return g;
}

struct Outputs {
  Tensor values, second;
};

// Out of line: keeps the attribute list out of the reductions' hot path.
[[gnu::cold, gnu::noinline]] void trace_reduce(Op op, const Tensor& src, const Outputs& out, const ReduceIter& it,
                                               const ReduceParams& p) {
  trace_hook()->record(op, {&src}, {&out.values, &out.second},
                       {{"outer", it.outer}, {"reduce", it.reduce}, {"inner", it.inner}, {"scale", p.scale},
                        {"p", p.p}, {"correction", p.correction}, {"take_sqrt", p.take_sqrt},
                        {"out_dtype", it.out_dtype}});
}

// Allocates the outputs, runs the kernel, applies keepdim.
// second_dtype: the dtype of a second output (indices, mean), if any.
Outputs run(Op op, const Tensor& t, DimMask m, bool keepdim, ScalarType out_dtype,
            const ReduceParams& p = {}, std::optional<ScalarType> second_dtype = std::nullopt,
            bool want_values = true) {
  NoGradGuard no_grad;  // the op records its own derivative; its internals record nothing
  Geometry g = plan(t, m);
  DimVector shape = reduced_shape(t, m, false);
  TensorOptions opts = TensorOptions(out_dtype).device(t.device());
  Outputs out;
  if (want_values) out.values = empty(shape, opts);
  if (second_dtype) out.second = empty(shape, TensorOptions(*second_dtype).device(t.device()));
  ReduceIter it;
  it.op = op_name(op).data();
  it.in = g.src.data_ptr();
  it.in_dtype = g.src.dtype();
  it.out = want_values ? out.values.data_ptr() : nullptr;
  it.out_dtype = out_dtype;
  it.out2 = second_dtype ? out.second.data_ptr() : nullptr;
  it.outer = g.outer;
  it.reduce = g.reduce;
  it.inner = g.inner;
  run_reduce(op, it, p, t.device());
  if (trace_hook()) [[unlikely]] trace_reduce(op, g.src, out, it, p);
  if (keepdim) {
    DimVector kshape = reduced_shape(t, m, true);
    if (want_values) out.values = out.values.view(kshape);
    if (second_dtype) out.second = out.second.view(kshape);
  }
  return out;
}

Tensor as_dtype(const Tensor& t, ScalarType dt) { return t.dtype() == dt ? t : t.to(dt); }

// Integer and bool inputs accumulate in int64 (torch's sum/prod/cumsum rule).
ScalarType integral_to_long(const Tensor& t, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(t.dtype(), true) ? kInt64 : t.dtype();
}

// PyTorch's C++ name for a dtype ("Long"), used where torch's message has it.
const char* torch_type_name(ScalarType t) {
  switch (t) {
    case kBool: return "Bool";
    case kUInt8: return "Byte";
    case kInt8: return "Char";
    case kInt16: return "Short";
    case kInt32: return "Int";
    case kInt64: return "Long";
    case kFloat16: return "Half";
    case kBFloat16: return "BFloat16";
    case kFloat32: return "Float";
    default: return "Double";
  }
}

void check_floating(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK(is_floating_point(t.dtype()), "{}: {} only support floating point dtypes, got {}; convert with .to(kFloat32)",
              op, what, to_string(t.dtype()));
}

// torch raises for max/min-like reductions that would have no identity.
void check_nonempty_dims(const Tensor& t, DimMask m, IntArrayRef dims, const char* op) {
  if (t.numel() != 0) return;
  EMBER_CHECK_INDEX(!dims.empty(),
                    "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                    "reduction dim with the 'dim' argument.",
                    op);
  for (int64_t d = 0; d < t.dim(); ++d)
    EMBER_CHECK_INDEX(!(m.test(d) && t.size(d) == 0),
                      "{}(): Expected reduction dim {} to have non-zero size (input shape [{}])", op, d,
                      fmt::join(t.sizes(), ", "));
}

Tensor extreme(Op op, const Tensor& t, IntArrayRef dims, bool keepdim, bool nan_aware = false);

// (values, indices) of max/min along one dim, or indices only (argmax/argmin).
Outputs arg_reduce(Op op, const char* name, const Tensor& t, int64_t dim, bool keepdim, bool values) {
  int64_t d = wrap_dim(dim, t.dim(), name);
  DimMask m;
  m.set(d);
  int64_t dims[1] = {d};
  check_nonempty_dims(t, m, IntArrayRef(dims, 1), name);
  return run(op, t, m, keepdim, t.dtype(), {}, kInt64, values);
}

// ---- derivative helpers ----

DimVector mask_dims(const Tensor& t, DimMask m) {
  DimVector d;
  for (int64_t i = 0; i < t.dim(); ++i)
    if (m.test(i)) d.push_back(i);
  return d;
}

// A reduced tensor (or its gradient) broadcast back over the input's shape.
Tensor unreduce(const Tensor& r, IntArrayRef in_sizes, IntArrayRef dims, bool keepdim) {
  Tensor x = r;
  if (!keepdim)
    for (int64_t d : dims) x = x.unsqueeze(d);
  return x.expand(in_sizes);
}

// Everything a reduction's formula needs to know about its input and dims.
struct ReduceCtx {
  DimVector in_sizes, dims;
  bool keepdim;
  ScalarType in_dtype;
  Tensor up(const Tensor& r) const { return unreduce(r, in_sizes, dims, keepdim); }
  Tensor cast(const Tensor& g) const { return g.dtype() == in_dtype ? g : g.to(in_dtype); }
};

ReduceCtx reduce_ctx(const Tensor& t, DimMask m, bool keepdim) {
  return {DimVector(t.sizes()), mask_dims(t, m), keepdim, t.dtype()};
}

// Gradient spread evenly over the elements equal to the reduced value
// (amax/amin/max/min over all, norm inf): PyTorch's evenly_distribute rule.
// nan_aware (max()/min() over all, like PyTorch's): a NaN result counts the
// NaN elements as equal to it; amax/amin and norm leave 0/0 = NaN there.
Tensor evenly_distribute(const ReduceCtx& c, const Tensor& g, const Tensor& x, const Tensor& value,
                         bool nan_aware = false) {
  Tensor up = c.up(value);
  Tensor hit = eq(x, up);
  if (nan_aware) hit = logical_or(hit, logical_and(isnan(x), isnan(up)));
  hit = hit.to(g.dtype());
  Tensor count = sum(hit, c.dims, true);
  return c.up(g) * hit / count.expand(c.in_sizes);
}

}  // namespace

Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = integral_to_long(t, dtype);
  EMBER_CHECK_TYPE(dt != kBool, "sum: dtype bool is not supported for the result (expected a numeric dtype)");
  DimMask m = dim_mask(t, dims, "sum");
  Tensor out = run(Op::sum, as_dtype(t, dt), m, keepdim, dt).values;
  if (any_requires_grad({&t}))
    record("SumBackward1", {&t}, out, [c = reduce_ctx(t, m, keepdim)](const variable_list& g) -> variable_list {
      return {c.cast(c.up(g[0]))};
    });
  return out;
}

Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK(is_floating_point(t.dtype()),
              "mean(): could not infer output dtype. Input dtype must be either a floating point or "
              "complex dtype. Got: {}",
              torch_type_name(t.dtype()));
  DimMask m = dim_mask(t, dims, "mean");
  int64_t n = reduced_count(t, m);
  ReduceParams p;
  p.scale = n == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(n);
  Tensor out = run(Op::sum, t, m, keepdim, t.dtype(), p).values;
  if (any_requires_grad({&t}))
    record("MeanBackward1", {&t}, out, [c = reduce_ctx(t, m, keepdim), n](const variable_list& g) -> variable_list {
      return {c.up(g[0]) / static_cast<double>(n)};
    });
  return out;
}

Tensor prod(const Tensor& t, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = integral_to_long(t, dtype);
  EMBER_CHECK_TYPE(dt != kBool, "prod: dtype bool is not supported for the result (expected a numeric dtype)");
  DimMask m = dim_mask(t, dims, "prod");
  Tensor out = run(Op::prod, as_dtype(t, dt), m, keepdim, dt).values;
  if (any_requires_grad({&t})) {
    SavedTensor sx = save(t), so = save_output(out);
    record("ProdBackward1", {&t}, {sx, so}, out, [c = reduce_ctx(t, m, keepdim), sx, so](const variable_list& g) -> variable_list {
      // d prod / d x_i is the product of the others: out / x_i without zeros;
      // with one zero in a slice only that element gets a nonzero value, the
      // others' product; with two or more every gradient in the slice is
      // zero (a constant, as in PyTorch).
      Tensor x = sx.unpack();
      Tensor is_zero = eq(x, 0.0);
      Tensor zeros_in_slice = sum(is_zero.to(kInt64), c.dims, true).expand(c.in_sizes);
      // A safe divisor keeps NaN (0/0) out of the unused branch and its gradient.
      Tensor safe_x = where(is_zero, ones({}, x.dtype()), x);
      Tensor others = prod(safe_x, c.dims, true).expand(c.in_sizes);
      Tensor no_zero = c.up(g[0]) * c.up(so.unpack()) / safe_x;
      // With one zero x_z, element j != z gets x_z * others / x_j: 0 in value,
      // but its derivative with respect to x_z is the product of the rest,
      // which the second derivative needs. x_z is summed out of the slice
      // (its value, 0, with a gradient path to it).
      Tensor x_zero = sum(where(is_zero, x, zeros({}, x.dtype())), c.dims, true).expand(c.in_sizes);
      Tensor one_zero = c.up(g[0]) * others * where(is_zero, ones({}, x.dtype()), x_zero / safe_x);
      Tensor zero = zeros({}, x.dtype());
      return {c.cast(where(eq(zeros_in_slice, 0), no_zero,
                           where(eq(zeros_in_slice, 1), one_zero, zero)))};
    });
  }
  return out;
}

namespace {
Tensor extreme(Op op, const Tensor& t, IntArrayRef dims, bool keepdim, bool nan_aware) {
  const char* name = op_name(op).data();
  DimMask m = dim_mask(t, dims, name);
  check_nonempty_dims(t, m, dims, name);
  Tensor out = run(op, t, m, keepdim, t.dtype()).values;
  if (any_requires_grad({&t})) {
    SavedTensor sx = save(t), so = save_output(out);
    record(op == Op::amax ? "AmaxBackward0" : "AminBackward0", {&t}, {sx, so}, out,
           [c = reduce_ctx(t, m, keepdim), sx, so, nan_aware](const variable_list& g) -> variable_list {
             return {evenly_distribute(c, g[0], sx.unpack(), so.unpack(), nan_aware)};
           });
  }
  return out;
}
}  // namespace

Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim) { return extreme(Op::amax, t, dims, keepdim); }
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim) { return extreme(Op::amin, t, dims, keepdim); }

namespace {
// max/min along a dim: the gradient goes to the element at the index.
void record_index_grad(const char* name, const Tensor& t, int64_t dim, bool keepdim, const Outputs& o) {
  if (!any_requires_grad({&t})) return;
  int64_t d = wrap_dim(dim, t.dim(), name);
  record(name, {&t}, o.values,
         [in = DimVector(t.sizes()), d, keepdim, idx = o.second](const variable_list& g) -> variable_list {
           if (in.empty()) return {g[0].reshape(in)};
           Tensor gk = keepdim ? g[0] : g[0].unsqueeze(d);
           Tensor ik = keepdim ? idx : idx.unsqueeze(d);
           return {scatter(zeros(in, g[0].dtype()), d, ik, gk)};
         });
}
}  // namespace

std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  Outputs o = arg_reduce(Op::argmax, "max", t, dim, keepdim, true);
  record_index_grad("MaxBackward0", t, dim, keepdim, o);
  return {o.values, o.second};
}
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  Outputs o = arg_reduce(Op::argmin, "min", t, dim, keepdim, true);
  record_index_grad("MinBackward0", t, dim, keepdim, o);
  return {o.values, o.second};
}

Tensor max(const Tensor& t) {
  check_nonempty_dims(t, {}, {}, "max");
  return extreme(Op::amax, t, {}, false, /*nan_aware=*/true);
}
Tensor min(const Tensor& t) {
  check_nonempty_dims(t, {}, {}, "min");
  return extreme(Op::amin, t, {}, false, /*nan_aware=*/true);
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (dim) return arg_reduce(Op::argmax, "argmax", t, *dim, keepdim, false).second;
  check_nonempty_dims(t, {}, {}, "argmax");
  Tensor r = arg_reduce(Op::argmax, "argmax", t.reshape({-1}), 0, false, false).second;
  return keepdim ? r.view(DimVector(static_cast<size_t>(t.dim()), 1)) : r;
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (dim) return arg_reduce(Op::argmin, "argmin", t, *dim, keepdim, false).second;
  check_nonempty_dims(t, {}, {}, "argmin");
  Tensor r = arg_reduce(Op::argmin, "argmin", t.reshape({-1}), 0, false, false).second;
  return keepdim ? r.view(DimVector(static_cast<size_t>(t.dim()), 1)) : r;
}

std::pair<Tensor, Tensor> var_mean(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  check_floating(t, "var_mean", "std and var");
  if (any_requires_grad({&t})) return {var(t, dims, correction, keepdim), mean(t, dims, keepdim)};
  ReduceParams p;
  p.correction = correction;
  Outputs o = run(Op::var, t, dim_mask(t, dims, "var_mean"), keepdim, t.dtype(), p, t.dtype());
  return {o.values, o.second};
}

namespace {
// var (take_sqrt = false) or std: d var / dx = 2 (x - mean) / (N - correction).
Tensor var_or_std(const Tensor& t, IntArrayRef dims, double correction, bool keepdim, bool take_sqrt) {
  const char* name = take_sqrt ? "std" : "var";
  check_floating(t, name, "std and var");
  ReduceParams p;
  p.correction = correction;
  p.take_sqrt = take_sqrt;
  DimMask m = dim_mask(t, dims, name);
  Tensor out = run(Op::var, t, m, keepdim, t.dtype(), p).values;
  if (any_requires_grad({&t})) {
    SavedTensor sx = save(t), so = save_output(out);
    double denom = static_cast<double>(reduced_count(t, m)) - correction;
    record(take_sqrt ? "StdBackward0" : "VarBackward0", {&t}, {sx, so}, out,
           [c = reduce_ctx(t, m, keepdim), sx, so, denom, take_sqrt](const variable_list& g) -> variable_list {
             Tensor x = sx.unpack();
             Tensor centered = x - mean(x, c.dims, true);
             Tensor dvar = centered * (2.0 / denom);
             if (!take_sqrt) return {c.up(g[0]) * dvar};
             return {c.up(g[0]) * dvar / (c.up(so.unpack()) * 2)};
           });
  }
  return out;
}
}  // namespace

Tensor var(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  return var_or_std(t, dims, correction, keepdim, false);
}

Tensor std(const Tensor& t, IntArrayRef dims, double correction, bool keepdim) {
  return var_or_std(t, dims, correction, keepdim, true);
}

Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim) {
  // Integers are promoted to the default float, as in torch.
  Tensor x = is_floating_point(t.dtype()) ? t : t.to(kDefaultFloat);
  DimMask m = dim_mask(t, dims, "logsumexp");
  Tensor out = run(Op::logsumexp, x, m, keepdim, x.dtype()).values;
  if (any_requires_grad({&x})) {
    SavedTensor sx = save(x), so = save_output(out);
    record("LogsumexpBackward0", {&x}, {sx, so}, out, [c = reduce_ctx(x, m, keepdim), sx, so](const variable_list& g) -> variable_list {
      return {c.up(g[0]) * exp(sx.unpack() - c.up(so.unpack()))};
    });
  }
  return out;
}

Tensor norm(const Tensor& t, double p, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK(is_floating_point(t.dtype()),
              "norm(): input dtype should be either floating point or complex. Got {} instead.",
              torch_type_name(t.dtype()));
  ReduceParams params;
  params.p = p;
  DimMask m = dim_mask(t, dims, "norm");
  Tensor out = run(Op::norm, t, m, keepdim, t.dtype(), params).values;
  if (any_requires_grad({&t})) {
    SavedTensor sx = save(t), so = save_output(out);
    record("NormBackward1", {&t}, {sx, so}, out, [c = reduce_ctx(t, m, keepdim), sx, so, p](const variable_list& g) -> variable_list {
      Tensor x = sx.unpack(), n = c.up(so.unpack()), gu = c.up(g[0]);
      if (p == 0) return {zeros_like(x)};
      if (p == 1) return {gu * sign(x)};
      if (std::isinf(p)) return {evenly_distribute(c, g[0], abs(x), so.unpack()) * sign(x)};
      Tensor zero = zeros({}, x.dtype());
      // x |x|^(p-2) / n^(p-1), defined as 0 where the norm is 0.
      Tensor scaled = p == 2 ? x / n : x * pow(abs(x), p - 2) / pow(n, p - 1);
      return {where(eq(n, 0.0), zero, gu * scaled)};
    });
  }
  return out;
}

Tensor all(const Tensor& t, IntArrayRef dims, bool keepdim) {
  return run(Op::all, as_dtype(t, kBool), dim_mask(t, dims, "all"), keepdim, kBool).values;
}
Tensor any(const Tensor& t, IntArrayRef dims, bool keepdim) {
  return run(Op::any, as_dtype(t, kBool), dim_mask(t, dims, "any"), keepdim, kBool).values;
}

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  int64_t d = wrap_dim(dim, t.dim(), "cumsum");
  ScalarType dt = integral_to_long(t, dtype);
  EMBER_CHECK_TYPE(dt != kBool, "cumsum: dtype bool is not supported for the result (expected a numeric dtype)");
  Tensor x = as_dtype(t, dt).contiguous();
  Tensor out = empty(t.sizes(), TensorOptions(dt).device(t.device()));
  ReduceIter it;
  it.op = "cumsum";
  it.in = x.data_ptr();
  it.in_dtype = dt;
  it.out = out.data_ptr();
  it.out_dtype = dt;
  for (int64_t i = 0; i < t.dim(); ++i) (i < d ? it.outer : i == d ? it.reduce : it.inner) *= t.size(i);
  get_kernel<ScanKernel>(Op::cumsum, t.device())(it);
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::cumsum, {&x}, {&out}, {{"outer", it.outer}, {"reduce", it.reduce}, {"inner", it.inner}});
  if (any_requires_grad({&t}))
    record("CumsumBackward0", {&t}, out, [d, in_dtype = t.dtype()](const variable_list& g) -> variable_list {
      // Each input feeds every later output: a reversed cumulative sum.
      if (g[0].dim() == 0) return {g[0]};
      Tensor r = flip(cumsum(flip(g[0], {d}), d), {d});
      return {r.dtype() == in_dtype ? r : r.to(in_dtype)};
    });
  return out;
}

namespace {
// Moves `dim` last, runs the row kernel, moves it back (Note [ReduceIter]).
Tensor softmax_impl(const Tensor& t, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  int64_t d = wrap_dim(dim, t.dim(), name);
  EMBER_CHECK_TYPE(is_floating_point(t.dtype()),
                   "{}: expected a floating-point input, got {}; convert with .to(kFloat32)", name,
                   to_string(t.dtype()));
  const int64_t last = std::max<int64_t>(t.dim() - 1, 0);
  const bool needs_grad = any_requires_grad({&t});
  NoGradGuard no_grad;
  Tensor x = (d == last ? t : t.transpose(d, last)).contiguous();
  Tensor out = empty(x.sizes(), TensorOptions(t.dtype()).device(t.device()));
  ReduceIter it;
  it.op = name;
  it.in = x.data_ptr();
  it.in_dtype = x.dtype();
  it.out = out.data_ptr();
  it.out_dtype = x.dtype();
  it.reduce = t.dim() == 0 ? 1 : x.size(last);
  it.outer = it.reduce == 0 ? 0 : x.numel() / it.reduce;
  get_kernel<SoftmaxKernel>(Op::softmax, t.device())(it, log);
  if (TraceHook* th = trace_hook()) [[unlikely]]
    th->record(Op::softmax, {&x}, {&out}, {{"outer", it.outer}, {"reduce", it.reduce}, {"log", log}});
  Tensor result = d == last ? out : out.transpose(d, last).contiguous();
  if (needs_grad) {
    EnableGradGuard grad_on;  // undo the NoGradGuard above for the record
    SavedTensor so = save_output(result);
    record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {&t}, {so}, result,
           [so, d, log](const variable_list& g) -> variable_list {
             Tensor y = so.unpack();
             if (log) return {g[0] - exp(y) * sum(g[0], {d}, true)};
             return {y * (g[0] - sum(g[0] * y, {d}, true))};
           });
  }
  return result;
}
}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(dtype ? t.to(*dtype) : t, dim, false);
}
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(dtype ? t.to(*dtype) : t, dim, true);
}

// ---- Tensor methods ----
Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, {}, false, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean() const { return ember::mean(*this); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return ember::mean(*this, dims, keepdim); }
Tensor Tensor::prod() const { return ember::prod(*this); }
Tensor Tensor::prod(int64_t dim, bool keepdim) const { return ember::prod(*this, {dim}, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
std::pair<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
Tensor Tensor::min() const { return ember::min(*this); }
std::pair<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return ember::min(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }
Tensor Tensor::var(std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) const {
  return ember::var(*this, dims ? IntArrayRef(*dims) : IntArrayRef(), correction, keepdim);
}
Tensor Tensor::std(std::optional<std::vector<int64_t>> dims, double correction, bool keepdim) const {
  return ember::std(*this, dims ? IntArrayRef(*dims) : IntArrayRef(), correction, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return ember::logsumexp(*this, dims, keepdim); }
Tensor Tensor::norm(double p) const { return ember::norm(*this, p); }
Tensor Tensor::norm(double p, IntArrayRef dims, bool keepdim) const { return ember::norm(*this, p, dims, keepdim); }
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::cumsum(int64_t dim) const { return ember::cumsum(*this, dim); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const { return ember::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

}  // namespace ember

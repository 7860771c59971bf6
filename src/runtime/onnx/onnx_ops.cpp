// The ONNX operators, each in terms of Ember's public tensor ops; every
// attribute and shape from the file is checked before it reaches an op.
#include "runtime/onnx/onnx_ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember::runtime::onnx_import {

// ---- OpCtx ----

const Tensor& OpCtx::input(size_t i) const {
  if (!has(i)) fail(fmt::format("input {} is missing", i));
  return in[i];
}

const onnx::AttributeProto* OpCtx::attr(const std::string& name) const {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t OpCtx::i(const std::string& name, int64_t def) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::INT) fail(fmt::format("attribute {} must be an int", name));
  return a->i();
}

float OpCtx::f(const std::string& name, float def) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::FLOAT) fail(fmt::format("attribute {} must be a float", name));
  return a->f();
}

std::string OpCtx::s(const std::string& name, const std::string& def) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::STRING) fail(fmt::format("attribute {} must be a string", name));
  return a->s();
}

std::vector<int64_t> OpCtx::ints(const std::string& name, std::vector<int64_t> def) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::INTS) fail(fmt::format("attribute {} must be a list of ints", name));
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> OpCtx::floats(const std::string& name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return {};
  if (a->type() != onnx::AttributeProto::FLOATS) fail(fmt::format("attribute {} must be a list of floats", name));
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> OpCtx::strings(const std::string& name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return {};
  if (a->type() != onnx::AttributeProto::STRINGS) fail(fmt::format("attribute {} must be a list of strings", name));
  return {a->strings().begin(), a->strings().end()};
}

void OpCtx::fail(const std::string& what) const { EMBER_ERROR("{}", what); }

std::vector<int64_t> OpCtx::ints_of(const Tensor& t, const char* what) const {
  if (t.dtype() != kInt64 && t.dtype() != kInt32) fail(fmt::format("{} must be int64 or int32, got {}", what, to_string(t.dtype())));
  if (t.dim() > 1) fail(fmt::format("{} must be 0-D or 1-D", what));
  if (t.numel() > 4096) fail(fmt::format("{} has {} elements (at most 4096)", what, t.numel()));
  return t.to(kInt64).contiguous().to_vector<int64_t>();
}

void OpCtx::check_numel(const std::vector<int64_t>& shape, const char* what) const {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) fail(fmt::format("{} [{}] has a negative size", what, fmt::join(shape, ", ")));
    if (s != 0 && n > limits.max_elements / s)
      fail(fmt::format("{} [{}] has more than {} elements (the limit for this file)", what, fmt::join(shape, ", "),
                       limits.max_elements));
    n *= s;
  }
}

int64_t OpCtx::axis(int64_t a, int64_t rank, const char* what) const {
  if (a < -rank || a >= rank) fail(fmt::format("{} {} is out of range for rank {}", what, a, rank));
  return a < 0 ? a + rank : a;
}

namespace {

using Ts = std::vector<Tensor>;
std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }

// ---- elementwise ----

template <Tensor (*F)(const Tensor&)>
Ts unary(OpCtx& c) { return {F(c.input(0))}; }

template <Tensor (*F)(const Tensor&, const Tensor&)>
Ts binary(OpCtx& c) { return {F(c.input(0), c.input(1))}; }

Tensor add2(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor sub2(const Tensor& a, const Tensor& b) { return sub(a, b); }

// ONNX Div truncates for integers.
Ts op_div(OpCtx& c) {
  const Tensor &a = c.input(0), &b = c.input(1);
  if (is_floating_point(a.dtype())) return {div(a, b)};
  if (any(eq(b, Scalar(0))).item<bool>()) c.fail("integer division by zero");
  Tensor q = floor_divide(a, b);
  Tensor inexact = logical_and(ne(sub(a, mul(q, b)), Scalar(0)), ne(lt(a, Scalar(0)), lt(b, Scalar(0))));
  return {where(inexact, add(q, Scalar(1)), q)};
}

Ts op_pow(OpCtx& c) {
  Tensor e = c.input(1);
  if (e.dtype() != c.input(0).dtype()) e = e.to(c.input(0).dtype());
  return {pow(c.input(0), e)};
}

Ts op_identity(OpCtx& c) { return {c.input(0)}; }

Ts op_not(OpCtx& c) { return {logical_not(c.input(0))}; }

// torch.gather: indices of the data's rank, negative ones counting from the
// end of the axis; ember::gather checks the shapes and the range.
Ts op_gather_elements(OpCtx& c) {
  const Tensor& x = c.input(0);
  Tensor idx = c.input(1);
  if (idx.dtype() != kInt64 && idx.dtype() != kInt32) c.fail("GatherElements' indices must be int64 or int32");
  if (idx.dim() != x.dim() || x.dim() == 0)
    c.fail(fmt::format("GatherElements' indices must have the data's rank {} (at least 1), got rank {}", x.dim(),
                       idx.dim()));
  const int64_t axis = c.axis(c.i("axis", 0), x.dim(), "axis");
  idx = idx.to(kInt64);
  return {gather(x, axis, where(lt(idx, Scalar(0)), add(idx, Scalar(x.size(axis))), idx))};
}

// ScatterElements(data, indices, updates) with reduction none or add:
// torch.scatter / scatter_add, negative indices counting from the end.
Ts op_scatter_elements(OpCtx& c) {
  const Tensor &x = c.input(0), &updates = c.input(2);
  Tensor idx = c.input(1);
  if (idx.dtype() != kInt64 && idx.dtype() != kInt32) c.fail("ScatterElements' indices must be int64 or int32");
  if (x.dim() == 0 || idx.dim() != x.dim() || !idx.sizes().equals(updates.sizes()))
    c.fail(fmt::format("ScatterElements needs indices and updates of one shape and the data's rank, got data {}, "
                       "indices {}, updates {}",
                       fmt::join(x.sizes(), "x"), fmt::join(idx.sizes(), "x"), fmt::join(updates.sizes(), "x")));
  const std::string reduction = c.s("reduction", "none");
  if (reduction != "none" && reduction != "add")
    c.fail(fmt::format("ScatterElements' reduction '{}' is not supported (none, add)", reduction));
  const int64_t axis = c.axis(c.i("axis", 0), x.dim(), "axis");
  idx = idx.to(kInt64);
  idx = where(lt(idx, Scalar(0)), add(idx, Scalar(x.size(axis))), idx);
  return {reduction == "add" ? scatter_add(x, axis, idx, updates) : scatter(x, axis, idx, updates)};
}

// TopK(x, K): the k largest (or smallest) along axis, sorted.
Ts op_topk(OpCtx& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> ks = c.ints_of(c.input(1), "TopK's K");
  if (ks.size() != 1) c.fail("TopK's K must hold one value");
  if (x.dim() == 0) c.fail("TopK needs an input of rank 1 or more");
  const int64_t axis = c.axis(c.i("axis", -1), x.dim(), "axis");
  if (ks[0] < 0 || ks[0] > x.size(axis))
    c.fail(fmt::format("TopK's K = {} is out of range for axis {} of size {}", ks[0], axis, x.size(axis)));
  auto [values, indices] = topk(x, ks[0], axis, c.i("largest", 1) != 0);
  return {values, indices};
}

// fmod=1 is C's fmod; fmod=0 (integers only in the spec) Python's %.
Ts op_mod(OpCtx& c) {
  const Tensor &a = c.input(0), &b = c.input(1);
  const int64_t mode = c.i("fmod", 0);
  if (mode != 0 && mode != 1) c.fail(fmt::format("Mod's fmod must be 0 or 1, got {}", mode));
  if (a.dtype() != b.dtype()) c.fail(fmt::format("Mod's inputs differ in dtype: {} and {}", to_string(a.dtype()),
                                                 to_string(b.dtype())));
  if (!is_floating_point(a.dtype()) && any(eq(b, Scalar(0))).item<bool>()) c.fail("integer modulo by zero");
  return {mode == 1 ? fmod(a, b) : remainder(a, b)};
}

// CumSum(x, axis) with its exclusive and reverse attributes.
Ts op_cumsum(OpCtx& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> axes = c.ints_of(c.input(1), "CumSum's axis");
  if (axes.size() != 1) c.fail("CumSum's axis must hold one value");
  if (x.dim() == 0) c.fail("CumSum needs an input of rank 1 or more");
  const int64_t axis = c.axis(axes[0], x.dim(), "axis");
  const bool reverse = c.i("reverse", 0) != 0, exclusive = c.i("exclusive", 0) != 0;
  Tensor v = reverse ? flip(x, {axis}) : x;
  Tensor y = cumsum(v, axis);
  if (exclusive) y = sub(y, v);
  return {reverse ? flip(y, {axis}) : y};
}

Ts variadic(OpCtx& c, Tensor (*f)(const Tensor&, const Tensor&)) {
  Tensor r = c.input(0);
  for (size_t k = 1; k < c.in.size(); ++k) r = f(r, c.input(k));
  return {r};
}
Ts op_max(OpCtx& c) { return variadic(c, maximum); }
Ts op_min(OpCtx& c) { return variadic(c, minimum); }
Ts op_sum(OpCtx& c) { return variadic(c, add2); }

Ts op_where(OpCtx& c) {
  if (c.input(0).dtype() != kBool) c.fail("Where's condition must be bool");
  return {where(c.input(0), c.input(1), c.input(2))};
}

Ts op_clip(OpCtx& c) {
  std::optional<Scalar> lo, hi;
  if (c.opset < 11) {
    if (c.attr("min")) lo = Scalar(static_cast<double>(c.f("min", 0)));
    if (c.attr("max")) hi = Scalar(static_cast<double>(c.f("max", 0)));
  } else {
    for (size_t k : {size_t{1}, size_t{2}})
      if (c.has(k)) {
        if (c.in[k].numel() != 1) c.fail("Clip's min and max must be scalars");
        const Scalar v(c.in[k].to(kFloat64).reshape({1}).to_vector<double>()[0]);
        (k == 1 ? lo : hi) = v;
      }
  }
  return {clamp(c.input(0), lo, hi)};
}

Ts op_leaky_relu(OpCtx& c) { return {leaky_relu(c.input(0), c.f("alpha", 0.01f))}; }
Ts op_elu(OpCtx& c) { return {elu(c.input(0), c.f("alpha", 1.0f))}; }
Ts op_softplus(OpCtx& c) { return {softplus(c.input(0))}; }
Ts op_gelu(OpCtx& c) { return {gelu(c.input(0), c.s("approximate", "none"))}; }

Ts op_cast(OpCtx& c) {
  const ScalarType to = dtype_from_onnx(static_cast<int>(c.i("to", 0)), "Cast's 'to'");
  return {c.input(0).to(to)};
}

// ---- constants and shapes ----

Ts op_constant(OpCtx& c) {
  if (const onnx::AttributeProto* a = c.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) c.fail("Constant's value must be a tensor");
    return {tensor_from_proto(a->t(), "Constant's value", c.limits)};
  }
  if (const onnx::AttributeProto* a = c.attr("value_float")) return {scalar_tensor(Scalar(static_cast<double>(a->f())), TensorOptions(kFloat32))};
  if (const onnx::AttributeProto* a = c.attr("value_int")) return {scalar_tensor(Scalar(a->i()), TensorOptions(kInt64))};
  if (c.attr("value_floats")) {
    std::vector<float> v = c.floats("value_floats");
    return {tensor(v, {static_cast<int64_t>(v.size())})};
  }
  if (c.attr("value_ints")) {
    std::vector<int64_t> v = c.ints("value_ints");
    return {tensor(v, {static_cast<int64_t>(v.size())})};
  }
  c.fail("Constant without a supported value attribute");
}

Ts op_constant_of_shape(OpCtx& c) {
  const std::vector<int64_t> shape = c.ints_of(c.input(0), "the shape");
  c.check_numel(shape, "ConstantOfShape's output");
  Tensor v = zeros({1}, TensorOptions(kFloat32));
  if (const onnx::AttributeProto* a = c.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) c.fail("ConstantOfShape's value must be a tensor");
    v = tensor_from_proto(a->t(), "ConstantOfShape's value", c.limits);
    if (v.numel() != 1) c.fail("ConstantOfShape's value must hold one element");
  }
  return {v.reshape({}).expand(shape).contiguous()};
}

Ts op_shape(OpCtx& c) {
  const std::vector<int64_t> s = shape_of(c.input(0));
  const int64_t r = static_cast<int64_t>(s.size());
  int64_t start = c.i("start", 0), end = c.i("end", r);
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
  std::vector<int64_t> part(s.begin() + start, s.begin() + std::max(start, end));
  return {tensor(part, {static_cast<int64_t>(part.size())})};
}

Ts op_size(OpCtx& c) { return {scalar_tensor(Scalar(c.input(0).numel()), TensorOptions(kInt64))}; }

Ts op_reshape(OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> shape = c.ints_of(c.input(1), "the shape");
  const bool allowzero = c.i("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= static_cast<size_t>(x.dim())) c.fail(fmt::format("shape dim {} copies a dim the input lacks", d));
      shape[d] = x.size(static_cast<int64_t>(d));
    }
    if (shape[d] == -1) {
      if (infer >= 0) c.fail("the shape has more than one -1");
      infer = static_cast<int>(d);
    } else if (shape[d] < 0) {
      c.fail(fmt::format("the shape has a negative size {}", shape[d]));
    } else if (shape[d] != 0 && known > std::numeric_limits<int64_t>::max() / shape[d]) {
      c.fail("the shape overflows");
    } else {
      known *= shape[d];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      c.fail(fmt::format("cannot reshape {} elements to [{}]", x.numel(), fmt::join(shape, ", ")));
    shape[static_cast<size_t>(infer)] = x.numel() / known;
  } else if (known != x.numel()) {
    c.fail(fmt::format("cannot reshape [{}] to [{}]", fmt::join(x.sizes().vec(), ", "), fmt::join(shape, ", ")));
  }
  return {x.reshape(shape)};
}

Ts op_flatten(OpCtx& c) {
  const Tensor& x = c.input(0);
  const int64_t axis = c.axis(c.i("axis", 1), x.dim() + 1, "axis");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  return {x.reshape({outer, outer == 0 ? 0 : x.numel() / outer})};
}

Ts op_transpose(OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> perm = c.ints("perm");
  if (perm.empty())
    for (int64_t d = x.dim(); d-- > 0;) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != x.dim()) c.fail("perm does not match the input's rank");
  return {x.permute(perm)};
}

std::vector<int64_t> axes_of(OpCtx& c, size_t input_index) {
  if (c.opset >= 13) return c.has(input_index) ? c.ints_of(c.in[input_index], "axes") : std::vector<int64_t>{};
  return c.ints("axes");
}

Ts op_unsqueeze(OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_of(c, 1);
  const int64_t rank = x.dim() + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = c.axis(a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("repeated axes");
  std::vector<int64_t> shape;
  int64_t src = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(std::binary_search(axes.begin(), axes.end(), d) ? 1 : x.size(src++));
  return {x.reshape(shape)};
}

Ts op_squeeze(OpCtx& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_of(c, 1);
  for (int64_t& a : axes) a = c.axis(a, x.dim(), "axis");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (listed && x.size(d) != 1) c.fail(fmt::format("cannot squeeze dim {} of size {}", d, x.size(d)));
    if (!(listed || (axes.empty() && x.size(d) == 1))) shape.push_back(x.size(d));
  }
  return {x.reshape(shape)};
}

Ts op_concat(OpCtx& c) {
  std::vector<Tensor> parts;
  for (size_t k = 0; k < c.in.size(); ++k) parts.push_back(c.input(k));
  if (parts.empty()) c.fail("Concat needs inputs");
  const int64_t axis = c.axis(c.i("axis", 0), parts[0].dim(), "axis");
  return {cat(parts, axis)};
}

Ts op_split(OpCtx& c) {
  const Tensor& x = c.input(0);
  const int64_t axis = c.axis(c.i("axis", 0), x.dim(), "axis");
  std::vector<int64_t> split = c.opset >= 13 ? (c.has(1) ? c.ints_of(c.in[1], "split") : std::vector<int64_t>{})
                                             : c.ints("split");
  const int64_t n = static_cast<int64_t>(c.outputs());
  if (split.empty()) {
    if (n == 0 || x.size(axis) % n != 0) c.fail(fmt::format("cannot split {} evenly into {}", x.size(axis), n));
    split.assign(static_cast<size_t>(n), x.size(axis) / n);
  }
  if (static_cast<int64_t>(split.size()) != n) c.fail("split sizes do not match the outputs");
  Ts out;
  int64_t at = 0;
  for (int64_t s : split) {
    if (s < 0 || at + s > x.size(axis)) c.fail("split sizes exceed the dim");
    out.push_back(x.narrow(axis, at, s));
    at += s;
  }
  if (at != x.size(axis)) c.fail("split sizes do not add up to the dim");
  return out;
}

Ts op_slice(OpCtx& c) {
  Tensor x = c.input(0);
  const std::vector<int64_t> starts = c.ints_of(c.input(1), "starts"), ends = c.ints_of(c.input(2), "ends");
  std::vector<int64_t> axes = c.has(3) ? c.ints_of(c.in[3], "axes") : std::vector<int64_t>{};
  std::vector<int64_t> steps = c.has(4) ? c.ints_of(c.in[4], "steps") : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = c.axis(axes[k], x.dim(), "axis"), n = x.size(a);
    if (steps[k] <= 0) c.fail("Slice steps must be positive");
    auto clampi = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t s = clampi(starts[k]), e = std::max(s, clampi(ends[k]));
    x = x.slice(a, s, e, steps[k]);
  }
  return {x};
}

Ts op_gather(OpCtx& c) {
  const Tensor& x = c.input(0);
  Tensor idx = c.input(1);
  if (idx.dtype() != kInt64 && idx.dtype() != kInt32) c.fail("Gather's indices must be int64 or int32");
  idx = idx.to(kInt64);
  const int64_t axis = c.axis(c.i("axis", 0), x.dim(), "axis"), n = x.size(axis);
  idx = where(lt(idx, Scalar(0)), add(idx, Scalar(n)), idx);
  if (idx.numel() > 0 && (any(lt(idx, Scalar(0))).item<bool>() || any(ge(idx, Scalar(n))).item<bool>()))
    c.fail(fmt::format("an index is out of range for dim {} of size {}", axis, n));
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < axis; ++d) shape.push_back(x.size(d));
  for (int64_t s : idx.sizes()) shape.push_back(s);
  for (int64_t d = axis + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  return {index_select(x, axis, idx.reshape({idx.numel()})).reshape(shape)};
}

// Output shape of a bidirectional broadcast (Expand).
std::vector<int64_t> broadcast_shape(OpCtx& c, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
  if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
      c.fail(fmt::format("shapes [{}] and [{}] do not broadcast", fmt::join(a, ", "), fmt::join(b, ", ")));
    a[d] = a[d] == 1 ? b[d] : a[d];
  }
  return a;
}

Ts op_expand(OpCtx& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> out = broadcast_shape(c, shape_of(x), c.ints_of(c.input(1), "the shape"));
  c.check_numel(out, "Expand's output");
  std::vector<int64_t> padded = shape_of(x);
  padded.insert(padded.begin(), out.size() - padded.size(), 1);
  return {x.reshape(padded).expand(out)};
}

Ts op_tile(OpCtx& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> reps = c.ints_of(c.input(1), "repeats");
  if (static_cast<int64_t>(reps.size()) != x.dim()) c.fail("repeats must have one entry per dim");
  std::vector<int64_t> out;
  for (size_t d = 0; d < reps.size(); ++d) {
    if (reps[d] < 0) c.fail("negative repeats");
    if (reps[d] != 0 && x.size(static_cast<int64_t>(d)) > c.limits.max_elements / reps[d]) c.fail("Tile's output is too large");
    out.push_back(x.size(static_cast<int64_t>(d)) * reps[d]);
  }
  c.check_numel(out, "Tile's output");
  return {repeat(x, reps)};
}

Ts op_range(OpCtx& c) {
  auto scalar = [&](size_t k) {
    if (c.input(k).numel() != 1) c.fail("Range takes scalars");
    return c.input(k).to(kFloat64).reshape({1}).to_vector<double>()[0];
  };
  const double start = scalar(0), limit = scalar(1), delta = scalar(2);
  if (delta == 0) c.fail("Range's delta is zero");
  const double n = std::max(0.0, std::ceil((limit - start) / delta));
  if (!(n <= static_cast<double>(c.limits.max_elements))) c.fail("Range's output is too large");
  const ScalarType dt = c.input(0).dtype();
  std::vector<double> v;
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) v.push_back(start + static_cast<double>(k) * delta);
  return {tensor(v, {static_cast<int64_t>(v.size())}).to(dt)};
}

// Pad, constant mode (what torch.onnx.export writes for pooling with padding).
Ts op_pad(OpCtx& c) {
  const Tensor& x = c.input(0);
  const std::string mode = c.s("mode", "constant");
  if (mode != "constant") c.fail(fmt::format("Pad mode {} is not supported", mode));
  const std::vector<int64_t> pads = c.opset >= 11 ? c.ints_of(c.input(1), "pads") : c.ints("pads");
  std::vector<int64_t> axes;
  if (c.has(3)) axes = c.ints_of(c.in[3], "axes");
  else
    for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  const size_t n = axes.size();
  if (pads.size() != 2 * n) c.fail("pads must hold a begin and an end per axis");
  std::vector<int64_t> begin(static_cast<size_t>(x.dim()), 0), end(static_cast<size_t>(x.dim()), 0);
  for (size_t k = 0; k < n; ++k) {
    const int64_t a = c.axis(axes[k], x.dim(), "axis");
    if (pads[k] < 0 || pads[k + n] < 0) c.fail("negative pads are not supported");
    begin[static_cast<size_t>(a)] = pads[k], end[static_cast<size_t>(a)] = pads[k + n];
  }
  std::vector<int64_t> out = x.sizes().vec(), torch_pad;
  for (size_t d = 0; d < out.size(); ++d) {
    if (begin[d] > c.limits.max_elements || end[d] > c.limits.max_elements) c.fail("pads are too large");
    out[d] += begin[d] + end[d];
  }
  c.check_numel(out, "Pad's output");
  for (int64_t d = x.dim(); d-- > 0;) torch_pad.push_back(begin[static_cast<size_t>(d)]), torch_pad.push_back(end[static_cast<size_t>(d)]);
  double value = 0;
  if (c.has(2)) {
    if (c.in[2].numel() != 1) c.fail("Pad's constant_value must be a scalar");
    value = c.in[2].to(kFloat64).reshape({1}).to_vector<double>()[0];
  }
  return {pad(x, torch_pad, "constant", value)};
}

// ---- linear algebra, convolution, pooling, normalisation ----

Ts op_matmul(OpCtx& c) {
  if (c.input(0).dim() < 1 || c.input(1).dim() < 1) c.fail("MatMul needs inputs of rank 1 or more");
  return {matmul(c.input(0), c.input(1))};
}

Ts op_gemm(OpCtx& c) {
  Tensor a = c.input(0), b = c.input(1);
  if (a.dim() != 2 || b.dim() != 2) c.fail("Gemm needs 2-D A and B");
  if (c.i("transA", 0)) a = a.transpose(0, 1);
  if (c.i("transB", 0)) b = b.transpose(0, 1);
  Tensor y = matmul(a, b);
  const float alpha = c.f("alpha", 1), beta = c.f("beta", 1);
  if (alpha != 1) y = mul(y, Scalar(static_cast<double>(alpha)));
  if (c.has(2) && beta != 0) y = add(y, beta == 1 ? c.in[2] : mul(c.in[2], Scalar(static_cast<double>(beta))));
  return {y};
}

// pads [x1_begin, x2_begin, x1_end, x2_end] -> symmetric (h, w) or a failure.
std::vector<int64_t> symmetric_pads(OpCtx& c, size_t spatial) {
  std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = c.s("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") c.fail(fmt::format("auto_pad {} is not supported", auto_pad));
  if (p.size() != 2 * spatial) c.fail("pads has the wrong length");
  std::vector<int64_t> out;
  for (size_t d = 0; d < spatial; ++d) {
    if (p[d] != p[d + spatial] || p[d] < 0) c.fail(fmt::format("asymmetric or negative pads [{}]", fmt::join(p, ", ")));
    out.push_back(p[d]);
  }
  return out;
}

std::vector<int64_t> pair_attr(OpCtx& c, const std::string& name, size_t spatial) {
  std::vector<int64_t> v = c.ints(name, std::vector<int64_t>(spatial, 1));
  if (v.size() != spatial) c.fail(fmt::format("{} needs {} values", name, spatial));
  for (int64_t x : v)
    if (x <= 0) c.fail(fmt::format("{} must be positive", name));
  return v;
}

Ts op_conv(OpCtx& c) {
  Tensor x = c.input(0), w = c.input(1);
  if (x.dim() != 3 && x.dim() != 4) c.fail("Conv supports 1-D and 2-D convolutions");
  const bool one_d = x.dim() == 3;
  if (w.dim() != x.dim()) c.fail("Conv's weight rank differs from the input's");
  if (one_d) x = x.unsqueeze(2), w = w.unsqueeze(2);
  const size_t sp = one_d ? 1 : 2;
  std::vector<int64_t> pads = symmetric_pads(c, sp), s = pair_attr(c, "strides", sp), d = pair_attr(c, "dilations", sp);
  if (one_d) pads.insert(pads.begin(), 0), s.insert(s.begin(), 1), d.insert(d.begin(), 1);
  std::optional<Tensor> b;
  if (c.has(2)) b = c.in[2];
  Tensor y = conv2d(x, w, b, s, pads, d, c.i("group", 1));
  return {one_d ? y.squeeze(2) : y};
}

bool ceil_attr(OpCtx& c) { return c.i("ceil_mode", 0) != 0; }

Ts op_max_pool(OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.dim() != 4) c.fail("MaxPool supports 2-D pooling");
  if (c.wants(1)) c.fail("MaxPool's Indices output is not supported");
  std::vector<int64_t> k = c.ints("kernel_shape");
  if (k.size() != 2) c.fail("kernel_shape needs 2 values");
  return {max_pool2d(x, k, pair_attr(c, "strides", 2), symmetric_pads(c, 2), pair_attr(c, "dilations", 2), ceil_attr(c))};
}

Ts op_avg_pool(OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.dim() != 4) c.fail("AveragePool supports 2-D pooling");
  std::vector<int64_t> k = c.ints("kernel_shape");
  if (k.size() != 2) c.fail("kernel_shape needs 2 values");
  return {avg_pool2d(x, k, pair_attr(c, "strides", 2), symmetric_pads(c, 2), ceil_attr(c), c.i("count_include_pad", 0) != 0)};
}

std::vector<int64_t> spatial_dims(OpCtx& c, const Tensor& x) {
  if (x.dim() < 3) c.fail("global pooling needs an input of rank 3 or more");
  std::vector<int64_t> d;
  for (int64_t k = 2; k < x.dim(); ++k) d.push_back(k);
  return d;
}
Ts op_global_avg_pool(OpCtx& c) { return {mean(c.input(0), spatial_dims(c, c.input(0)), true)}; }
Ts op_global_max_pool(OpCtx& c) { return {amax(c.input(0), spatial_dims(c, c.input(0)), true)}; }

Ts op_batch_norm(OpCtx& c) {
  if (c.wants(1) || c.wants(2) || c.i("training_mode", 0)) c.fail("BatchNormalization in training mode is not supported");
  const Tensor& x = c.input(0);
  if (x.dim() < 2) c.fail("BatchNormalization needs an input of rank 2 or more");
  for (size_t k = 1; k < 5; ++k)
    if (c.input(k).dim() != 1 || c.input(k).size(0) != x.size(1))
      c.fail(fmt::format("input {} must be [{}] (the channels)", k, x.size(1)));
  return {batch_norm(x, c.input(3), c.input(4), c.input(1), c.input(2), false, 0.0, c.f("epsilon", 1e-5f))};
}

Ts op_layer_norm(OpCtx& c) {
  if (c.wants(1) || c.wants(2)) c.fail("LayerNormalization's Mean and InvStdDev outputs are not supported");
  const Tensor& x = c.input(0);
  const int64_t axis = c.axis(c.i("axis", -1), x.dim(), "axis");
  std::vector<int64_t> normalized(x.sizes().begin() + axis, x.sizes().end());
  Tensor w = c.input(1), b = c.has(2) ? c.in[2] : Tensor();
  auto fit = [&](const Tensor& t) {
    if (!t.defined()) return t;
    if (t.numel() != [&] { int64_t n = 1; for (int64_t s : normalized) n *= s; return n; }())
      c.fail("LayerNormalization's scale/bias do not match the normalised dims");
    return t.reshape(normalized);
  };
  return {layer_norm(x, normalized, fit(w), fit(b), c.f("epsilon", 1e-5f))};
}

Ts softmax_like(OpCtx& c, bool log) {
  const Tensor& x = c.input(0);
  if (x.dim() == 0) c.fail("softmax of a 0-D tensor");
  if (c.opset >= 13) {
    const int64_t a = c.axis(c.i("axis", -1), x.dim(), "axis");
    return {log ? log_softmax(x, a) : softmax(x, a)};
  }
  // Before opset 13: over the flattened dims from axis on.
  const int64_t a = c.axis(c.i("axis", 1), x.dim(), "axis");
  Tensor flat = x.flatten(a, -1);
  return {(log ? log_softmax(flat, a) : softmax(flat, a)).reshape(x.sizes())};
}
Ts op_softmax(OpCtx& c) { return softmax_like(c, false); }
Ts op_log_softmax(OpCtx& c) { return softmax_like(c, true); }

// ---- reductions ----

Ts reduce(OpCtx& c, Tensor (*f)(const Tensor&, IntArrayRef, bool), bool axes_input) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = axes_input ? (c.has(1) ? c.ints_of(c.in[1], "axes") : std::vector<int64_t>{}) : c.ints("axes");
  const bool keep = c.i("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.i("noop_with_empty_axes", 0)) return {x};
    for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = c.axis(a, x.dim(), "axis");
  return {f(x, axes, keep)};
}

Tensor sum_(const Tensor& t, IntArrayRef d, bool k) { return sum(t, d, k); }
Tensor prod_(const Tensor& t, IntArrayRef d, bool k) { return prod(t, d, k); }
Tensor l2_(const Tensor& t, IntArrayRef d, bool k) { return sqrt(sum(mul(t, t), d, k)); }
Tensor l1_(const Tensor& t, IntArrayRef d, bool k) { return sum(abs(t), d, k); }

Ts op_reduce_sum(OpCtx& c) { return reduce(c, sum_, c.opset >= 13); }
Ts op_reduce_mean(OpCtx& c) { return reduce(c, mean, false); }
Ts op_reduce_max(OpCtx& c) { return reduce(c, amax, false); }
Ts op_reduce_min(OpCtx& c) { return reduce(c, amin, false); }
Ts op_reduce_prod(OpCtx& c) { return reduce(c, prod_, false); }
Ts op_reduce_l2(OpCtx& c) { return reduce(c, l2_, false); }
Ts op_reduce_l1(OpCtx& c) { return reduce(c, l1_, false); }
Ts op_reduce_lse(OpCtx& c) { return reduce(c, logsumexp, false); }

Ts arg_reduce(OpCtx& c, bool is_max) {
  const Tensor& x = c.input(0);
  if (c.i("select_last_index", 0)) c.fail("select_last_index is not supported");
  const int64_t a = c.axis(c.i("axis", 0), x.dim(), "axis");
  return {is_max ? argmax(x, a, c.i("keepdims", 1) != 0) : argmin(x, a, c.i("keepdims", 1) != 0)};
}
Ts op_argmax(OpCtx& c) { return arg_reduce(c, true); }
Ts op_argmin(OpCtx& c) { return arg_reduce(c, false); }

Ts op_dropout(OpCtx& c) {
  Ts out{c.input(0)};
  if (c.wants(1)) out.push_back(ones(c.input(0).sizes(), TensorOptions(kBool)));
  return out;
}

const std::unordered_map<std::string, OpFn>& table() {
  static const std::unordered_map<std::string, OpFn> t{
      {"Add", binary<add2>}, {"Sub", binary<sub2>}, {"Mul", binary<mul>}, {"Div", op_div}, {"Pow", op_pow},
      {"Equal", binary<eq>}, {"Less", binary<lt>}, {"LessOrEqual", binary<le>}, {"Greater", binary<gt>},
      {"GreaterOrEqual", binary<ge>}, {"And", binary<logical_and>}, {"Or", binary<logical_or>},
      {"Xor", binary<logical_xor>}, {"Not", op_not}, {"Max", op_max}, {"Min", op_min}, {"Sum", op_sum},
      {"Where", op_where}, {"Neg", unary<neg>}, {"Abs", unary<abs>}, {"Exp", unary<exp>}, {"Log", unary<log>},
      {"Sqrt", unary<sqrt>}, {"Sin", unary<sin>}, {"Cos", unary<cos>}, {"Tanh", unary<tanh>},
      {"Tan", unary<tan>}, {"Asin", unary<asin>}, {"Acos", unary<acos>}, {"Atan", unary<atan>},
      {"Sinh", unary<sinh>}, {"Cosh", unary<cosh>}, {"Asinh", unary<asinh>}, {"Acosh", unary<acosh>},
      {"Atanh", unary<atanh>}, {"Mod", op_mod}, {"CumSum", op_cumsum}, {"GatherElements", op_gather_elements},
      {"TopK", op_topk}, {"ScatterElements", op_scatter_elements},
      {"Sigmoid", unary<sigmoid>}, {"Relu", unary<relu>}, {"Erf", unary<erf>}, {"Sign", unary<sign>},
      {"Floor", unary<floor>}, {"Ceil", unary<ceil>}, {"Round", unary<round>}, {"Reciprocal", unary<reciprocal>},
      {"IsNaN", unary<isnan>}, {"Identity", op_identity}, {"Clip", op_clip}, {"LeakyRelu", op_leaky_relu},
      {"Elu", op_elu}, {"Softplus", op_softplus}, {"Gelu", op_gelu}, {"Cast", op_cast},
      {"Constant", op_constant}, {"ConstantOfShape", op_constant_of_shape}, {"Shape", op_shape}, {"Size", op_size},
      {"Reshape", op_reshape}, {"Flatten", op_flatten}, {"Transpose", op_transpose}, {"Unsqueeze", op_unsqueeze},
      {"Squeeze", op_squeeze}, {"Concat", op_concat}, {"Split", op_split}, {"Slice", op_slice},
      {"Gather", op_gather}, {"Expand", op_expand}, {"Tile", op_tile}, {"Range", op_range}, {"Pad", op_pad},
      {"MatMul", op_matmul}, {"Gemm", op_gemm}, {"Conv", op_conv}, {"MaxPool", op_max_pool},
      {"AveragePool", op_avg_pool}, {"GlobalAveragePool", op_global_avg_pool},
      {"GlobalMaxPool", op_global_max_pool}, {"BatchNormalization", op_batch_norm},
      {"LayerNormalization", op_layer_norm}, {"Softmax", op_softmax}, {"LogSoftmax", op_log_softmax},
      {"ReduceSum", op_reduce_sum}, {"ReduceMean", op_reduce_mean}, {"ReduceMax", op_reduce_max},
      {"ReduceMin", op_reduce_min}, {"ReduceProd", op_reduce_prod}, {"ReduceL2", op_reduce_l2},
      {"ReduceL1", op_reduce_l1}, {"ReduceLogSumExp", op_reduce_lse}, {"ArgMax", op_argmax},
      {"ArgMin", op_argmin}, {"Dropout", op_dropout}, {"LSTM", op_lstm}, {"GRU", op_gru}};
  return t;
}

}  // namespace

OpFn find_op(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

}  // namespace ember::runtime::onnx_import

// op_db entries: reductions, comparison and sorting, indexing/shape, "Other"
// and linear algebra (OPS.md's sections of those names). Reference cases:
// tests/data/op_db/gen_tensor.py, whose case names and constant arguments
// these entries repeat.
#include <cmath>
#include <set>
#include <string>

#include "op_db.h"

namespace ember::op_db {
namespace {

OpInfo tensor_op(std::string op, std::string variant, OpFn fn) {
  OpInfo info;
  info.op = std::move(op);
  info.variant = std::move(variant);
  info.group = "tensor";
  info.fn = std::move(fn);
  return info;
}

template <typename F>
OpFn two(F f) {
  return [f](const Tensors& x) {
    auto [a, b] = f(x);
    return Tensors{a, b};
  };
}

template <typename F>
OpFn three(F f) {
  return [f](const Tensors& x) {
    auto [a, b, c] = f(x);
    return Tensors{a, b, c};
  };
}

Tensor f64(std::vector<double> v) { return tensor<double>(v); }
Tensor i64(std::vector<int64_t> v) { return tensor<int64_t>(v); }

struct Table {
  std::vector<OpInfo> ops;
  OpInfo& add(std::string op, std::string variant, OpFn fn) {
    ops.push_back(tensor_op(std::move(op), std::move(variant), std::move(fn)));
    return ops.back();
  }
  // Integer, bool or index outputs only.
  OpInfo& nondiff(std::string op, std::string variant, OpFn fn) {
    OpInfo& info = add(std::move(op), std::move(variant), std::move(fn));
    info.differentiable = false;
    return info;
  }
};

void reductions(Table& t) {
  t.add("sum", "dims_keepdim", one([](const Tensors& x) { return sum(x[0], {0, 2}, true); })).dtypes = {kFloat32};
  t.add("sum", "all", one([](const Tensors& x) { return x[0].sum(); }));
  t.add("sum", "neg_dim", one([](const Tensors& x) { return sum(x[0], {-1}); }));
  t.add("sum", "empty_dim", one([](const Tensors& x) { return sum(x[0], {1}); }));
  t.nondiff("sum", "int64", one([](const Tensors& x) { return sum(x[0], {0}); }));
  t.add("mean", "dim", one([](const Tensors& x) { return mean(x[0], {1}); })).dtypes = {kFloat32};
  t.add("mean", "neg_dims_keepdim", one([](const Tensors& x) { return x[0].mean({-1, -2}, true); }));
  t.add("mean", "empty", one([](const Tensors& x) { return mean(x[0], {0}); }));
  t.add("prod", "dim", one([](const Tensors& x) { return prod(x[0], {1}); }));
  // Twice differentiable with one zero: the other elements' gradients carry the zero's value.
  t.add("prod", "one_zero", one([](const Tensors& x) { return x[0].prod(-1); }));
  t.add("prod", "all", one([](const Tensors& x) { return prod(x[0]); }));
  t.add("amax", "dims", one([](const Tensors& x) { return amax(x[0], {0, -1}); })).dtypes = {kFloat32};
  t.add("amax", "keepdim", one([](const Tensors& x) { return x[0].amax({1}, true); }));
  t.add("amin", "dims", one([](const Tensors& x) { return amin(x[0], {1, 2}); }));
  t.add("max", "dim", two([](const Tensors& x) { return max(x[0], 1); }));
  t.add("max", "neg_dim_keepdim", two([](const Tensors& x) { return x[0].max(-2, true); }));
  t.add("max", "all", one([](const Tensors& x) { return max(x[0]); }));
  t.add("min", "dim", two([](const Tensors& x) { return min(x[0], 0); }));
  t.add("min", "all", one([](const Tensors& x) { return x[0].min(); }));
  t.nondiff("argmax", "dim", one([](const Tensors& x) { return argmax(x[0], -1); }));
  t.nondiff("argmax", "flat_ties", one([](const Tensors& x) { return x[0].argmax(); }));
  t.nondiff("argmin", "dim_keepdim", one([](const Tensors& x) { return argmin(x[0], 0, true); }));
  t.add("var", "dim", one([](const Tensors& x) { return var(x[0], {1}); })).dtypes = {kFloat32};
  t.add("var", "correction0_keepdim", one([](const Tensors& x) { return var(x[0], {-1}, 0, true); }));
  t.add("var", "all", one([](const Tensors& x) { return x[0].var(); }));
  t.add("std", "dim", one([](const Tensors& x) { return ember::std(x[0], {0}); }));
  t.add("std", "correction0", one([](const Tensors& x) { return x[0].std(std::vector<int64_t>{0, 1}, 0); }));
  t.add("var_mean", "dim", two([](const Tensors& x) { return var_mean(x[0], {1}); }));
  t.add("std_mean", "dim", two([](const Tensors& x) { return std_mean(x[0], {-1}); }));
  t.add("std_mean", "all_correction0", two([](const Tensors& x) { return std_mean(x[0], {}, 0); }));
  t.add("logsumexp", "dim", one([](const Tensors& x) { return logsumexp(x[0], {1}); })).dtypes = {kFloat32};
  // -inf and 1000: the stable shift; finite differences would step off inf.
  t.add("logsumexp", "large", one([](const Tensors& x) { return logsumexp(x[0], {-1}); })).gradcheck = false;
  t.add("norm", "p2", one([](const Tensors& x) { return norm(x[0]); }));
  t.add("norm", "p1_dim", one([](const Tensors& x) { return norm(x[0], 1, {1}); }));
  t.add("norm", "p3_keepdim", one([](const Tensors& x) { return x[0].norm(3, {-1}, true); }));
  t.add("norm", "pinf", one([](const Tensors& x) { return norm(x[0], INFINITY, {0}); }));
  t.nondiff("all", "dim", one([](const Tensors& x) { return all(x[0], {1}); }));
  t.nondiff("all", "float", one([](const Tensors& x) { return x[0].all(); }));
  t.nondiff("any", "dim", one([](const Tensors& x) { return any(x[0], {-1}); }));
  t.add("aminmax", "dim", two([](const Tensors& x) { return aminmax(x[0], 1); }));
  t.add("aminmax", "all_keepdim", two([](const Tensors& x) { return x[0].aminmax(std::nullopt, true); }));
  t.nondiff("count_nonzero", "dims", one([](const Tensors& x) { return count_nonzero(x[0], {1}); }));
  t.nondiff("count_nonzero", "all", one([](const Tensors& x) { return x[0].count_nonzero(); }));
  t.add("dist", "p2", one([](const Tensors& x) { return dist(x[0], x[1]); }));
  t.add("dist", "p1", one([](const Tensors& x) { return x[0].dist(x[1], 1); }));
  t.add("median", "all", one([](const Tensors& x) { return median(x[0]); })).dtypes = {kFloat32};
  t.add("median", "dim", two([](const Tensors& x) { return median(x[0], 1); }));
  t.add("median", "neg_dim_keepdim", two([](const Tensors& x) { return x[0].median(-2, true); }));
  // NaN inputs: the NaN is the median (and gets the gradient); no finite differences through NaN.
  t.add("median", "nan", two([](const Tensors& x) { return median(x[0], 1); })).gradcheck = false;
  t.add("nanmedian", "dim", two([](const Tensors& x) { return nanmedian(x[0], 1); })).gradcheck = false;
  t.add("nanmedian", "all", one([](const Tensors& x) { return x[0].nanmedian(); })).gradcheck = false;
  // Ties are the point of mode: finite differences would break them.
  t.add("mode", "dim", two([](const Tensors& x) { return mode(x[0], 1); })).gradcheck = false;
  t.add("mode", "dim0_keepdim", two([](const Tensors& x) { return x[0].mode(0, true); })).gradcheck = false;
  t.add("nansum", "dim", one([](const Tensors& x) { return nansum(x[0], {1}); })).gradcheck = false;  // NaN input
  t.add("nansum", "all", one([](const Tensors& x) { return x[0].nansum(); }));
  t.add("nanmean", "dim", one([](const Tensors& x) { return nanmean(x[0], {-1}); })).gradcheck = false;  // NaN input
  t.add("quantile", "scalar_dim", one([](const Tensors& x) { return quantile(x[0], 0.3, 1); })).dtypes = {kFloat32};
  t.add("quantile", "tensor_q_keepdim", one([](const Tensors& x) {
    return quantile(x[0], f64({0.0, 0.25, 0.9, 1.0}).to(x[0].dtype()), 0, true);
  }));
  t.add("quantile", "flat", one([](const Tensors& x) { return quantile(x[0], f64({0.1, 0.5}).to(x[0].dtype())); }));
  t.add("quantile", "lower", one([](const Tensors& x) { return quantile(x[0], 0.4, -1, false, "lower"); }));
  t.add("quantile", "higher", one([](const Tensors& x) { return x[0].quantile(0.4, -1, false, "higher"); }));
  t.add("quantile", "midpoint", one([](const Tensors& x) { return quantile(x[0], 0.4, -1, false, "midpoint"); }));
  t.add("quantile", "nearest", one([](const Tensors& x) {
    return quantile(x[0], f64({0.125, 0.375, 0.625}).to(x[0].dtype()), 1, false, "nearest");
  }));
  t.add("quantile", "nan", one([](const Tensors& x) { return quantile(x[0], 0.5, 1); })).gradcheck = false;
  t.add("nanquantile", "dim", one([](const Tensors& x) { return nanquantile(x[0], 0.4, 1); })).gradcheck = false;
  // Edge values (NaN, inf): finite differences cannot step through them.
  t.add("max", "nan", two([](const Tensors& x) { return max(x[0], 1); })).gradcheck = false;
  t.add("min", "nan_all", one([](const Tensors& x) { return min(x[0]); })).gradcheck = false;
  t.add("amax", "nan", one([](const Tensors& x) { return amax(x[0], {-1}); })).gradcheck = false;
  t.nondiff("argmax", "nan", one([](const Tensors& x) { return argmax(x[0], 1); }));
  t.add("sum", "inf", one([](const Tensors& x) { return sum(x[0], {1}); })).gradcheck = false;
  t.add("logsumexp", "all_neg_inf", one([](const Tensors& x) { return logsumexp(x[0], {1}); })).gradcheck = false;
  t.add("var", "one_element", one([](const Tensors& x) { return var(x[0], {1}); })).gradcheck = false;
  t.add("prod", "empty", one([](const Tensors& x) { return prod(x[0], {1}); }));
  t.add("cumsum", "inf_nan", one([](const Tensors& x) { return cumsum(x[0], 1); })).gradcheck = false;
  t.add("sort", "descending_nan_signed_zero", two([](const Tensors& x) {
    return sort(x[0], -1, true, true);
  })).gradcheck = false;
  t.add("topk", "nan", two([](const Tensors& x) { return topk(x[0], 2); })).gradcheck = false;
  t.nondiff("median", "int64", two([](const Tensors& x) { return median(x[0], 1); }));
  t.nondiff("kthvalue", "int64", two([](const Tensors& x) { return kthvalue(x[0], 3, 1); }));
  t.nondiff("cummax", "int64", two([](const Tensors& x) { return cummax(x[0], 1); }));
  t.nondiff("mode", "int64", two([](const Tensors& x) { return mode(x[0], 1); }));
  t.nondiff("roll", "int64", one([](const Tensors& x) { return roll(x[0], {1, 1}, {0, 1}); }));
  // A float32 reference (finite differences run on the float64 variants).
  OpInfo& q32 = t.add("quantile", "float32", one([](const Tensors& x) { return quantile(x[0], 0.75, 1); }));
  q32.rtol = 1e-6;
  q32.gradcheck = false;
  t.nondiff("unique", "flat", three([](const Tensors& x) { return unique(x[0]); }));
  t.nondiff("unique", "float", three([](const Tensors& x) { return x[0].unique(); }));
  t.nondiff("unique", "dim0", three([](const Tensors& x) { return unique(x[0], true, 0); }));
  t.nondiff("unique", "dim1", three([](const Tensors& x) { return unique(x[0], true, -1); }));
  t.nondiff("unique_consecutive", "flat", three([](const Tensors& x) { return unique_consecutive(x[0]); }));
  t.nondiff("unique_consecutive", "dim0", three([](const Tensors& x) { return unique_consecutive(x[0], 0); }));
}

void sorting(Table& t) {
  t.add("sort", "descending", two([](const Tensors& x) { return sort(x[0], -1, true); })).dtypes = {kFloat32};
  // Ties and a NaN: the stable order is what is checked.
  t.add("sort", "dim0_stable_ties", two([](const Tensors& x) { return sort(x[0], 0, false, true); })).gradcheck =
      false;
  t.nondiff("argsort", "default", one([](const Tensors& x) { return argsort(x[0]); }));
  t.nondiff("argsort", "descending_dim0", one([](const Tensors& x) { return x[0].argsort(0, true); }));
  t.add("topk", "largest", two([](const Tensors& x) { return topk(x[0], 2); }));
  t.add("topk", "smallest_dim0", two([](const Tensors& x) { return x[0].topk(3, 0, false); }));
  t.add("kthvalue", "dim", two([](const Tensors& x) { return kthvalue(x[0], 2, 1); })).dtypes = {kFloat32};
  t.add("kthvalue", "default_keepdim", two([](const Tensors& x) { return x[0].kthvalue(5, -1, true); }));
  t.add("msort", "default", one([](const Tensors& x) { return msort(x[0]); }));
}

void shapes(Table& t) {
  t.nondiff("argwhere", "default", one([](const Tensors& x) { return argwhere(x[0]); }));
  t.nondiff("nonzero", "default", one([](const Tensors& x) { return x[0].nonzero(); }));
  t.add("broadcast_tensors", "default", [](const Tensors& x) { return broadcast_tensors({x[0], x[1]}); });
  t.add("broadcast_to", "default", one([](const Tensors& x) { return broadcast_to(x[0], {2, 3, 4}); }));
  t.add("expand", "default", one([](const Tensors& x) { return x[0].expand({2, 3, 4}); }));
  t.add("cat", "dim1", one([](const Tensors& x) { return cat({x[0], x[1]}, 1); })).dtypes = {kFloat32, kBFloat16};
  t.add("cat", "neg_dim_empty", one([](const Tensors& x) { return cat({x[0], x[1]}, -1); }));
  t.add("stack", "neg_dim", one([](const Tensors& x) { return stack({x[0], x[1]}, -1); }));
  t.add("hstack", "2d", one([](const Tensors& x) { return hstack({x[0], x[1]}); }));
  t.add("hstack", "1d", one([](const Tensors& x) { return hstack({x[0], x[1]}); }));
  t.add("vstack", "default", one([](const Tensors& x) { return vstack({x[0], x[1]}); }));
  t.add("dstack", "default", one([](const Tensors& x) { return dstack({x[0], x[1]}); }));
  t.add("column_stack", "default", one([](const Tensors& x) { return column_stack({x[0], x[1]}); }));
  t.add("chunk", "uneven", [](const Tensors& x) { return chunk(x[0], 3); });
  t.add("split", "size", [](const Tensors& x) { return x[0].split(2, -1); });
  t.add("split", "sizes", [](const Tensors& x) { return split_with_sizes(x[0], {1, 4}); })
      .calls = {"split_with_sizes"};
  t.add("tensor_split", "sections", [](const Tensors& x) { return tensor_split(x[0], 3); });
  t.add("tensor_split", "indices", [](const Tensors& x) { return tensor_split(x[0], {1, 4, 9}, -1); });
  t.add("hsplit", "sections", [](const Tensors& x) { return hsplit(x[0], 3); });
  t.add("hsplit", "indices", [](const Tensors& x) { return hsplit(x[0], {2, 3}); });
  t.add("vsplit", "sections", [](const Tensors& x) { return x[0].vsplit(2); });
  t.add("unbind", "neg_dim", [](const Tensors& x) { return unbind(x[0], -1); });
  t.add("flatten", "range", one([](const Tensors& x) { return flatten(x[0], 1); }));
  t.add("unflatten", "default", one([](const Tensors& x) { return x[0].unflatten(-1, {2, 3}); }));
  t.add("flip", "dims", one([](const Tensors& x) { return flip(x[0], {0, -1}); })).dtypes = {kFloat32};
  t.add("fliplr", "default", one([](const Tensors& x) { return fliplr(x[0]); }));
  t.add("flipud", "default", one([](const Tensors& x) { return x[0].flipud(); }));
  t.add("movedim", "int", one([](const Tensors& x) { return movedim(x[0], 0, -1); }));
  t.add("movedim", "list", one([](const Tensors& x) { return x[0].movedim({1, -1}, {0, 2}); }));
  t.add("swapdims", "default", one([](const Tensors& x) { return swapdims(x[0], 0, -1); }));
  t.add("permute", "neg", one([](const Tensors& x) { return x[0].permute({-1, 0, 1}); }));
  t.add("transpose", "default", one([](const Tensors& x) { return transpose(x[0], -1, 0); }));
  t.add("t", "default", one([](const Tensors& x) { return x[0].t(); }));
  t.add("narrow", "neg_dim", one([](const Tensors& x) { return narrow(x[0], -1, 1, 3); }));
  t.add("select", "neg_index", one([](const Tensors& x) { return select(x[0], 1, -2); }));
  t.add("squeeze", "dim", one([](const Tensors& x) { return squeeze(x[0], -2); }));
  t.add("squeeze", "all", one([](const Tensors& x) { return x[0].squeeze(); }));
  t.add("unsqueeze", "neg_dim", one([](const Tensors& x) { return unsqueeze(x[0], -1); }));
  t.add("reshape", "infer", one([](const Tensors& x) { return reshape(x[0], {4, -1}); }));
  t.add("view", "merge_leading", one([](const Tensors& x) { return x[0].view({6, 4}); }));
  t.add("view_as", "default", one([](const Tensors& x) { return x[0].view_as(x[1]); }));
  t.add("roll", "dims", one([](const Tensors& x) { return roll(x[0], {1, -3}, {0, 1}); })).dtypes = {kFloat32};
  t.add("roll", "flat", one([](const Tensors& x) { return x[0].roll({5}); }));
  t.add("rot90", "k1", one([](const Tensors& x) { return rot90(x[0]); }));
  t.add("rot90", "k_neg3_dims", one([](const Tensors& x) { return x[0].rot90(-3, {2, 0}); }));
  t.add("rot90", "k2", one([](const Tensors& x) { return rot90(x[0], 2); }));
  t.add("repeat", "default", one([](const Tensors& x) { return x[0].repeat({2, 1, 3}); }));
  t.add("tile", "short_dims", one([](const Tensors& x) { return tile(x[0], {2}); }));
  t.add("repeat_interleave", "int_dim", one([](const Tensors& x) { return repeat_interleave(x[0], 2, -1); }));
  t.add("repeat_interleave", "flat", one([](const Tensors& x) { return x[0].repeat_interleave(3); }));
  t.add("repeat_interleave", "tensor", one([](const Tensors& x) {
    return repeat_interleave(x[0], i64({1, 0, 2}), 0);
  }));
  t.nondiff("repeat_interleave", "counts", one([](const Tensors& x) { return repeat_interleave(x[0]); }));
  t.add("gather", "neg_dim", one([](const Tensors& x) { return gather(x[0], -1, x[1]); })).dtypes = {kFloat32};
  t.add("take", "neg_index", one([](const Tensors& x) { return take(x[0], x[1]); }));
  t.add("take_along_dim", "dim", one([](const Tensors& x) { return take_along_dim(x[0], x[1], 1); }));
  t.add("take_along_dim", "broadcast", one([](const Tensors& x) { return x[0].take_along_dim(x[1], -1); }));
  t.add("take_along_dim", "flat", one([](const Tensors& x) { return take_along_dim(x[0], x[1]); }));
  t.add("index_select", "neg_dim", one([](const Tensors& x) { return index_select(x[0], -1, x[1]); }));
  t.add("masked_select", "broadcast", one([](const Tensors& x) { return masked_select(x[0], x[1]); }));
  t.add("masked_fill", "default", one([](const Tensors& x) { return masked_fill(x[0], x[1], -2.5); }));
  t.add("where", "broadcast", one([](const Tensors& x) { return where(x[0], x[1], x[2]); })).dtypes = {kFloat32};
  t.add("scatter", "src", one([](const Tensors& x) { return scatter(x[0], 1, x[1], x[2]); }));
  t.add("scatter", "value_neg_dim", one([](const Tensors& x) { return scatter(x[0], -2, x[1], 1.5); }));
  t.add("scatter_add", "default", one([](const Tensors& x) { return x[0].scatter_add(0, x[1], x[2]); }));
  for (std::string red : {"sum", "prod", "mean", "amax", "amin"}) {
    t.add("scatter_reduce", red, one([red](const Tensors& x) { return scatter_reduce(x[0], 0, x[1], x[2], red); }));
    t.add("scatter_reduce", red + "_exclude_self", one([red](const Tensors& x) {
      return x[0].scatter_reduce(-1, x[1], x[2], red, false);
    }));
  }
  t.add("scatter_reduce", "prod_zero", one([](const Tensors& x) { return scatter_reduce(x[0], 0, x[1], x[2], "prod"); }));
  t.add("index_add", "alpha", one([](const Tensors& x) { return index_add(x[0], 1, x[1], x[2], 2.0); }));
  t.add("index_copy", "default", one([](const Tensors& x) { return x[0].index_copy(0, x[1], x[2]); }));
  t.add("index_fill", "neg", one([](const Tensors& x) { return index_fill(x[0], -1, x[1], -1.5); }));
  t.add("index_put", "two_indices", one([](const Tensors& x) { return index_put(x[0], {x[1], x[2]}, x[3]); }));
  t.add("index_put", "accumulate_rows", one([](const Tensors& x) { return x[0].index_put({x[1]}, x[2], true); }));
  t.add("index_put", "mask", one([](const Tensors& x) { return index_put(x[0], {x[1]}, x[2]); }));
  // Advanced indexing: an undefined index is a full slice, x[:, i, j].
  t.add("index", "slice_first", one([](const Tensors& x) { return index(x[0], {Tensor(), x[1], x[2]}); }))
      .dtypes = {kFloat32};
  t.add("index", "between", one([](const Tensors& x) { return index(x[0], {x[1], Tensor(), x[2]}); }));
  t.add("index", "mask", one([](const Tensors& x) { return index(x[0], {Tensor(), x[1]}); }));
  t.add("index", "repeated", one([](const Tensors& x) { return index(x[0], {x[1]}); }));
  // libtorch's spelling, Tensor::index({Slice(), i, j}), reads the same case.
  OpInfo& method = t.add("index", "method", one([](const Tensors& x) { return x[0].index({Slice(), x[1], x[2]}); }));
  method.reference = "slice_first";
  // An undefined index is a full slice: x[:, i, j] = v.
  t.add("index_put", "slice_first", one([](const Tensors& x) { return index_put(x[0], {Tensor(), x[1], x[2]}, x[3]); }));
  t.add("index_put", "slice_between",
        one([](const Tensors& x) { return x[0].index_put({x[1], Tensor(), x[2]}, x[3]); }));
  t.add("index_put", "slice_accumulate", one([](const Tensors& x) { return index_put(x[0], {Tensor(), x[1]}, x[2], true); }));
  t.add("index_put", "slice_mask", one([](const Tensors& x) { return index_put(x[0], {Tensor(), x[1]}, x[2]); }));
  t.add("masked_scatter", "default", one([](const Tensors& x) { return masked_scatter(x[0], x[1], x[2]); }));
  t.add("select_scatter", "default", one([](const Tensors& x) { return select_scatter(x[0], x[1], 1, -1); }));
  t.add("slice_scatter", "step", one([](const Tensors& x) { return slice_scatter(x[0], x[1], 1, 1, 5, 2); }));
  t.add("slice_scatter", "default", one([](const Tensors& x) { return x[0].slice_scatter(x[1], 0, 2); }));
}

void other(Table& t) {
  t.nondiff("bincount", "default", one([](const Tensors& x) { return bincount(x[0]); }));
  t.nondiff("bincount", "weights_minlength", one([](const Tensors& x) { return x[0].bincount(x[1], 6); }));
  t.nondiff("bucketize", "default", one([](const Tensors& x) { return bucketize(x[0], x[1]); }));
  t.nondiff("bucketize", "right_int32", one([](const Tensors& x) { return bucketize(x[0], x[1], true, true); }));
  t.nondiff("searchsorted", "1d", one([](const Tensors& x) { return searchsorted(x[0], x[1]); }));
  t.nondiff("searchsorted", "nd_right", one([](const Tensors& x) { return searchsorted(x[0], x[1], false, true); }));
  t.nondiff("searchsorted", "sorter",
            one([](const Tensors& x) { return searchsorted(x[0], x[1], false, false, std::nullopt, x[2]); }));
  t.nondiff("searchsorted", "nd_side_right_sorter",
            one([](const Tensors& x) { return searchsorted(x[0], x[1], false, false, "right", x[2]); }));
  t.nondiff("searchsorted", "side_left", one([](const Tensors& x) { return searchsorted(x[0], x[1], false, false, "left"); }));
  t.nondiff("searchsorted", "scalar_int32", one([](const Tensors& x) { return searchsorted(x[0], 3, true, true); }));
  t.nondiff("histc", "range", one([](const Tensors& x) { return histc(x[0], 4, 0, 3); }));
  t.nondiff("histc", "auto", one([](const Tensors& x) { return x[0].histc(5); }));
  t.add("cartesian_prod", "default", one([](const Tensors& x) { return cartesian_prod({x[0], x[1]}); }));
  t.add("combinations", "r2", one([](const Tensors& x) { return combinations(x[0]); }));
  t.add("combinations", "r3_replacement", one([](const Tensors& x) { return combinations(x[0], 3, true); }));
  t.add("meshgrid", "ij", [](const Tensors& x) { return meshgrid({x[0], x[1]}); });
  t.add("meshgrid", "xy", [](const Tensors& x) { return meshgrid({x[0], x[1], x[2]}, "xy"); });
  t.nondiff("tril_indices", "offset", one([](const Tensors&) { return tril_indices(3, 4, 1); }));
  t.nondiff("triu_indices", "neg_offset", one([](const Tensors&) { return triu_indices(4, 3, -1); }));
  t.add("tril", "neg", one([](const Tensors& x) { return tril(x[0], -1); }));
  t.add("triu", "pos", one([](const Tensors& x) { return x[0].triu(1); }));
  t.add("cross", "dim", one([](const Tensors& x) { return cross(x[0], x[1], 0); })).dtypes = {kFloat32};
  t.add("cross", "default_broadcast", one([](const Tensors& x) { return x[0].cross(x[1]); }));
  t.add("cummax", "dim", two([](const Tensors& x) { return cummax(x[0], 1); }));
  // Ties and a NaN: the index rule is what is checked.
  t.add("cummax", "ties_nan", two([](const Tensors& x) { return x[0].cummax(-1); })).gradcheck = false;
  t.add("cummin", "dim0", two([](const Tensors& x) { return cummin(x[0], 0); }));
  t.add("cumprod", "dim", one([](const Tensors& x) { return cumprod(x[0], 1); })).dtypes = {kFloat32};
  t.add("cumprod", "zeros", one([](const Tensors& x) { return x[0].cumprod(-1); }));
  t.nondiff("cumprod", "int64", one([](const Tensors& x) { return cumprod(x[0], 1); }));
  t.add("cumsum", "dim1", one([](const Tensors& x) { return cumsum(x[0], 1); }));
  t.add("cumsum", "neg_dim", one([](const Tensors& x) { return x[0].cumsum(-1); }));
  t.add("logcumsumexp", "dim", one([](const Tensors& x) { return logcumsumexp(x[0], 1); })).dtypes = {kFloat32};
  // +-1000 and -inf: exact where a shifted exp would underflow; no finite differences at inf.
  t.add("logcumsumexp", "wide_range", one([](const Tensors& x) { return x[0].logcumsumexp(-1); })).gradcheck = false;
  t.add("diag", "vector_offset", one([](const Tensors& x) { return diag(x[0], 1); }));
  t.add("diag", "matrix_neg", one([](const Tensors& x) { return x[0].diag(-1); }));
  t.add("diag_embed", "default", one([](const Tensors& x) { return diag_embed(x[0]); }));
  t.add("diag_embed", "offset_dims", one([](const Tensors& x) { return x[0].diag_embed(-1, 0, 2); }));
  t.add("diagonal", "dims", one([](const Tensors& x) { return diagonal(x[0], 1, -1, 0); }));
  t.add("diff", "default", one([](const Tensors& x) { return diff(x[0]); }));
  t.add("diff", "n2_dim0_prepend", one([](const Tensors& x) { return diff(x[0], 2, 0, x[1]); }));
  t.add("trace", "default", one([](const Tensors& x) { return trace(x[0]); }));
  t.add("clone", "default", one([](const Tensors& x) { return clone(x[0]); }));
  t.add("einsum", "matmul", one([](const Tensors& x) { return einsum("ij,jk->ik", {x[0], x[1]}); })).dtypes = {kFloat32};
  t.add("einsum", "batch", one([](const Tensors& x) { return einsum("bij,bjk->bik", {x[0], x[1]}); }));
  t.add("einsum", "trace_diag", one([](const Tensors& x) { return einsum("ii", {x[0]}); }));
  t.add("einsum", "diagonal", one([](const Tensors& x) { return einsum("ii->i", {x[0]}); }));
  t.add("einsum", "implicit_outer", one([](const Tensors& x) { return einsum("i,j", {x[0], x[1]}); }));
  t.add("einsum", "ellipsis_broadcast", one([](const Tensors& x) {
    return einsum("...ij,...jk->...ik", {x[0], x[1]});
  }));
  t.add("einsum", "three", one([](const Tensors& x) { return einsum("ij,jk,kl->il", {x[0], x[1], x[2]}); }));
  t.add("einsum", "sum_transpose", one([](const Tensors& x) { return einsum("ijk->kj", {x[0]}); }));
  t.add("einsum", "bilinear", one([](const Tensors& x) { return einsum("bn,anm,bm->ba", {x[0], x[1], x[2]}); }));
  t.add("tensordot", "int", one([](const Tensors& x) { return tensordot(x[0], x[1], 2); }));
  t.add("tensordot", "lists", one([](const Tensors& x) { return tensordot(x[0], x[1], {0, 2}, {1, 0}); }));
  t.add("kron", "default", one([](const Tensors& x) { return kron(x[0], x[1]); }));
  t.add("kron", "ranks", one([](const Tensors& x) { return x[0].kron(x[1]); }));
}

void linalg(Table& t) {
  t.add("mm", "default", one([](const Tensors& x) { return mm(x[0], x[1]); })).dtypes = {kFloat32};
  t.add("bmm", "default", one([](const Tensors& x) { return x[0].bmm(x[1]); })).dtypes = {kFloat32};
  t.add("matmul", "broadcast", one([](const Tensors& x) { return matmul(x[0], x[1]); })).dtypes = {kFloat32};
  t.add("matmul", "vector", one([](const Tensors& x) { return x[0].matmul(x[1]); }));
  t.add("dot", "default", one([](const Tensors& x) { return dot(x[0], x[1]); }));
  t.add("outer", "default", one([](const Tensors& x) { return x[0].outer(x[1]); }));
  t.add("inner", "default", one([](const Tensors& x) { return inner(x[0], x[1]); }));
  t.add("mv", "default", one([](const Tensors& x) { return x[0].mv(x[1]); })).dtypes = {kFloat32};
  t.add("addmm", "scaled", one([](const Tensors& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); })).dtypes = {kFloat32};
  t.add("addmm", "row_bias", one([](const Tensors& x) { return x[0].addmm(x[1], x[2]); }));
  t.add("addmv", "scaled", one([](const Tensors& x) { return addmv(x[0], x[1], x[2], -1.0, 0.5); }));
  // beta = 0 ignores NaN and inf in input (and its gradient is zero).
  t.add("addmv", "beta0_nan", one([](const Tensors& x) { return x[0].addmv(x[1], x[2], 0.0); })).gradcheck = false;
  t.add("addr", "default", one([](const Tensors& x) { return addr(x[0], x[1], x[2], 1, 3.0); }));
  t.add("baddbmm", "default", one([](const Tensors& x) { return baddbmm(x[0], x[1], x[2], 2.0); }));
  t.add("addbmm", "default", one([](const Tensors& x) { return x[0].addbmm(x[1], x[2], 1, -1.0); }));
  t.add("matrix_power", "n3", one([](const Tensors& x) { return matrix_power(x[0], 3); }));
  t.add("matrix_power", "n0", one([](const Tensors& x) { return x[0].matrix_power(0); }));
  t.add("matrix_power", "n_neg3", one([](const Tensors& x) { return matrix_power(x[0], -3); })).dtypes = {kFloat32};
  t.add("inverse", "default", one([](const Tensors& x) { return inverse(x[0]); })).dtypes = {kFloat32};
  t.add("inverse", "batched", one([](const Tensors& x) { return x[0].inverse(); }));
}

// Built from other ops (their derivative comes from those). cumprod,
// cummax/cummin, logcumsumexp, mode, searchsorted, histc and scatter_reduce's
// prod/amax/amin run a plain loop in src/ops (no kernel-table entry yet):
// they stay listed as kernel.
const std::set<std::string> kComposite = {
    "std_mean", "aminmax", "count_nonzero", "dist", "median", "nanmedian", "nansum", "nanmean", "quantile",
    "nanquantile", "unique", "unique_consecutive", "argsort", "kthvalue", "msort", "argwhere", "stack", "hstack",
    "vstack", "dstack", "column_stack", "chunk", "split", "tensor_split", "hsplit", "vsplit", "fliplr", "flipud",
    "movedim", "swapdims", "roll", "rot90", "tile", "repeat", "repeat_interleave", "take", "take_along_dim",
    "index_add", "index_copy", "index_fill", "index", "index_put", "masked_scatter", "select_scatter", "slice_scatter",
    "bincount", "cartesian_prod", "combinations", "meshgrid", "cross", "diag", "diag_embed", "diff", "trace",
    "einsum", "tensordot", "kron", "inner", "mv", "addmv", "addr", "addbmm", "baddbmm", "matrix_power",
    "tril", "triu", "bucketize"};

std::vector<OpInfo> entries() {
  Table t;
  reductions(t);
  sorting(t);
  shapes(t);
  other(t);
  linalg(t);
  for (OpInfo& op : t.ops)
    if (kComposite.contains(op.op)) op.impl = Impl::composite;
  return std::move(t.ops);
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

#!/usr/bin/python3
"""Reference cases of tests/op_db/tensor.cpp (see ref.py for the layout).

Case names mirror the entries there: "<op>.<variant>". Integer, bool and
constant arguments are fixed in the lambdas (the C++ entry repeats them);
only tensors are inputs. Ops marked not differentiable pass grad=False.
"""
import torch

from ref import RefFile, randn, uniform

nan = float("nan")
inf = float("inf")
r = RefFile("tensor", int_variants=True)


def ints(lo, hi, *shape):
    return torch.randint(lo, hi, shape, dtype=torch.int64)


def f64(values):
    return torch.tensor(values, dtype=torch.float64)


def i64(values):
    return torch.tensor(values, dtype=torch.int64)


# ---- Reductions ----
r.case("sum", "dims_keepdim", [randn(3, 4, 5)], lambda x: torch.sum(x, (0, 2), keepdim=True))
r.case("sum", "all", [randn(3, 4)], lambda x: torch.sum(x))
r.case("sum", "neg_dim", [randn(3, 4)], lambda x: torch.sum(x, -1))
r.case("sum", "empty_dim", [randn(3, 0)], lambda x: torch.sum(x, 1))
r.case("sum", "int64", [ints(-5, 5, 3, 4)], lambda x: torch.sum(x, 0), grad=False)
r.case("mean", "dim", [randn(3, 4)], lambda x: torch.mean(x, 1))
r.case("mean", "neg_dims_keepdim", [randn(2, 3, 4)], lambda x: torch.mean(x, (-1, -2), keepdim=True))
r.case("mean", "empty", [randn(0, 3)], lambda x: torch.mean(x, 0))
r.case("prod", "dim", [uniform(0.5, 2, 3, 4)], lambda x: torch.prod(x, 1))
r.case("prod", "one_zero", [f64([[1.5, 0.0, -2.0], [0.5, 3.0, 2.0]])], lambda x: torch.prod(x, -1))
r.case("prod", "all", [uniform(0.5, 2, 2, 3)], lambda x: torch.prod(x))
r.case("amax", "dims", [randn(3, 4, 5)], lambda x: torch.amax(x, (0, -1)))
r.case("amax", "keepdim", [randn(3, 4)], lambda x: torch.amax(x, 1, keepdim=True))
r.case("amin", "dims", [randn(3, 4, 5)], lambda x: torch.amin(x, (1, 2)))
r.case("max", "dim", [randn(3, 5)], lambda x: torch.max(x, 1))
r.case("max", "neg_dim_keepdim", [randn(3, 4, 2)], lambda x: torch.max(x, -2, keepdim=True))
r.case("max", "all", [randn(3, 4)], lambda x: torch.max(x))
r.case("min", "dim", [randn(3, 5)], lambda x: torch.min(x, 0))
r.case("min", "all", [randn(4)], lambda x: torch.min(x))
r.case("argmax", "dim", [randn(3, 5)], lambda x: torch.argmax(x, -1), grad=False)
r.case("argmax", "flat_ties", [f64([[1.0, 3.0], [3.0, 0.0]])], lambda x: torch.argmax(x), grad=False)
r.case("argmin", "dim_keepdim", [randn(3, 5)], lambda x: torch.argmin(x, 0, keepdim=True), grad=False)
r.case("var", "dim", [randn(3, 5)], lambda x: torch.var(x, 1))
r.case("var", "correction0_keepdim", [randn(3, 5)], lambda x: torch.var(x, -1, correction=0, keepdim=True))
r.case("var", "all", [randn(4, 3)], lambda x: torch.var(x))
r.case("std", "dim", [randn(3, 5)], lambda x: torch.std(x, 0))
r.case("std", "correction0", [randn(3, 5)], lambda x: torch.std(x, (0, 1), correction=0))
r.case("var_mean", "dim", [randn(3, 5)], lambda x: torch.var_mean(x, 1))
r.case("std_mean", "dim", [randn(3, 5)], lambda x: torch.std_mean(x, -1))
r.case("std_mean", "all_correction0", [randn(3, 5)], lambda x: torch.std_mean(x, unbiased=False))
r.case("logsumexp", "dim", [randn(3, 5)], lambda x: torch.logsumexp(x, 1))
r.case("logsumexp", "large", [f64([[1000.0, 1000.0], [-inf, 0.0]])], lambda x: torch.logsumexp(x, -1))
r.case("norm", "p2", [randn(3, 5)], lambda x: torch.norm(x))
r.case("norm", "p1_dim", [randn(3, 5)], lambda x: torch.norm(x, 1, dim=1))
r.case("norm", "p3_keepdim", [randn(3, 5)], lambda x: torch.norm(x, 3, dim=-1, keepdim=True))
r.case("norm", "pinf", [randn(3, 5)], lambda x: torch.norm(x, inf, dim=0))
r.case("all", "dim", [torch.tensor([[True, False], [True, True]])], lambda x: torch.all(x, 1), grad=False)
r.case("all", "float", [f64([[1.0, 0.0], [2.0, nan]])], lambda x: torch.all(x), grad=False)
r.case("any", "dim", [torch.tensor([[True, False], [False, False]])], lambda x: torch.any(x, -1), grad=False)
# PyTorch 1.13 has no derivative for aminmax: the reference is (amin, amax),
# checked against aminmax's values first.
def aminmax_ref(x, **kw):
    want = torch.aminmax(x.detach(), **kw)
    dim = kw.get("dim", None)
    dims = () if dim is None else dim
    got = (torch.amin(x, dims, keepdim=kw.get("keepdim", False)), torch.amax(x, dims, keepdim=kw.get("keepdim", False)))
    assert all(torch.equal(a.detach(), b) for a, b in zip(got, want))
    return got


r.case("aminmax", "dim", [randn(3, 5)], lambda x: aminmax_ref(x, dim=1))
r.case("aminmax", "all_keepdim", [randn(3, 5)], lambda x: aminmax_ref(x, keepdim=True))
r.case("count_nonzero", "dims", [f64([[0.0, 1.0, 2.0], [0.0, 0.0, -1.0]])], lambda x: torch.count_nonzero(x, 1),
       grad=False)
r.case("count_nonzero", "all", [ints(-1, 2, 4, 5)], lambda x: torch.count_nonzero(x), grad=False)
r.case("dist", "p2", [randn(3, 4), randn(4)], lambda a, b: torch.dist(a, b))
r.case("dist", "p1", [randn(3, 4), randn(3, 4)], lambda a, b: torch.dist(a, b, 1))
r.case("median", "all", [randn(3, 5)], lambda x: torch.median(x))
r.case("median", "dim", [randn(3, 4)], lambda x: torch.median(x, 1))
r.case("median", "neg_dim_keepdim", [randn(3, 4, 2)], lambda x: torch.median(x, -2, keepdim=True))
r.case("median", "nan", [f64([[3.0, nan, 1.0, nan], [1.0, 2.0, 3.0, 4.0]])], lambda x: torch.median(x, 1))
# An all-NaN slice's index is whatever PyTorch's nth_element leaves (tests/ops checks its NaN value).
r.case("nanmedian", "dim", [f64([[3.0, nan, 1.0, 2.0], [nan, nan, nan, 1.0], [1.0, 2.0, 3.0, 4.0]])],
       lambda x: torch.nanmedian(x, 1))
r.case("nanmedian", "all", [f64([[3.0, nan, 1.0], [2.0, nan, 5.0]])], lambda x: torch.nanmedian(x))
r.case("mode", "dim", [f64([[1, 2, 2, 3, 3, 1, 2], [5, 4, 4, 5, 0, 9, 9]])], lambda x: torch.mode(x, 1))
r.case("mode", "dim0_keepdim", [f64([[1, 2], [1, 3], [2, 3]])], lambda x: torch.mode(x, 0, keepdim=True))
r.case("nansum", "dim", [f64([[1.0, nan, 2.0], [nan, nan, nan]])], lambda x: torch.nansum(x, 1))
r.case("nansum", "all", [randn(3, 4)], lambda x: torch.nansum(x))
r.case("nanmean", "dim", [f64([[1.0, nan, 2.0], [4.0, 5.0, 6.0]])], lambda x: torch.nanmean(x, -1))
r.case("quantile", "scalar_dim", [randn(3, 6)], lambda x: torch.quantile(x, 0.3, dim=1))
r.case("quantile", "tensor_q_keepdim", [randn(3, 5)],
       lambda x: torch.quantile(x, f64([0.0, 0.25, 0.9, 1.0]), dim=0, keepdim=True))
r.case("quantile", "flat", [randn(4, 5)], lambda x: torch.quantile(x, f64([0.1, 0.5])))
r.case("quantile", "lower", [randn(2, 7)], lambda x: torch.quantile(x, 0.4, dim=-1, interpolation="lower"))
r.case("quantile", "higher", [randn(2, 7)], lambda x: torch.quantile(x, 0.4, dim=-1, interpolation="higher"))
r.case("quantile", "midpoint", [randn(2, 7)], lambda x: torch.quantile(x, 0.4, dim=-1, interpolation="midpoint"))
r.case("quantile", "nearest", [randn(2, 5)],
       lambda x: torch.quantile(x, f64([0.125, 0.375, 0.625]), dim=1, interpolation="nearest"))
r.case("quantile", "nan", [f64([[1.0, nan, 3.0], [1.0, 2.0, 3.0]])], lambda x: torch.quantile(x, 0.5, dim=1))
r.case("nanquantile", "dim", [f64([[1.0, nan, 3.0, 4.0], [nan, nan, nan, nan], [1.0, 2.0, 3.0, 5.0]])],
       lambda x: torch.nanquantile(x, 0.4, dim=1))
r.case("unique", "flat", [ints(0, 5, 3, 4)],
       lambda x: torch.unique(x, return_inverse=True, return_counts=True), grad=False)
r.case("unique", "float", [f64([2.5, -1.0, 2.5, 0.0, -1.0, 7.0])],
       lambda x: torch.unique(x, return_inverse=True, return_counts=True), grad=False)
r.case("unique", "dim0", [i64([[1, 2], [1, 2], [0, 5], [1, 1]])],
       lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True), grad=False)
r.case("unique", "dim1", [i64([[1, 0, 1], [2, 5, 2]])],
       lambda x: torch.unique(x, dim=-1, return_inverse=True, return_counts=True), grad=False)
r.case("unique_consecutive", "flat", [i64([1, 1, 2, 2, 3, 1, 1, 2])],
       lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True), grad=False)
r.case("unique_consecutive", "dim0", [i64([[1, 2], [1, 2], [3, 4], [1, 2]])],
       lambda x: torch.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True), grad=False)

# Edge values: NaN propagates through max/min/amax and wins argmax; inf and
# -inf through sums and logsumexp; one element has no variance (NaN).
r.case("max", "nan", [f64([[1.0, nan, 3.0], [2.0, 1.0, 0.0]])], lambda x: torch.max(x, 1))
r.case("min", "nan_all", [f64([[1.0, nan], [-2.0, 0.0]])], lambda x: torch.min(x))
r.case("amax", "nan", [f64([[1.0, nan, 3.0], [2.0, 1.0, 0.0]])], lambda x: torch.amax(x, -1))
r.case("argmax", "nan", [f64([[1.0, nan, 3.0], [2.0, 5.0, 0.0]])], lambda x: torch.argmax(x, 1), grad=False)
r.case("sum", "inf", [f64([[1.0, inf, -2.0], [inf, -inf, 0.0]])], lambda x: torch.sum(x, 1))
r.case("logsumexp", "all_neg_inf", [f64([[-inf, -inf], [0.0, -inf]])], lambda x: torch.logsumexp(x, 1))
r.case("var", "one_element", [f64([[1.5], [2.0]])], lambda x: torch.var(x, 1))
r.case("prod", "empty", [randn(2, 0)], lambda x: torch.prod(x, 1))
r.case("cumsum", "inf_nan", [f64([[1.0, inf, -inf, 2.0], [nan, 1.0, 2.0, 3.0]])], lambda x: torch.cumsum(x, 1))
r.case("sort", "descending_nan_signed_zero", [f64([[0.0, nan, -0.0, -1.0, inf]])],
       lambda x: torch.sort(x, descending=True, stable=True))
r.case("topk", "nan", [f64([[1.0, nan, 3.0, 2.0]])], lambda x: torch.topk(x, 2))

# Integer inputs through the order statistics and scans.
r.case("median", "int64", [i64([[5, -3, 2, 9], [1, 1, 0, 7]])], lambda x: torch.median(x, 1), grad=False)
r.case("kthvalue", "int64", [i64([[5, -3, 2, 9], [4, 1, 0, 7]])], lambda x: torch.kthvalue(x, 3, 1), grad=False)
r.case("cummax", "int64", [i64([[5, -3, 7, 7, 2]])], lambda x: torch.cummax(x, 1), grad=False)
r.case("mode", "int64", [i64([[3, 1, 3, 1, 2]])], lambda x: torch.mode(x, 1), grad=False)
r.case("roll", "int64", [i64([[1, 2, 3], [4, 5, 6]])], lambda x: torch.roll(x, (1, 1), (0, 1)), grad=False)
r.case("quantile", "float32", [torch.randn(3, 5, dtype=torch.float32)], lambda x: torch.quantile(x, 0.75, dim=1))

# ---- Comparison and sorting ----
r.case("sort", "descending", [randn(3, 5)], lambda x: torch.sort(x, -1, descending=True))
r.case("sort", "dim0_stable_ties", [f64([[2, 1], [1, 1], [2, 0], [nan, 1]])],
       lambda x: torch.sort(x, stable=True, dim=0))
r.case("argsort", "default", [randn(3, 5)], lambda x: torch.argsort(x), grad=False)
r.case("argsort", "descending_dim0", [randn(4, 3)], lambda x: torch.argsort(x, 0, descending=True), grad=False)
r.case("topk", "largest", [randn(3, 6)], lambda x: torch.topk(x, 2))
r.case("topk", "smallest_dim0", [randn(5, 3)], lambda x: torch.topk(x, 3, 0, largest=False))
r.case("kthvalue", "dim", [randn(3, 6)], lambda x: torch.kthvalue(x, 2, 1))
r.case("kthvalue", "default_keepdim", [randn(4, 5)], lambda x: torch.kthvalue(x, 5, keepdim=True))
r.case("msort", "default", [randn(4, 3)], lambda x: torch.msort(x))
# equal, allclose: tests/op_db/pointwise.cpp.

# ---- Indexing, slicing, joining, shape ----
r.case("argwhere", "default", [f64([[0.0, 1.0], [2.0, 0.0]])], lambda x: torch.argwhere(x), grad=False)
r.case("nonzero", "default", [ints(-1, 2, 3, 4)], lambda x: torch.nonzero(x), grad=False)
r.case("broadcast_tensors", "default", [randn(3, 1), randn(4)], lambda a, b: torch.broadcast_tensors(a, b))
r.case("broadcast_to", "default", [randn(3, 1)], lambda x: torch.broadcast_to(x, (2, 3, 4)))
r.case("expand", "default", [randn(3, 1)], lambda x: x.expand(2, 3, 4))
r.case("cat", "dim1", [randn(2, 3), randn(2, 1)], lambda a, b: torch.cat([a, b], 1))
r.case("cat", "neg_dim_empty", [randn(2, 3), randn(0)], lambda a, b: torch.cat([a, b], -1))
r.case("stack", "neg_dim", [randn(2, 3), randn(2, 3)], lambda a, b: torch.stack([a, b], -1))
r.case("hstack", "2d", [randn(2, 3), randn(2, 1)], lambda a, b: torch.hstack([a, b]))
r.case("hstack", "1d", [randn(3), randn(2)], lambda a, b: torch.hstack([a, b]))
r.case("vstack", "default", [randn(3), randn(2, 3)], lambda a, b: torch.vstack([a, b]))
r.case("dstack", "default", [randn(3), randn(1, 3)], lambda a, b: torch.dstack([a, b]))
r.case("column_stack", "default", [randn(3), randn(3, 2)], lambda a, b: torch.column_stack([a, b]))
r.case("chunk", "uneven", [randn(5, 2)], lambda x: torch.chunk(x, 3))
r.case("split", "size", [randn(2, 5)], lambda x: torch.split(x, 2, -1))
r.case("split", "sizes", [randn(5, 2)], lambda x: torch.split(x, [1, 4]))
r.case("tensor_split", "sections", [randn(7, 2)], lambda x: torch.tensor_split(x, 3))
r.case("tensor_split", "indices", [randn(2, 7)], lambda x: torch.tensor_split(x, [1, 4, 9], dim=-1))
r.case("hsplit", "sections", [randn(2, 6)], lambda x: torch.hsplit(x, 3))
r.case("hsplit", "indices", [randn(5)], lambda x: torch.hsplit(x, [2, 3]))
r.case("vsplit", "sections", [randn(4, 3)], lambda x: torch.vsplit(x, 2))
r.case("unbind", "neg_dim", [randn(2, 3)], lambda x: torch.unbind(x, -1))
r.case("flatten", "range", [randn(2, 3, 4)], lambda x: torch.flatten(x, 1))
r.case("unflatten", "default", [randn(2, 6)], lambda x: x.unflatten(-1, (2, 3)))
r.case("flip", "dims", [randn(2, 3, 4)], lambda x: torch.flip(x, (0, -1)))
r.case("fliplr", "default", [randn(3, 4)], lambda x: torch.fliplr(x))
r.case("flipud", "default", [randn(3, 4)], lambda x: torch.flipud(x))
r.case("movedim", "int", [randn(2, 3, 4)], lambda x: torch.movedim(x, 0, -1))
r.case("movedim", "list", [randn(2, 3, 4, 5)], lambda x: torch.movedim(x, (1, -1), (0, 2)))
r.case("swapdims", "default", [randn(2, 3, 4)], lambda x: torch.swapdims(x, 0, -1))
r.case("permute", "neg", [randn(2, 3, 4)], lambda x: x.permute(-1, 0, 1))
r.case("transpose", "default", [randn(2, 3, 4)], lambda x: torch.transpose(x, -1, 0))
r.case("t", "default", [randn(2, 3)], lambda x: torch.t(x))
r.case("narrow", "neg_dim", [randn(3, 5)], lambda x: torch.narrow(x, -1, 1, 3))
r.case("select", "neg_index", [randn(3, 5)], lambda x: torch.select(x, 1, -2))
r.case("squeeze", "dim", [randn(2, 1, 3)], lambda x: torch.squeeze(x, -2))
r.case("squeeze", "all", [randn(1, 2, 1, 3)], lambda x: torch.squeeze(x))
r.case("unsqueeze", "neg_dim", [randn(2, 3)], lambda x: torch.unsqueeze(x, -1))
r.case("reshape", "infer", [randn(2, 3, 4)], lambda x: torch.reshape(x, (4, -1)))
r.case("view", "merge_leading", [randn(2, 3, 4)], lambda x: x.view(6, 4))
r.case("view_as", "default", [randn(2, 3, 4), randn(6, 4)], lambda x, y: x.view_as(y))
r.case("roll", "dims", [randn(3, 4)], lambda x: torch.roll(x, (1, -3), (0, 1)))
r.case("roll", "flat", [randn(3, 4)], lambda x: torch.roll(x, 5))
r.case("rot90", "k1", [randn(2, 3)], lambda x: torch.rot90(x))
r.case("rot90", "k_neg3_dims", [randn(2, 3, 4)], lambda x: torch.rot90(x, -3, (2, 0)))
r.case("rot90", "k2", [randn(2, 3)], lambda x: torch.rot90(x, 2))
r.case("repeat", "default", [randn(2, 3)], lambda x: x.repeat(2, 1, 3))
r.case("tile", "short_dims", [randn(2, 3)], lambda x: torch.tile(x, (2,)))
r.case("repeat_interleave", "int_dim", [randn(2, 3)], lambda x: torch.repeat_interleave(x, 2, dim=-1))
r.case("repeat_interleave", "flat", [randn(2, 2)], lambda x: torch.repeat_interleave(x, 3))
r.case("repeat_interleave", "tensor", [randn(3, 2)], lambda x: torch.repeat_interleave(x, i64([1, 0, 2]), dim=0))
r.case("repeat_interleave", "counts", [i64([2, 0, 3])], lambda x: torch.repeat_interleave(x), grad=False)
r.case("gather", "neg_dim", [randn(3, 4), i64([[0, 3], [1, 1], [2, 0]])], lambda x, i: torch.gather(x, -1, i))
r.case("take", "neg_index", [randn(3, 4), i64([[0, -1], [5, 11]])], lambda x, i: torch.take(x, i))
r.case("take_along_dim", "dim", [randn(3, 4), i64([[0, 3], [1, 1], [2, 0]])],
       lambda x, i: torch.take_along_dim(x, i, 1))
r.case("take_along_dim", "broadcast", [randn(3, 4), i64([[0], [3]]).reshape(1, 2)],
       lambda x, i: torch.take_along_dim(x, i, -1))
r.case("take_along_dim", "flat", [randn(3, 4), i64([0, 11, 5])], lambda x, i: torch.take_along_dim(x, i))
r.case("index_select", "neg_dim", [randn(3, 4), i64([3, 0, 3])], lambda x, i: torch.index_select(x, -1, i))
r.case("masked_select", "broadcast", [randn(3, 4), torch.tensor([True, False, True, True])],
       lambda x, m: torch.masked_select(x, m))
r.case("masked_fill", "default", [randn(3, 4), torch.tensor([True, False, True, False])],
       lambda x, m: torch.masked_fill(x, m, -2.5))
r.case("where", "broadcast", [torch.tensor([[True], [False]]), randn(2, 3), randn(3)],
       lambda c, a, b: torch.where(c, a, b))
r.case("scatter", "src", [randn(3, 4), i64([[0, 2], [1, 3]]), randn(2, 2)],
       lambda x, i, s: torch.scatter(x, 1, i, s))
r.case("scatter", "value_neg_dim", [randn(3, 4), i64([[0, 2], [1, 1]])], lambda x, i: torch.scatter(x, -2, i, 1.5))
r.case("scatter_add", "default", [randn(3, 4), i64([[0, 0, 2], [1, 0, 1]]), randn(2, 3)],
       lambda x, i, s: torch.scatter_add(x, 0, i, s))
for red in ["sum", "prod", "mean", "amax", "amin"]:
    r.case("scatter_reduce", red, [randn(3, 4), i64([[0, 0, 2], [1, 0, 1]]), randn(2, 3)],
           lambda x, i, s, red=red: torch.scatter_reduce(x, 0, i, s, red))
    r.case("scatter_reduce", red + "_exclude_self", [randn(3, 4), i64([[0, 3, 2], [1, 3, 1]]), randn(2, 3)],
           lambda x, i, s, red=red: torch.scatter_reduce(x, -1, i, s, red, include_self=False))
r.case("scatter_reduce", "prod_zero", [f64([[1.0, 2.0], [0.0, 3.0]]), i64([[0, 0], [0, 0]]),
                                       f64([[2.0, 0.0], [4.0, 5.0]])],
       lambda x, i, s: torch.scatter_reduce(x, 0, i, s, "prod"))
r.case("index_add", "alpha", [randn(3, 4), i64([0, 2, 0]), randn(3, 3)],
       lambda x, i, s: torch.index_add(x, 1, i, s, alpha=2.0))
r.case("index_copy", "default", [randn(4, 2), i64([3, 0]), randn(2, 2)], lambda x, i, s: torch.index_copy(x, 0, i, s))
r.case("index_fill", "neg", [randn(3, 4), i64([0, -1])], lambda x, i: torch.index_fill(x, -1, i, -1.5))
r.case("index_put", "two_indices", [randn(3, 4), i64([0, 2, 2]), i64([1, 3, 0]), randn(3)],
       lambda x, i, j, v: torch.index_put(x, (i, j), v))
r.case("index_put", "accumulate_rows", [randn(3, 4), i64([0, 2, 0]), randn(4)],
       lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True))
r.case("index_put", "mask", [randn(2, 3), torch.tensor([[True, False, True], [False, True, False]]), randn(3)],
       lambda x, m, v: torch.index_put(x, (m,), v))
r.case("masked_scatter", "default", [randn(2, 3), torch.tensor([[True, False, True], [False, True, False]]),
                                     randn(2, 3)],
       lambda x, m, s: torch.masked_scatter(x, m, s))
r.case("select_scatter", "default", [randn(3, 4), randn(3)], lambda x, s: torch.select_scatter(x, s, 1, -1))
r.case("slice_scatter", "step", [randn(4, 5), randn(4, 2)], lambda x, s: torch.slice_scatter(x, s, 1, 1, 5, 2))
r.case("slice_scatter", "default", [randn(4, 5), randn(2, 5)], lambda x, s: torch.slice_scatter(x, s, start=2, step=1))

# ---- Other ----
r.case("bincount", "default", [i64([0, 1, 1, 3, 1])], lambda x: torch.bincount(x), grad=False)
r.case("bincount", "weights_minlength", [i64([0, 1, 1, 3]), f64([0.5, 1.0, 2.0, -1.0])],
       lambda x, w: torch.bincount(x, w, minlength=6), grad=False)
r.case("bucketize", "default", [f64([[-1.0, 1.0, 2.5], [3.0, 9.0, 2.0]]), f64([1.0, 2.0, 3.0])],
       lambda x, b: torch.bucketize(x, b), grad=False)
r.case("bucketize", "right_int32", [f64([1.0, 2.0, 2.5, 3.0]), f64([1.0, 2.0, 3.0])],
       lambda x, b: torch.bucketize(x, b, out_int32=True, right=True), grad=False)
r.case("searchsorted", "1d", [f64([1.0, 3.0, 5.0, 7.0]), f64([[3.0, 6.0, 9.0], [0.0, 7.0, 5.0]])],
       lambda s, v: torch.searchsorted(s, v), grad=False)
r.case("searchsorted", "nd_right", [f64([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), f64([[3.0, 6.0], [4.0, 1.0]])],
       lambda s, v: torch.searchsorted(s, v, right=True), grad=False)
r.case("histc", "range", [f64([1.0, 2.0, 1.0, 4.0, 4.0, 4.0, -1.0, 3.0])], lambda x: torch.histc(x, 4, 0, 3),
       grad=False)
r.case("histc", "auto", [randn(20)], lambda x: torch.histc(x, 5), grad=False)
r.case("cartesian_prod", "default", [randn(2), randn(3)], lambda a, b: torch.cartesian_prod(a, b))
r.case("combinations", "r2", [randn(4)], lambda x: torch.combinations(x))
r.case("combinations", "r3_replacement", [randn(3)], lambda x: torch.combinations(x, 3, with_replacement=True))
r.case("meshgrid", "ij", [randn(2), randn(3)], lambda a, b: torch.meshgrid(a, b, indexing="ij"))
r.case("meshgrid", "xy", [randn(2), randn(3), randn(4)], lambda a, b, c: torch.meshgrid(a, b, c, indexing="xy"))
r.case("tril_indices", "offset", [], lambda: torch.tril_indices(3, 4, 1), grad=False)
r.case("triu_indices", "neg_offset", [], lambda: torch.triu_indices(4, 3, -1), grad=False)
r.case("tril", "neg", [randn(2, 3, 4)], lambda x: torch.tril(x, -1))
r.case("triu", "pos", [randn(3, 4)], lambda x: torch.triu(x, 1))
r.case("cross", "dim", [randn(3, 2), randn(3, 2)], lambda a, b: torch.cross(a, b, 0))
r.case("cross", "default_broadcast", [randn(2, 3), randn(1, 3)], lambda a, b: torch.cross(a, b))
r.case("cummax", "dim", [randn(3, 5)], lambda x: torch.cummax(x, 1))
r.case("cummax", "ties_nan", [f64([[1.0, 3.0, 3.0, 2.0, nan, 5.0]])], lambda x: torch.cummax(x, -1))
r.case("cummin", "dim0", [randn(4, 3)], lambda x: torch.cummin(x, 0))
r.case("cumprod", "dim", [randn(3, 5)], lambda x: torch.cumprod(x, 1))
r.case("cumprod", "zeros", [f64([[2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.0, 3.0, 0.5]])],
       lambda x: torch.cumprod(x, -1))
r.case("cumprod", "int64", [ints(-3, 4, 2, 5)], lambda x: torch.cumprod(x, 1), grad=False)
r.case("cumsum", "dim1", [randn(3, 4, 2)], lambda x: torch.cumsum(x, 1))
r.case("cumsum", "neg_dim", [randn(3, 4)], lambda x: torch.cumsum(x, -1))
r.case("logcumsumexp", "dim", [randn(3, 5)], lambda x: torch.logcumsumexp(x, 1))
r.case("logcumsumexp", "wide_range", [f64([[-1000.0, 0.0, 1000.0, -inf, 1000.0]])],
       lambda x: torch.logcumsumexp(x, -1))
r.case("diag", "vector_offset", [randn(3)], lambda x: torch.diag(x, 1))
r.case("diag", "matrix_neg", [randn(3, 4)], lambda x: torch.diag(x, -1))
r.case("diag_embed", "default", [randn(2, 3)], lambda x: torch.diag_embed(x))
r.case("diag_embed", "offset_dims", [randn(2, 3)], lambda x: torch.diag_embed(x, -1, 0, 2))
r.case("diagonal", "dims", [randn(2, 3, 4)], lambda x: torch.diagonal(x, 1, -1, 0))
r.case("diff", "default", [randn(3, 5)], lambda x: torch.diff(x))
r.case("diff", "n2_dim0_prepend", [randn(3, 4), randn(1, 4)], lambda x, p: torch.diff(x, 2, 0, prepend=p))
r.case("trace", "default", [randn(3, 4)], lambda x: torch.trace(x))
r.case("clone", "default", [randn(3, 4)], lambda x: torch.clone(x))
r.case("einsum", "matmul", [randn(2, 3), randn(3, 4)], lambda a, b: torch.einsum("ij,jk->ik", a, b))
r.case("einsum", "batch", [randn(2, 3, 4), randn(2, 4, 5)], lambda a, b: torch.einsum("bij,bjk->bik", a, b))
r.case("einsum", "trace_diag", [randn(3, 3)], lambda a: torch.einsum("ii", a))
r.case("einsum", "diagonal", [randn(3, 3)], lambda a: torch.einsum("ii->i", a))
r.case("einsum", "implicit_outer", [randn(3), randn(2)], lambda a, b: torch.einsum("i,j", a, b))
r.case("einsum", "ellipsis_broadcast", [randn(2, 1, 3, 4), randn(5, 4, 2)],
       lambda a, b: torch.einsum("...ij,...jk->...ik", a, b))
r.case("einsum", "three", [randn(2, 3), randn(3, 4), randn(4, 2)],
       lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c))
r.case("einsum", "sum_transpose", [randn(2, 3, 4)], lambda a: torch.einsum("ijk->kj", a))
r.case("einsum", "bilinear", [randn(2, 3), randn(5, 3, 4), randn(2, 4)],
       lambda a, w, b: torch.einsum("bn,anm,bm->ba", a, w, b))
r.case("tensordot", "int", [randn(2, 3, 4), randn(3, 4, 5)], lambda a, b: torch.tensordot(a, b, 2))
r.case("tensordot", "lists", [randn(2, 3, 4), randn(4, 2)], lambda a, b: torch.tensordot(a, b, ([0, 2], [1, 0])))
r.case("kron", "default", [randn(2, 3), randn(2, 2)], lambda a, b: torch.kron(a, b))
r.case("kron", "ranks", [randn(2), randn(2, 3)], lambda a, b: torch.kron(a, b))

# ---- Linear algebra ----
r.case("mm", "default", [randn(3, 4), randn(4, 2)], lambda a, b: torch.mm(a, b))
r.case("bmm", "default", [randn(2, 3, 4), randn(2, 4, 2)], lambda a, b: torch.bmm(a, b))
r.case("matmul", "broadcast", [randn(2, 1, 3, 4), randn(5, 4, 2)], lambda a, b: torch.matmul(a, b))
r.case("matmul", "vector", [randn(3), randn(2, 3, 4)], lambda a, b: torch.matmul(a, b))
r.case("dot", "default", [randn(5), randn(5)], lambda a, b: torch.dot(a, b))
r.case("outer", "default", [randn(3), randn(4)], lambda a, b: torch.outer(a, b))
r.case("inner", "default", [randn(2, 3), randn(4, 3)], lambda a, b: torch.inner(a, b))
r.case("mv", "default", [randn(3, 4), randn(4)], lambda a, b: torch.mv(a, b))
r.case("addmm", "scaled", [randn(3, 2), randn(3, 4), randn(4, 2)],
       lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0))
r.case("addmm", "row_bias", [randn(2), randn(3, 4), randn(4, 2)], lambda c, a, b: torch.addmm(c, a, b))
r.case("addmv", "scaled", [randn(3), randn(3, 4), randn(4)], lambda c, a, b: torch.addmv(c, a, b, beta=-1.0, alpha=0.5))
r.case("addmv", "beta0_nan", [f64([nan, 1.0, inf]), randn(3, 4), randn(4)],
       lambda c, a, b: torch.addmv(c, a, b, beta=0.0))
r.case("addr", "default", [randn(3, 4), randn(3), randn(4)], lambda c, a, b: torch.addr(c, a, b, alpha=3.0))
r.case("baddbmm", "default", [randn(2, 3, 2), randn(2, 3, 4), randn(2, 4, 2)],
       lambda c, a, b: torch.baddbmm(c, a, b, beta=2.0))
r.case("addbmm", "default", [randn(3, 2), randn(2, 3, 4), randn(2, 4, 2)],
       lambda c, a, b: torch.addbmm(c, a, b, alpha=-1.0))
r.case("matrix_power", "n3", [randn(2, 3, 3)], lambda x: torch.matrix_power(x, 3))
r.case("matrix_power", "n0", [randn(3, 3)], lambda x: torch.matrix_power(x, 0))

# searchsorted's side= and sorter= (an unsorted sequence and its argsort), and a Scalar value.
r.case("searchsorted", "sorter", [f64([5.0, 1.0, 3.0, 7.0]), f64([[3.0, 6.0], [0.0, 9.0]]), i64([1, 2, 0, 3])],
       lambda s, v, idx: torch.searchsorted(s, v, sorter=idx), grad=False)
r.case("searchsorted", "nd_side_right_sorter",
       [f64([[4.0, 2.0, 8.0], [9.0, 5.0, 1.0]]), f64([[2.0, 8.0, 3.0], [5.0, 0.0, 10.0]]), i64([[1, 0, 2], [2, 1, 0]])],
       lambda s, v, idx: torch.searchsorted(s, v, side="right", sorter=idx), grad=False)
r.case("searchsorted", "side_left", [f64([1.0, 3.0, 3.0, 5.0]), f64([3.0, 4.0])],
       lambda s, v: torch.searchsorted(s, v, side="left"), grad=False)
r.case("searchsorted", "scalar_int32", [f64([1.0, 3.0, 5.0])],
       lambda s: torch.searchsorted(s, 3, out_int32=True, right=True), grad=False)
# torch.inverse / linalg.inv and matrix_power's negative exponents, on
# well-conditioned matrices (randn + 4 I keeps them far from singular).
def well(*shape):
    return randn(*shape) + 4 * torch.eye(shape[-1], dtype=torch.float64)


r.case("inverse", "default", [well(3, 3)], lambda x: torch.inverse(x))
r.case("inverse", "batched", [well(2, 2, 4, 4)], lambda x: torch.linalg.inv(x))
r.case("matrix_power", "n_neg3", [well(2, 3, 3)], lambda x: torch.matrix_power(x, -3))

# index_put with full slices: x[:, i, j] = v is ATen's index_put with None in
# the index list (Python's torch.index_put takes no None; the op does).
aten_index_put = torch.ops.aten.index_put
r.case("index_put", "slice_first", [randn(2, 3, 4), i64([0, 2, 1]), i64([1, 3, -1]), randn(2, 3)],
       lambda x, i, j, v: aten_index_put(x, [None, i, j], v))
r.case("index_put", "slice_between", [randn(3, 2, 4), i64([0, 2]), i64([1, -1]), randn(1, 2)],
       lambda x, i, j, v: aten_index_put(x, [i, None, j], v))
r.case("index_put", "slice_accumulate", [randn(2, 4), i64([1, 1, 3]), randn(3)],
       lambda x, i, v: aten_index_put(x, [None, i], v, True))
r.case("index_put", "slice_mask", [randn(2, 3, 4), torch.rand(3, 4) > 0.5, randn(1)],
       lambda x, m, v: aten_index_put(x, [None, m], v))
# Advanced indexing (ATen's index: what x[:, i, j] reads), with PyTorch's
# placement of the broadcast index dims.
aten_index = torch.ops.aten.index
r.case("index", "slice_first", [randn(2, 3, 4), i64([0, 2, -1]), i64([1, 3, 0])],
       lambda x, i, j: aten_index(x, [None, i, j]))
r.case("index", "between", [randn(3, 2, 4), i64([[0], [2]]), i64([1, -1])],
       lambda x, i, j: aten_index(x, [i, None, j]))
r.case("index", "mask", [randn(2, 3, 4), torch.rand(3, 4) > 0.5], lambda x, m: aten_index(x, [None, m]))
r.case("index", "repeated", [randn(4, 3), i64([1, 1, 3])], lambda x, i: aten_index(x, [i]))
r.write()

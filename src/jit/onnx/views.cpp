// Note [onnx views]: an as_strided node (any view the traced forward took:
// view/reshape, transpose/permute, narrow/select/slicing, expand, squeeze)
// reads its contiguous base through sizes, strides and an offset. ONNX has
// no strides, so the view is rebuilt from dense ops: the dims that move
// (size > 1, stride != 0) sorted by stride are dims of the base reshaped to
// [-1, s0/s1, s1/s2, ..., s_last] (strides must divide each other), the
// offset picks a start in each (Slice), a Transpose restores the view's dim
// order, a Reshape puts back the size-1 dims and an Expand the stride-0
// ones. Steps that do nothing are left out, so a flatten is one Reshape.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "jit/onnx/lower.h"

namespace ember::jit::onnx_export {

namespace {

// a / b for monomials (or constants); false when not exact.
bool divide(const SymExpr& a, const SymExpr& b, SymExpr& q) {
  if (a.is_constant() && b.is_constant()) {
    const int64_t av = a.eval({}), bv = b.eval({});
    if (bv == 0 || av % bv != 0) return false;
    q = constant_expr(av / bv);
    return true;
  }
  if (a.terms.size() != 1 || b.terms.size() != 1) return false;
  const SymExpr::Term &ta = a.terms[0], &tb = b.terms[0];
  if (tb.coef == 0 || ta.coef % tb.coef != 0) return false;
  std::vector<std::string> rest = ta.symbols;
  for (const std::string& s : tb.symbols) {
    auto it = std::find(rest.begin(), rest.end(), s);
    if (it == rest.end()) return false;
    rest.erase(it);
  }
  q.terms = {{ta.coef / tb.coef, rest}};
  return true;
}

bool same(const SymExpr& a, const SymExpr& b) { return a.str() == b.str(); }

SymExpr times(const SymExpr& a, const SymExpr& b) {
  SymExpr r;
  for (const SymExpr::Term& x : a.terms)
    for (const SymExpr::Term& y : b.terms) {
      SymExpr::Term t{x.coef * y.coef, x.symbols};
      t.symbols.insert(t.symbols.end(), y.symbols.begin(), y.symbols.end());
      std::sort(t.symbols.begin(), t.symbols.end());
      r.terms.push_back(t);
    }
  return r;
}

SymExpr plus(const SymExpr& a, const SymExpr& b) {
  SymExpr r = a;
  r.terms.insert(r.terms.end(), b.terms.begin(), b.terms.end());
  return r;
}

// Equal as polynomials: compared at a few assignments of the symbols (the
// degrees are small, so agreeing on these points means equal).
bool equal_exprs(const SymExpr& a, const SymExpr& b) {
  std::vector<std::string> names;
  for (const SymExpr* e : {&a, &b})
    for (const SymExpr::Term& t : e->terms) names.insert(names.end(), t.symbols.begin(), t.symbols.end());
  for (int64_t seed : {2, 3, 7, 11}) {
    SymbolValues v;
    int64_t k = 0;
    for (const std::string& n : names) v[n] = seed + 13 * (k++);
    if (a.eval(v) != b.eval(v)) return false;
  }
  return true;
}

// Size-1 and stride-0 dims back in place (Reshape), then broadcast (Expand).
void finish_view(LowerCtx& c, std::string x, bool reshape, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& sizes, const std::vector<SymExpr>& size_e) {
  Builder& b = c.b;
  std::vector<SymExpr> shape;
  bool expand = false;
  for (size_t k = 0; k < sizes.size(); ++k) {
    expand = expand || (strides[k] == 0 && (sizes[k] != 1 || !size_e[k].is_constant()));
    shape.push_back(strides[k] == 0 ? constant_expr(1) : size_e[k]);
  }
  if (reshape) x = b.op("Reshape", {x, b.dims(shape)});
  if (expand) {
    // Expand broadcasts: 1 keeps a dim, so only the stride-0 dims need sizes.
    std::vector<SymExpr> target;
    for (size_t k = 0; k < sizes.size(); ++k) target.push_back(strides[k] == 0 ? size_e[k] : constant_expr(1));
    x = b.op("Expand", {x, b.dims(target, -1, false)});
  }
  b.finish(x, c.out(0));
}

// The view as slices of the base's own dims (select, narrow, transpose,
// unsqueeze, expand): each moving dim's stride is a base dim's stride. False
// (nothing emitted) when it is not.
bool lower_on_base_dims(LowerCtx& c, const TensorType& base, const std::string& base_name, const std::vector<size_t>& kept, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides, const std::vector<SymExpr>& size_e,
                        const std::vector<SymExpr>& stride_e, int64_t offset, const SymExpr& offset_e) {
  const std::vector<SymExpr> base_e = dim_exprs(base);
  const size_t rank = base.shape.size();
  std::vector<int64_t> bstride(rank, 1);
  std::vector<SymExpr> bstride_e(rank, constant_expr(1));
  for (size_t j = rank; j-- > 1;) {
    bstride[j - 1] = bstride[j] * base.shape[j].size;
    bstride_e[j - 1] = times(bstride_e[j], base_e[j]);
  }
  auto moves = [&](size_t j) { return base.shape[j].size != 1 || base.shape[j].is_symbolic(); };
  std::vector<int> match(kept.size(), -1);  // kept view dim -> base dim
  std::vector<int> used(rank, -1);
  for (size_t i = 0; i < kept.size(); ++i) {
    for (size_t j = 0; j < rank; ++j)
      if (used[j] < 0 && moves(j) && bstride[j] == strides[kept[i]] && equal_exprs(bstride_e[j], stride_e[kept[i]])) {
        match[i] = static_cast<int>(j), used[j] = static_cast<int>(i);
        break;
      }
    if (match[i] < 0) return false;
  }
  // Where the offset starts in each base dim.
  std::vector<int64_t> start(rank, 0);
  int64_t rem = offset;
  for (size_t j = 0; j < rank; ++j)
    if (moves(j)) start[j] = rem / bstride[j], rem %= bstride[j];
  if (rem != 0) return false;
  SymExpr at = constant_expr(0);
  for (size_t j = 0; j < rank; ++j) at = plus(at, times(constant_expr(start[j]), bstride_e[j]));
  if (!equal_exprs(at, offset_e)) return false;  // the start itself would follow a symbol
  std::vector<int64_t> starts, ends, axes;
  for (size_t j = 0; j < rank; ++j) {
    if (!moves(j)) continue;
    if (used[j] < 0) {  // a dim the view selects one index of
      starts.push_back(start[j]), ends.push_back(start[j] + 1), axes.push_back(static_cast<int64_t>(j));
      continue;
    }
    const size_t k = kept[static_cast<size_t>(used[j])];
    if (start[j] == 0 && sizes[k] == base.shape[j].size && same(size_e[k], base_e[j])) continue;
    if (!size_e[k].is_constant() || start[j] + sizes[k] > base.shape[j].size) return false;
    starts.push_back(start[j]), ends.push_back(start[j] + sizes[k]), axes.push_back(static_cast<int64_t>(j));
  }
  Builder& b = c.b;
  std::string x = base_name;
  if (!axes.empty()) x = b.op("Slice", {x, b.const_ints(starts), b.const_ints(ends), b.const_ints(axes)});
  // The view's moving dims in its order, then the selected and size-1 base dims.
  std::vector<size_t> order(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t p, size_t q) { return kept[p] < kept[q]; });
  std::vector<int64_t> perm;
  for (size_t i : order) perm.push_back(match[i]);
  for (size_t j = 0; j < rank; ++j)
    if (used[j] < 0) perm.push_back(static_cast<int64_t>(j));
  bool identity = true;
  for (size_t j = 0; j < perm.size(); ++j) identity = identity && perm[j] == static_cast<int64_t>(j);
  if (!identity) {
    onnx::NodeProto& t = b.node("Transpose", {x});
    set_attr(t, "perm", perm);
    x = t.output(0);
  }
  const bool reshape = kept.size() != rank || kept.size() != sizes.size();
  finish_view(c, x, reshape, strides, sizes, size_e);
  return true;
}

}  // namespace

void lower_as_strided(LowerCtx& c) {
  Builder& b = c.b;
  // A view of a view reads the first view's dense base (Note [onnx views]).
  int root = c.n.inputs.at(0);
  std::vector<SymExpr> offset_e = sym_ints(c.n, "offset");
  if (auto it = c.view_root.find(root); it != c.view_root.end()) {
    root = it->second.first;
    offset_e = {plus(it->second.second, offset_e.at(0))};
  }
  const std::string& base_name = c.names.at(static_cast<size_t>(root));
  const TensorType& base = c.g.type(root);
  const std::vector<int64_t> sizes = c.n.attr_ints("sizes"), strides = c.n.attr_ints("strides");
  const int64_t offset = offset_e.at(0).eval(traced_symbols(c.g));
  const std::vector<SymExpr> size_e = sym_ints(c.n, "sizes"), stride_e = sym_ints(c.n, "strides");
  if (sizes.size() != strides.size()) c.fail("sizes and strides differ in length");
  const size_t rank = sizes.size();
  int64_t numel = 1;
  for (const Dim& d : base.shape) numel *= d.size;
  auto unsupported = [&](const std::string& why) {
    c.fail(fmt::format("the view sizes [{}] strides [{}] offset {} of a {} base has no ONNX form: {}",
                       fmt::join(sizes, ", "), fmt::join(strides, ", "), offset, base.str(), why));
  };
  if (numel == 0) unsupported("the base is empty");
  // The dims that move, by stride (largest first; ties keep dim order).
  std::vector<size_t> kept;
  for (size_t k = 0; k < rank; ++k)
    if (strides[k] != 0 && (sizes[k] != 1 || !size_e[k].is_constant())) kept.push_back(k);
  for (size_t k : kept)
    if (strides[k] < 0) unsupported("negative strides");
  std::stable_sort(kept.begin(), kept.end(), [&](size_t x, size_t y) { return strides[x] > strides[y]; });
  if (lower_on_base_dims(c, base, base_name, kept, sizes, strides, size_e, stride_e, offset, offset_e.at(0))) return;
  const size_t r = kept.size();
  // Extents of the reshaped base; extra: the innermost stride's own extent.
  std::vector<SymExpr> ext;
  std::vector<int64_t> ext_v;
  if (r == 0) {
    ext = {constant_expr(numel)}, ext_v = {numel};
  } else {
    if (numel % strides[kept[0]] != 0) unsupported("the largest stride does not divide the base's size");
    ext.push_back(constant_expr(-1)), ext_v.push_back(numel / strides[kept[0]]);
    for (size_t j = 1; j < r; ++j) {
      const int64_t hi = strides[kept[j - 1]], lo = strides[kept[j]];
      SymExpr q;
      if (hi <= lo || hi % lo != 0 || !divide(stride_e[kept[j - 1]], stride_e[kept[j]], q))
        unsupported("the strides do not divide each other");
      ext.push_back(q), ext_v.push_back(hi / lo);
    }
    if (strides[kept[r - 1]] > 1) ext.push_back(stride_e[kept[r - 1]]), ext_v.push_back(strides[kept[r - 1]]);
  }
  // Where the offset starts in each extent.
  std::vector<int64_t> start(ext_v.size(), 0);
  {
    int64_t rem = offset;
    for (size_t j = 0; j < r; ++j) start[j] = rem / strides[kept[j]], rem %= strides[kept[j]];
    if (ext_v.size() > r) start[r] = rem;
    else if (r == 0) start[0] = rem;
    else if (rem != 0) unsupported("the offset is not a multiple of the smallest stride");
  }
  std::string x = base_name;
  // Reshape the base unless it already has these extents.
  bool reshape = ext_v.size() != base.shape.size();
  for (size_t j = 0; !reshape && j < ext_v.size(); ++j)
    reshape = ext_v[j] != base.shape[j].size || (j > 0 && !same(ext[j], dim_exprs(base)[j]));
  if (reshape) x = b.op("Reshape", {x, b.dims(ext, r == 0 ? -1 : 0)});
  // Slice where the view does not take a whole extent.
  std::vector<int64_t> starts, ends, axes;
  for (size_t j = 0; j < ext_v.size(); ++j) {
    const bool inner = j >= r;
    const int64_t len = inner ? 1 : sizes[kept[j]];
    const SymExpr len_e = inner ? constant_expr(1) : size_e[kept[j]];
    if (start[j] == 0 && len == ext_v[j] && (inner || j == 0 || same(len_e, ext[j]))) continue;
    if (!len_e.is_constant() || !offset_e[0].is_constant())
      unsupported("it slices a dim whose size or start follows a symbolic dim");
    if (start[j] + len > ext_v[j]) unsupported("it reads past the base");
    starts.push_back(start[j]), ends.push_back(start[j] + len), axes.push_back(static_cast<int64_t>(j));
  }
  if (!axes.empty()) x = b.op("Slice", {x, b.const_ints(starts), b.const_ints(ends), b.const_ints(axes)});
  // Back to the view's dim order.
  std::vector<size_t> order = kept;
  std::sort(order.begin(), order.end());
  std::vector<int64_t> perm;
  for (size_t k : order) perm.push_back(std::find(kept.begin(), kept.end(), k) - kept.begin());
  for (size_t j = r; j < ext_v.size(); ++j) perm.push_back(static_cast<int64_t>(j));
  bool identity = true;
  for (size_t j = 0; j < perm.size(); ++j) identity = identity && perm[j] == static_cast<int64_t>(j);
  if (!identity) {
    onnx::NodeProto& t = b.node("Transpose", {x});
    set_attr(t, "perm", perm);
    x = t.output(0);
  }
  finish_view(c, x, !(ext_v.size() == r && r == rank), strides, sizes, size_e);
}

}  // namespace ember::jit::onnx_export

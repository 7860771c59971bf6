// TensorIter construction and traversal (see Note [TensorIter]).
#include "kernels/tensor_iter.h"

#include <algorithm>

namespace ember {

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(sa == sb || sa == 1 || sb == 1,
                "{}: shapes [{}] and [{}] cannot be broadcast together: size {} vs {} at dim {}",
                op, fmt::join(a, ", "), fmt::join(b, ", "), sa, sb, i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

TensorIter::TensorIter(std::initializer_list<const Tensor*> operands, int nout, const char* op) {
  EMBER_ASSERT(operands.size() <= kMaxOperands && nout >= 1);
  ntensors_ = static_cast<int>(operands.size());
  nout_ = nout;
  const Tensor* const* ops = operands.begin();
  if (try_fast_setup(ops)) return;
  IntArrayRef shape = ops[0]->sizes();
  EMBER_CHECK(static_cast<int>(shape.size()) <= kMaxDims, "{}: at most {} dims are supported, got {}",
              op, kMaxDims, shape.size());
  compute_strides(ops, shape, op);
  reorder_and_coalesce();
}

TensorIter::TensorIter(Flat, std::initializer_list<const Tensor*> operands, int nout) {
  EMBER_ASSERT(operands.size() <= kMaxOperands && nout >= 1);
  ntensors_ = static_cast<int>(operands.size());
  nout_ = nout;
  const Tensor* const* ops = operands.begin();
  numel_ = ops[0]->impl()->numel();
  ndim_ = 1;
  shape_[0] = numel_;
  for (int i = 0; i < ntensors_; ++i) {
    const TensorImpl& t = *ops[i]->impl();
    dtypes_[i] = t.dtype();
    data_[i] = t.data();
    strides_[i][0] = static_cast<int64_t>(element_size(t.dtype()));
  }
}

// Every operand contiguous with the output's shape, or a one-element input:
// one flat dim, no sorting or merging needed. One pass over the operands; a
// miss falls back to compute_strides, which overwrites everything set here.
bool TensorIter::try_fast_setup(const Tensor* const* ops) {
  const TensorImpl& out = *ops[0]->impl();
  if (!out.is_contiguous()) return false;
  const DimVector& shape = out.sizes();
  const int64_t n = out.numel();
  for (int i = 0; i < ntensors_; ++i) {
    const TensorImpl& t = *ops[i]->impl();
    const int64_t es = static_cast<int64_t>(element_size(t.dtype()));
    if (i == 0 || (t.is_contiguous() && t.sizes() == shape)) {
      strides_[i][0] = es;
    } else if (t.numel() == 1 && t.dim() <= static_cast<int64_t>(shape.size())) {
      strides_[i][0] = n == 1 ? es : 0;
    } else {
      return false;
    }
    dtypes_[i] = t.dtype();
    data_[i] = t.data();
  }
  ndim_ = 1;
  numel_ = n;
  shape_[0] = n;
  return true;
}

void TensorIter::compute_strides(const Tensor* const* ops, IntArrayRef shape, const char* op) {
  ndim_ = static_cast<int>(shape.size());
  numel_ = 1;
  for (int d = 0; d < ndim_; ++d) {
    // Reversed so dim 0 is the innermost (last) dim of the tensor.
    shape_[d] = shape[ndim_ - 1 - d];
    numel_ *= shape_[d];
  }
  for (int i = 0; i < ntensors_; ++i) {
    const Tensor& t = *ops[i];
    dtypes_[i] = t.dtype();
    data_[i] = static_cast<char*>(t.data_ptr());
    int64_t es = static_cast<int64_t>(t.element_size());
    IntArrayRef sz = t.sizes(), st = t.strides();
    int tdim = static_cast<int>(sz.size());
    EMBER_CHECK(tdim <= ndim_, "{}: operand of shape [{}] does not broadcast to [{}]", op,
                fmt::join(sz, ", "), fmt::join(shape, ", "));
    for (int d = 0; d < ndim_; ++d) {
      int td = tdim - 1 - d;  // the tensor's dim aligned with iter dim d
      if (td < 0) {
        strides_[i][d] = 0;
        continue;
      }
      if (sz[td] == shape_[d]) {
        strides_[i][d] = sz[td] == 1 ? 0 : st[td] * es;
      } else {
        EMBER_CHECK(sz[td] == 1 && i >= nout_,
                    "{}: operand of shape [{}] does not broadcast to [{}]", op,
                    fmt::join(sz, ", "), fmt::join(shape, ", "));
        strides_[i][d] = 0;
      }
    }
  }
}

void TensorIter::reorder_and_coalesce() {
  if (ndim_ <= 1) {
    if (ndim_ == 0) {
      ndim_ = 1;
      shape_[0] = 1;
      for (int i = 0; i < ntensors_; ++i) strides_[i][0] = 0;
    }
    return;
  }
  // Order dims by the first output's stride (smallest first) so transposed
  // outputs are still written in memory order; stable keeps ties in place.
  std::array<int, kMaxDims> perm{};
  for (int d = 0; d < ndim_; ++d) perm[d] = d;
  std::stable_sort(perm.begin(), perm.begin() + ndim_, [&](int a, int b) {
    for (int i = 0; i < ntensors_; ++i) {
      int64_t sa = strides_[i][a], sb = strides_[i][b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb;
    }
    return false;
  });
  auto shape = shape_;
  auto strides = strides_;
  for (int d = 0; d < ndim_; ++d) {
    shape_[d] = shape[perm[d]];
    for (int i = 0; i < ntensors_; ++i) strides_[i][d] = strides[i][perm[d]];
  }
  // Merge dim d+1 into d when every operand walks them as one.
  int out = 0;
  for (int d = 1; d < ndim_; ++d) {
    bool can_merge = true;
    for (int i = 0; i < ntensors_ && can_merge; ++i)
      can_merge = strides_[i][d] == strides_[i][out] * shape_[out];
    if (shape_[d] == 1) continue;
    if (shape_[out] == 1) {
      shape_[out] = shape_[d];
      for (int i = 0; i < ntensors_; ++i) strides_[i][out] = strides_[i][d];
    } else if (can_merge) {
      shape_[out] *= shape_[d];
    } else {
      ++out;
      shape_[out] = shape_[d];
      for (int i = 0; i < ntensors_; ++i) strides_[i][out] = strides_[i][d];
    }
  }
  ndim_ = out + 1;
}

bool TensorIter::is_contiguous() const {
  if (ndim_ != 1) return false;
  for (int i = 0; i < ntensors_; ++i) {
    int64_t es = static_cast<int64_t>(element_size(dtypes_[i]));
    if (strides_[i][0] != es) return false;
  }
  return true;
}

void TensorIter::serial_for_each(Loop loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  std::array<char*, kMaxOperands> ptrs{};
  std::array<int64_t, kMaxOperands> inner{};
  for (int i = 0; i < ntensors_; ++i) inner[i] = strides_[i][0];
  if (ndim_ == 1) {
    for (int i = 0; i < ntensors_; ++i) ptrs[i] = data_[i] + begin * strides_[i][0];
    loop(ptrs.data(), inner.data(), end - begin);
    return;
  }
  // Multi-index of `begin` over the outer dims.
  std::array<int64_t, kMaxDims> idx{};
  int64_t rem = begin;
  for (int d = 0; d < ndim_; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = std::min(shape_[0] - idx[0], end - pos);
    for (int i = 0; i < ntensors_; ++i) {
      int64_t off = 0;
      for (int d = 0; d < ndim_; ++d) off += idx[d] * strides_[i][d];
      ptrs[i] = data_[i] + off;
    }
    loop(ptrs.data(), inner.data(), n);
    pos += n;
    idx[0] += n;
    for (int d = 0; d < ndim_ - 1 && idx[d] == shape_[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

void TensorIter::for_each(Loop loop, int64_t grain) const {
  if (numel_ == 0) return;
  if (numel_ <= grain) {
    if (ndim_ == 1) {  // one call, no index arithmetic
      std::array<char*, kMaxOperands> ptrs = data_;
      std::array<int64_t, kMaxOperands> inner;
      for (int i = 0; i < ntensors_; ++i) inner[i] = strides_[i][0];
      loop(ptrs.data(), inner.data(), numel_);
      return;
    }
    serial_for_each(loop, 0, numel_);
    return;
  }
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

}  // namespace ember

// Stacking and splitting composites over cat and slice: hstack, vstack,
// dstack, column_stack, tensor_split, hsplit, vsplit. Their gradients come
// from cat's and slice's.
#include <vector>

#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "ops/op_util.h"

namespace ember {
namespace {

// torch.atleast_{1,2,3}d: a 1-D [n] becomes [1, n] (2-D) or [1, n, 1] (3-D),
// a 2-D [a, b] becomes [a, b, 1] (3-D).
Tensor at_least(const Tensor& t, int64_t n) {
  if (t.dim() >= n) return t;
  if (t.dim() == 0) return t.reshape(DimVector(static_cast<size_t>(n), 1));
  if (n == 2) return t.unsqueeze(0);
  return t.dim() == 1 ? t.unsqueeze(0).unsqueeze(-1) : t.unsqueeze(-1);
}

std::vector<Tensor> all_at_least(TensorList tensors, int64_t n, const char* op) {
  EMBER_CHECK(!tensors.empty(), "{} expects a non-empty TensorList", op);
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(at_least(t, n));
  return out;
}

// Splits dim at the given boundaries (Python slice semantics: clamped,
// negative counts from the end).
std::vector<Tensor> split_at(const Tensor& t, IntArrayRef indices, int64_t dim) {
  std::vector<Tensor> out;
  out.reserve(indices.size() + 1);
  std::optional<int64_t> start = 0;
  for (int64_t i : indices) {
    out.push_back(slice(t, dim, start, i));
    start = i;
  }
  out.push_back(slice(t, dim, start, std::nullopt));
  return out;
}

// hsplit/vsplit's integer form: equal pieces, or PyTorch's error.
std::vector<Tensor> split_evenly(const Tensor& t, int64_t sections, int64_t dim, const char* op) {
  EMBER_CHECK(sections > 0, "{}: expected sections to be positive, got {}", op, sections);
  int64_t size = t.size(dim);
  EMBER_CHECK(size % sections == 0,
              "torch.{} attempted to split along dimension {}, but the size of the dimension {} is not "
              "divisible by the split_size {}!",
              op, dim, size, sections);
  return tensor_split(t, sections, dim);
}

}  // namespace

Tensor hstack(TensorList tensors) {
  std::vector<Tensor> ts = all_at_least(tensors, 1, "hstack");
  return cat(ts, ts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(TensorList tensors) { return cat(all_at_least(tensors, 2, "vstack"), 0); }

Tensor dstack(TensorList tensors) { return cat(all_at_least(tensors, 3, "dstack"), 2); }

Tensor column_stack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  std::vector<Tensor> ts;
  ts.reserve(tensors.size());
  for (const Tensor& t : tensors) ts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  return cat(ts, 1);
}

std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  EMBER_CHECK(sections > 0, "tensor_split: number of sections must be larger than 0, got {}", sections);
  dim = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t size = t.size(dim), base = size / sections, extra = size % sections;
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(sections));
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(slice(t, dim, start, start + len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& t, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  return split_at(t, indices, wrap_dim(dim, t.dim(), "tensor_split"));
}

std::vector<Tensor> hsplit(const Tensor& t, int64_t sections) {
  EMBER_CHECK(t.dim() >= 1, "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with {} "
              "dimensions!", t.dim());
  return split_evenly(t, sections, t.dim() == 1 ? 0 : 1, "hsplit");
}
std::vector<Tensor> hsplit(const Tensor& t, IntArrayRef indices) {
  EMBER_CHECK(t.dim() >= 1, "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with {} "
              "dimensions!", t.dim());
  return split_at(t, indices, t.dim() == 1 ? 0 : 1);
}

std::vector<Tensor> vsplit(const Tensor& t, int64_t sections) {
  EMBER_CHECK(t.dim() >= 2, "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with {} "
              "dimensions!", t.dim());
  return split_evenly(t, sections, 0, "vsplit");
}
std::vector<Tensor> vsplit(const Tensor& t, IntArrayRef indices) {
  EMBER_CHECK(t.dim() >= 2, "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with {} "
              "dimensions!", t.dim());
  return split_at(t, indices, 0);
}

// ---- Tensor methods ----
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const { return ember::split(*this, split_size, dim); }
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return ember::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return ember::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t dim) const {
  return ember::tensor_split(*this, indices, dim);
}
std::vector<Tensor> Tensor::hsplit(int64_t sections) const { return ember::hsplit(*this, sections); }
std::vector<Tensor> Tensor::vsplit(int64_t sections) const { return ember::vsplit(*this, sections); }
std::vector<Tensor> Tensor::hsplit(IntArrayRef indices) const { return ember::hsplit(*this, indices); }
std::vector<Tensor> Tensor::vsplit(IntArrayRef indices) const { return ember::vsplit(*this, indices); }

}  // namespace ember

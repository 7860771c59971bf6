// Shape-building composites with no kernel of their own: pad, tril/triu,
// repeat, flip, one_hot.
#include <algorithm>

#include "ops/op_util.h"
#include "ember/core/grad_graph.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "ops/trace_util.h"

namespace ember {
namespace {


// Keeps the elements on and below (tril) or above (triu) the diagonal: a
// [rows, cols] mask from column - row, broadcast over the batch dims.
Tensor triangle(const Tensor& t, int64_t diagonal, bool lower, const char* op) {
  EMBER_CHECK(t.dim() >= 2, "{}: input tensor must have at least 2 dimensions, got shape {}", op,
              shape_str(t.sizes()));
  int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
  Tensor diff = arange(cols).unsqueeze(0) - arange(rows).unsqueeze(1);
  Tensor keep = lower ? diff <= diagonal : diff >= diagonal;
  return where(keep, t, zeros({}, TensorOptions(t.dtype()).device(t.device())));
}

// Source position of output position j of a dim padded by (left, right).
int64_t pad_source(int64_t j, int64_t left, int64_t size, bool reflect, bool circular) {
  int64_t p = j - left;
  if (circular) return ((p % size) + size) % size;
  if (!reflect) return std::clamp<int64_t>(p, 0, size - 1);
  if (p < 0) return -p;
  if (p >= size) return 2 * (size - 1) - p;
  return p;
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true, "tril"); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false, "triu"); }

Tensor pad(const Tensor& t, IntArrayRef pad, std::string_view mode, double value) {
  EMBER_CHECK(pad.size() % 2 == 0, "pad: padding length must be divisible by 2, got {} values {}",
              pad.size(), shape_str(pad));
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(k <= t.dim(), "pad: padding length too large: {} values pad {} dims but the input {} has {}",
              pad.size(), k, shape_str(t.sizes()), t.dim());
  const bool constant = mode == "constant";
  EMBER_CHECK(constant || mode == "reflect" || mode == "replicate" || mode == "circular",
              "pad: unrecognised padding mode '{}' (expected 'constant', 'reflect', 'replicate' or 'circular')", mode);
  DimVector shape(t.sizes());
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = t.dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
    shape[d] = t.sizes()[d] + left + right;
    EMBER_CHECK(shape[d] >= 0,
                "pad: the input size {}, plus negative padding {} and {} resulted in a negative output "
                "size, which is invalid. Check dimension {} of your input {}",
                t.sizes()[d], left, right, d, shape_str(t.sizes()));
  }

  if (constant) {
    // Fill, then copy the (possibly cropped) input into the interior.
    Tensor out = full(shape, value, TensorOptions(t.dtype()).device(t.device()));
    Tensor src = t, dst = out;
    for (int64_t i = 0; i < k; ++i) {
      int64_t d = t.dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
      int64_t crop_l = std::max<int64_t>(-left, 0), crop_r = std::max<int64_t>(-right, 0);
      int64_t len = t.sizes()[d] - crop_l - crop_r;
      if (len <= 0) return out;  // everything of the input is cropped away (zero gradient)
      src = src.narrow(d, crop_l, len);
      dst = dst.narrow(d, std::max<int64_t>(left, 0), len);
    }
    {
      NoGradGuard no_grad;
      copy_(dst, src);
    }
    if (any_requires_grad({&t})) {
      // The adjoint of constant padding is cropping by the same amounts.
      std::vector<int64_t> neg;
      for (int64_t p : pad) neg.push_back(-p);
      record("ConstantPadNdBackward0", {&t}, out, [neg](const variable_list& g) -> variable_list {
        return {ember::pad(g[0], neg)};
      });
    }
    return out;
  }

  // reflect / replicate / circular: one index_select per padded dim with the
  // source position of every output position (negative pads simply crop).
  const bool reflect = mode == "reflect", circular = mode == "circular";
  Tensor out = t;
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = t.dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1], size = t.sizes()[d];
    if (reflect)
      EMBER_CHECK(left < size && right < size,
                  "pad: padding size should be less than the corresponding input dimension, but got: "
                  "padding ({}, {}) at dimension {} of input {}",
                  left, right, d, shape_str(t.sizes()));
    else if (circular)
      EMBER_CHECK(left <= size && right <= size,
                  "pad: Padding value causes wrapping around more than once: padding ({}, {}) at dimension {} of "
                  "input {}",
                  left, right, d, shape_str(t.sizes()));
    else
      EMBER_CHECK(size > 0 || shape[d] == 0,
                  "pad: replicate padding needs a non-empty dimension {} of input {}", d, shape_str(t.sizes()));
    std::vector<int64_t> src(static_cast<size_t>(shape[d]));
    for (int64_t j = 0; j < shape[d]; ++j) src[j] = pad_source(j, left, size, reflect, circular);
    out = index_select(out, d, tensor<int64_t>(src, {shape[d]}));
  }
  return out.is_same(t) ? t.clone() : out;
}

// Note [repeat as expand]: [s0, s1] repeated [r0, r1] is the view
// [1, s0, 1, s1] expanded to [r0, s0, r1, s1], copied into a fresh tensor and viewed
// to [r0 * s0, r1 * s1]: one strided copy, no loop over repeats.
Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(n >= t.dim(),
              "repeat: number of dimensions of repeat dims ({}) can not be smaller than number of "
              "dimensions of tensor ({})",
              n, t.dim());
  DimVector padded(n - t.dim(), 1);
  for (int64_t s : t.sizes()) padded.push_back(s);
  DimVector interleaved, expanded, result;
  for (int64_t i = 0; i < n; ++i) {
    interleaved.push_back(1);
    interleaved.push_back(padded[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(padded[i]);
    result.push_back(repeats[i] * padded[i]);
  }
  for (int64_t r : repeats)
    EMBER_CHECK(r >= 0, "repeat: trying to create tensor with negative dimension {}: {}", r, shape_str(result));
  // Always a fresh tensor, even when the expand is a no-op (all repeats 1).
  Tensor out = empty(expanded, TensorOptions(t.dtype()).device(t.device()));
  copy_(out, t.reshape(interleaved).expand(expanded));
  return out.view(result);
}

// Note [flip via negative strides]: the flipped view starts at the last
// element of each flipped dim and walks it with a negated stride. Such a view
// is never returned (as_strided rejects negative strides); it only feeds one
// strided copy into a fresh tensor.
Tensor flip(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(t.dim(), 1)), false);
  DimVector strides(t.strides());
  int64_t offset = t.storage_offset();
  for (int64_t d0 : dims) {
    int64_t d = wrap_dim(d0, t.dim(), "flip");
    EMBER_CHECK(!flipped[d], "flip: dim {} appears multiple times in the list of dims {}", d, shape_str(dims));
    flipped[d] = true;
    if (t.dim() == 0 || t.sizes()[d] == 0) continue;
    offset += (t.sizes()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  Tensor view(make_intrusive<TensorImpl>(t.storage(), t.dtype(), DimVector(t.sizes()), strides, offset));
  if (trace_hook()) [[unlikely]] trace_view(t, view);
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  {
    NoGradGuard no_grad;
    copy_(out, view);
  }
  if (any_requires_grad({&t})) {
    std::vector<int64_t> flip_dims(dims.begin(), dims.end());
    record("FlipBackward0", {&t}, out, [flip_dims](const variable_list& g) -> variable_list {
      return {flip(g[0], flip_dims)};
    });
  }
  return out;
}

Tensor one_hot(const Tensor& t, int64_t num_classes) {
  EMBER_CHECK_TYPE(t.dtype() == kInt64, "one_hot: is only applicable to index tensor (int64), got {}",
                   to_string(t.dtype()));
  EMBER_CHECK(num_classes >= -1, "one_hot: num_classes should be -1 or non-negative, got {}", num_classes);
  DimVector shape(t.sizes());
  if (t.numel() == 0) {
    EMBER_CHECK(num_classes != -1, "one_hot: can not infer total number of classes from empty tensor {}",
                shape_str(t.sizes()));
    shape.push_back(num_classes);
    return empty(shape, TensorOptions(kInt64).device(t.device()));
  }
  Tensor c = t.contiguous();
  if (TraceHook* th = trace_hook()) [[unlikely]] th->host_read(c, "one_hot");
  const int64_t* p = c.data_ptr<int64_t>();
  auto [lo, hi] = std::minmax_element(p, p + c.numel());
  EMBER_CHECK(*lo >= 0, "one_hot: class values must be non-negative, got {}", *lo);
  if (num_classes == -1) num_classes = *hi + 1;
  EMBER_CHECK(*hi < num_classes, "one_hot: class values must be smaller than num_classes ({}), got {}",
              num_classes, *hi);
  shape.push_back(num_classes);
  Tensor out = zeros(shape, TensorOptions(kInt64).device(t.device()));
  Tensor idx = c.unsqueeze(-1);
  out.scatter_(-1, idx, scalar_tensor(1, TensorOptions(kInt64).device(t.device())).expand(idx.sizes()));
  return out;
}

// ---- Tensor methods ----
Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) { return copy_(ember::tril(*this, diagonal)); }
Tensor& Tensor::triu_(int64_t diagonal) { return copy_(ember::triu(*this, diagonal)); }

}  // namespace ember

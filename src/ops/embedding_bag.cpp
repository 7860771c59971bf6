// F.embedding_bag and F.bilinear as composites: bags are an index_select of
// the rows and a scatter_add (sum / mean) or per-bag amax (max) into [B, D].
#include <algorithm>

#include "ops/op_util.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/linalg.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"

namespace ember {

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagOptions& o) {
  const char* op = "embedding_bag";
  EMBER_CHECK(weight.dim() == 2, "{}: expected weight [num_embeddings, embedding_dim], got {}", op,
              shape_str(weight.sizes()));
  EMBER_CHECK_TYPE(input.dtype() == kInt64 || input.dtype() == kInt32,
                   "{}: expected input of dtype int64 or int32, got {}", op, to_string(input.dtype()));
  EMBER_CHECK(o.mode == "sum" || o.mode == "mean" || o.mode == "max",
              "{}: mode has to be one of sum, mean or max, got '{}'", op, o.mode);
  EMBER_CHECK(!o.per_sample_weights.defined() || o.mode == "sum",
              "{}: embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
              "mode='sum' (got mode='{}'). Please open a feature request on GitHub.",
              op, o.mode);
  EMBER_CHECK(!o.per_sample_weights.defined() || o.per_sample_weights.sizes().vec() == input.sizes().vec(),
              "{}: expected per_sample_weights of the input's shape {}, got {}", op, shape_str(input.sizes()),
              shape_str(o.per_sample_weights.sizes()));
  int64_t num = weight.size(0), dim = weight.size(1);
  std::vector<int64_t> idx = input.to(kInt64).reshape({-1}).to_vector<int64_t>();
  int64_t n = static_cast<int64_t>(idx.size());
  std::vector<int64_t> starts;
  if (input.dim() == 2) {
    EMBER_CHECK(!o.offsets.defined(), "{}: if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type Tensor", op);
    for (int64_t b = 0; b < input.size(0); ++b) starts.push_back(b * input.size(1));
  } else {
    EMBER_CHECK(input.dim() == 1, "{}: input has to be 1D or 2D Tensor, but got Tensor of dimension {}", op,
                input.dim());
    EMBER_CHECK(o.offsets.defined() && o.offsets.dim() == 1,
                "{}: offsets has to be a 1D Tensor but got {}", op,
                o.offsets.defined() ? shape_str(o.offsets.sizes()) : std::string("None"));
    starts = o.offsets.to(kInt64).to_vector<int64_t>();
    if (o.include_last_offset) {
      EMBER_CHECK(!starts.empty(), "{}: include_last_offset: number of offsets should be at least 1", op);
      starts.pop_back();
    }
    EMBER_CHECK(starts.empty() || starts[0] == 0,
                "{}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                "However, got {}", op, starts.empty() ? 0 : starts[0]);
  }
  int64_t bags = static_cast<int64_t>(starts.size());
  std::optional<int64_t> pad_idx = o.padding_idx;
  if (pad_idx) {
    EMBER_CHECK(*pad_idx >= -num && *pad_idx < num, "{}: padding_idx must be within num_embeddings, got {}", op,
                *pad_idx);
    if (*pad_idx < 0) *pad_idx += num;
  }
  // Each kept entry's bag; entries equal to padding_idx are dropped.
  std::vector<int64_t> keep_pos, keep_idx, keep_bag, counts(static_cast<size_t>(bags), 0);
  for (int64_t b = 0; b < bags; ++b) {
    int64_t end = b + 1 < bags ? starts[b + 1] : n;
    EMBER_CHECK(starts[b] <= end && end <= n, "{}: offsets must be non-decreasing and at most the input size {}, got "
                "{}", op, n, shape_str(starts));
    for (int64_t i = starts[b]; i < end; ++i) {
      EMBER_CHECK_INDEX(idx[i] >= 0 && idx[i] < num, "{}: index {} is out of range for {} embeddings", op, idx[i],
                        num);
      if (pad_idx && idx[i] == *pad_idx) continue;
      keep_pos.push_back(i);
      keep_idx.push_back(idx[i]);
      keep_bag.push_back(b);
      ++counts[b];
    }
  }
  int64_t k = static_cast<int64_t>(keep_idx.size());
  auto ids = [](const std::vector<int64_t>& v) {
    return tensor<int64_t>(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64));
  };
  Tensor rows = index_select(weight, 0, ids(keep_idx));  // [k, D]
  if (o.per_sample_weights.defined())
    rows = rows * index_select(o.per_sample_weights.reshape({-1}), 0, ids(keep_pos)).unsqueeze(1);
  TensorOptions like = TensorOptions(weight.dtype());
  if (o.mode == "max") {
    std::vector<Tensor> out;
    for (int64_t b = 0, at = 0; b < bags; at += counts[b], ++b)
      out.push_back(counts[b] == 0 ? zeros({dim}, like) : amax(rows.narrow(0, at, counts[b]), {0}));
    return bags == 0 ? zeros({0, dim}, like) : stack(out, 0);
  }
  Tensor out = zeros({bags, dim}, like);
  if (k > 0) out = scatter_add(out, 0, ids(keep_bag).unsqueeze(1).expand({k, dim}), rows);
  if (o.mode == "mean") {
    std::vector<double> div(counts.begin(), counts.end());
    for (double& d : div) d = std::max(d, 1.0);
    out = out / tensor<double>(div, {bags, 1}, TensorOptions(kFloat64)).to(weight.dtype());
  }
  return out;
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const std::optional<Tensor>& bias) {
  const char* op = "bilinear";
  EMBER_CHECK(weight.dim() == 3, "{}: expected weight [out, in1, in2], got {}", op, shape_str(weight.sizes()));
  int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  EMBER_CHECK(input1.dim() >= 1 && input2.dim() == input1.dim() && input1.size(-1) == in1 && input2.size(-1) == in2,
              "{}: expected input1 [*, {}] and input2 [*, {}] with the same leading dims, got {} and {}", op, in1, in2,
              shape_str(input1.sizes()), shape_str(input2.sizes()));
  std::vector<int64_t> lead(input1.sizes().begin(), input1.sizes().end() - 1);
  EMBER_CHECK(lead == std::vector<int64_t>(input2.sizes().begin(), input2.sizes().end() - 1),
              "{}: input1 and input2 must have the same leading dims, got {} and {}", op, shape_str(input1.sizes()),
              shape_str(input2.sizes()));
  EMBER_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == out), "{}: expected bias [{}], got {}", op, out,
              shape_str(bias->sizes()));
  // The row count spelled out: a -1 cannot be inferred when a dim is 0.
  int64_t rows = 1;
  for (int64_t d : lead) rows *= d;
  Tensor a = input1.reshape({rows, in1}), b = input2.reshape({rows, in2});
  // y[n, o] = sum_ij a[n, i] W[o, i, j] b[n, j]: i contracted by one GEMM, j elementwise.
  Tensor w = weight.permute({1, 0, 2}).reshape({in1, out * in2});
  Tensor terms = matmul(a, w).view({rows, out, in2}) * b.unsqueeze(1);
  Tensor y = sum(terms, {2}, false, terms.dtype());  // int32 stays int32 (PyTorch's bilinear)
  if (bias) y = y + *bias;
  lead.push_back(out);
  return y.view(lead);
}

}  // namespace ember

// quant::linear_dynamic and PackedLinear: checks and packing around the
// kernel of kernels/cpu/qlinear_dynamic.cpp.
#include "ember/quant/qlinear.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "kernels/qgemm.h"

namespace ember::quant {
namespace {

std::string shape_of(const Tensor& t) {
  return t.defined() ? fmt::format("{}[{}]", to_string(t.dtype()), fmt::join(t.sizes(), ", ")) : "undefined";
}

}  // namespace

bool default_reduce_range() { return !cpu_has_vnni(); }

PackedLinear PackedLinear::from_parts(Tensor weight, Tensor scale, Tensor col_sum, Tensor bias, bool reduce_range) {
  EMBER_CHECK(weight.defined() && weight.dtype() == kInt8 && weight.dim() == 2,
              "linear_dynamic: expected an int8 [out, in] weight, got {}", shape_of(weight));
  const int64_t out = weight.size(0);
  EMBER_CHECK(scale.defined() && scale.dtype() == kFloat32 && scale.dim() == 1 && scale.size(0) == out,
              "linear_dynamic: expected float32 weight scales [{}], got {}", out, shape_of(scale));
  EMBER_CHECK(col_sum.defined() && col_sum.dtype() == kInt32 && col_sum.dim() == 1 && col_sum.size(0) == out,
              "linear_dynamic: expected int32 weight row sums [{}], got {}", out, shape_of(col_sum));
  EMBER_CHECK(!bias.defined() || (bias.dtype() == kFloat32 && bias.dim() == 1 && bias.size(0) == out),
              "linear_dynamic: expected a float32 bias [{}], got {}", out, shape_of(bias));
  PackedLinear p;
  p.weight = weight.contiguous();
  p.scale = scale.contiguous();
  p.col_sum = col_sum.contiguous();
  p.bias = bias.defined() ? bias.contiguous() : bias;
  p.reduce_range = reduce_range;
  p.products = std::make_shared<PackedQGemmPool>();
  return p;
}

PackedLinear PackedLinear::pack(const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.defined() && weight.dim() == 2, "linear_dynamic: expected a 2-D [out, in] weight, got {}",
              shape_of(weight));
  NoGradGuard no_grad;
  QTensor q = quantize_weight_per_channel(weight.detach());
  Tensor w = q.int_repr();
  Tensor sums = w.to(kInt64).sum({1}).to(kInt32);
  return from_parts(w, q.q_per_channel_scales().to(kFloat32), sums,
                    bias.defined() ? bias.detach().to(kFloat32) : Tensor(), default_reduce_range());
}

QTensor PackedLinear::qweight() const {
  return QTensor::per_channel(weight, kQInt8, scale.to(kFloat64), zeros({weight.size(0)}, kInt64), 0);
}

Tensor linear_dynamic(const Tensor& x, const PackedLinear& w, bool reference) {
  EMBER_CHECK(x.defined() && x.dtype() == kFloat32 && x.dim() >= 1,
              "linear_dynamic: expected a float32 input of at least 1 dim, got {}", shape_of(x));
  const int64_t in = w.in_features(), out = w.out_features();
  EMBER_CHECK(x.size(-1) == in, "linear_dynamic: input {} does not end in in_features = {} (weight {})", shape_of(x),
              in, shape_of(w.weight));
  Tensor xc = x.detach().contiguous();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = out;
  Tensor y = empty(shape, kFloat32);
  QLinearDynamicArgs a;
  a.x = xc.data_ptr<float>();
  a.m = rows;
  a.k = in;
  a.n = out;
  a.w = w.weight.data_ptr<int8_t>();
  a.colsum = w.col_sum.data_ptr<int32_t>();
  a.w_scale = w.scale.data_ptr<float>();
  a.bias = w.bias.defined() ? w.bias.data_ptr<float>() : nullptr;
  a.reduce_range = w.reduce_range;
  a.y = y.data_ptr<float>();
  qlinear_dynamic_f32(a, reference);
  return y;
}

}  // namespace ember::quant

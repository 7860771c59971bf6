// nn::init: PyTorch's initialisation formulas.
#include "ember/nn/init.h"

#include <cmath>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::nn::init {

double calculate_gain(std::string_view nl, std::optional<double> param) {
  if (nl == "linear" || nl == "conv1d" || nl == "conv2d" || nl == "conv3d" || nl == "conv_transpose1d" ||
      nl == "conv_transpose2d" || nl == "conv_transpose3d" || nl == "sigmoid")
    return 1.0;
  if (nl == "tanh") return 5.0 / 3.0;
  if (nl == "relu") return std::sqrt(2.0);
  if (nl == "leaky_relu") {
    double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1 + slope * slope));
  }
  if (nl == "selu") return 3.0 / 4.0;
  EMBER_ERROR("calculate_gain: unsupported nonlinearity '{}'; expected linear, conv*, sigmoid, tanh, relu, "
              "leaky_relu or selu",
              nl);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 2,
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got shape [{}])",
              fmt::join(t.sizes().vec(), ", "));
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

Tensor uniform_(Tensor t, double a, double b, Generator* gen) {
  NoGradGuard g;
  t.uniform_(a, b, gen);
  return t;
}

Tensor normal_(Tensor t, double mean, double std, Generator* gen) {
  NoGradGuard g;
  t.normal_(mean, std, gen);
  return t;
}

namespace {
// Inverse error function: a rational first guess refined by Newton steps on
// erf (which the standard library has).
double erfinv(double y) {
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  double w = -std::log((1.0 - y) * (1.0 + y));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
    x = p * y;
  }
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
double norm_cdf(double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; }
}  // namespace

Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b, Generator* gen) {
  NoGradGuard g;
  double l = norm_cdf((a - mean) / std), u = norm_cdf((b - mean) / std);
  t.uniform_(2 * l - 1, 2 * u - 1, gen);
  std::vector<double> v = t.to_vector<double>();
  for (double& x : v) x = std::min(std::max(erfinv(x) * std * std::sqrt(2.0) + mean, a), b);
  t.copy_(tensor<double>(v, t.sizes()));
  return t;
}

Tensor constant_(Tensor t, double val) {
  NoGradGuard g;
  t.fill_(val);
  return t;
}
Tensor ones_(Tensor t) { return constant_(std::move(t), 1.0); }
Tensor zeros_(Tensor t) {
  NoGradGuard g;
  t.zero_();
  return t;
}

Tensor xavier_uniform_(Tensor t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double a = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -a, a, gen);
}

Tensor xavier_normal_(Tensor t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(std::move(t), 0, std, gen);
}

namespace {
double kaiming_std(const Tensor& t, double a, std::string_view mode, std::string_view nonlinearity) {
  EMBER_CHECK(mode == "fan_in" || mode == "fan_out", "kaiming init: mode must be 'fan_in' or 'fan_out', got '{}'",
              mode);
  if (t.numel() == 0) return 0;
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double fan = static_cast<double>(mode == "fan_in" ? fan_in : fan_out);
  return calculate_gain(nonlinearity, a) / std::sqrt(fan);
}
}  // namespace

Tensor kaiming_uniform_(Tensor t, double a, std::string_view mode, std::string_view nonlinearity, Generator* gen) {
  if (t.numel() == 0) return t;  // PyTorch warns and leaves empty tensors alone
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  return uniform_(std::move(t), -bound, bound, gen);
}

Tensor kaiming_normal_(Tensor t, double a, std::string_view mode, std::string_view nonlinearity, Generator* gen) {
  if (t.numel() == 0) return t;
  // Computed before the call: the order in which arguments are evaluated is
  // unspecified, and clang moves `t` out before kaiming_std reads it.
  double std = kaiming_std(t, a, mode, nonlinearity);
  return normal_(std::move(t), 0, std, gen);
}

Tensor orthogonal_(Tensor t, double gain, Generator* gen) {
  EMBER_CHECK(t.dim() >= 2, "orthogonal_: only tensors with 2 or more dimensions are supported, got shape [{}]",
              fmt::join(t.sizes().vec(), ", "));
  if (t.numel() == 0) return t;
  NoGradGuard g;
  int64_t rows = t.size(0), cols = t.numel() / rows;
  bool transposed = rows < cols;
  int64_t m = transposed ? cols : rows, n = transposed ? rows : cols;  // m >= n
  Tensor flat = randn({rows, cols}, kFloat64, gen);
  if (transposed) flat = flat.t();
  std::vector<double> a = flat.contiguous().to_vector<double>();  // [m, n] row-major
  // Modified Gram-Schmidt with one re-orthogonalisation pass gives the
  // reduced QR with a positive diagonal of R, which is what PyTorch's
  // Q * sign(diag(R)) normalises Householder QR to.
  auto col = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(i * n + j)]; };
  for (int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += col(i, k) * col(i, j);
        for (int64_t i = 0; i < m; ++i) col(i, j) -= dot * col(i, k);
      }
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += col(i, j) * col(i, j);
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) col(i, j) /= norm;
  }
  Tensor q = tensor<double>(a, {m, n});
  if (transposed) q = q.t();
  t.copy_((q.contiguous() * gain).view(t.sizes()));
  return t;
}

}  // namespace ember::nn::init

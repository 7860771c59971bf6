// Tensor methods for the pointwise math of src/ops/math.cpp and a few
// existing ops that lacked one; each forwards to the free function. The `_`
// forms compute out of place and write into self, refusing (like PyTorch) a
// result dtype self can't hold or a broadcast that would grow self.
#include "ember/ember.h"
#include "ember/ops/elementwise.h"
#include "ops/grad_utils.h"
#include "ops/op_util.h"

namespace ember {
namespace {
// Under autograd the op runs out of place on self's old value (kept for the
// backward) and self takes over the result's history.
template <typename F>
Tensor& assign(Tensor& self, const char* op, F compute, const Tensor* other = nullptr) {
  Tensor result = [&] {
    if (other ? any_requires_grad({&self, other}) : any_requires_grad({&self})) {
      std::string label = fmt::format("{}_", op);
      return inplace_with_grad(self, label.c_str(), compute);
    }
    return compute(self);
  }();
  if (result.impl() == self.impl()) return self;
  EMBER_CHECK_TYPE(can_cast(result.dtype(), self.dtype()),
                   "{}_: result type {} can't be cast to the desired output type {}", op, to_string(result.dtype()),
                   to_string(self.dtype()));
  EMBER_CHECK(result.sizes().equals(self.sizes()), "{}_: output with shape {} doesn't match the broadcast shape {}", op,
              shape_str(self.sizes()), shape_str(result.sizes()));
  return self.copy_(result);
}
}  // namespace

Tensor Tensor::tan() const { return ember::tan(*this); }
Tensor Tensor::asin() const { return ember::asin(*this); }
Tensor Tensor::acos() const { return ember::acos(*this); }
Tensor Tensor::atan() const { return ember::atan(*this); }
Tensor Tensor::sinh() const { return ember::sinh(*this); }
Tensor Tensor::cosh() const { return ember::cosh(*this); }
Tensor Tensor::asinh() const { return ember::asinh(*this); }
Tensor Tensor::acosh() const { return ember::acosh(*this); }
Tensor Tensor::atanh() const { return ember::atanh(*this); }
Tensor Tensor::log2() const { return ember::log2(*this); }
Tensor Tensor::log10() const { return ember::log10(*this); }
Tensor Tensor::exp2() const { return ember::exp2(*this); }
Tensor Tensor::expm1() const { return ember::expm1(*this); }
Tensor Tensor::erfc() const { return ember::erfc(*this); }
Tensor Tensor::erfinv() const { return ember::erfinv(*this); }
Tensor Tensor::lgamma() const { return ember::lgamma(*this); }
Tensor Tensor::digamma() const { return ember::digamma(*this); }
Tensor Tensor::deg2rad() const { return ember::deg2rad(*this); }
Tensor Tensor::rad2deg() const { return ember::rad2deg(*this); }
Tensor Tensor::frac() const { return ember::frac(*this); }
Tensor Tensor::sinc() const { return ember::sinc(*this); }
Tensor Tensor::sgn() const { return ember::sgn(*this); }
Tensor Tensor::trunc() const { return ember::trunc(*this); }
Tensor& Tensor::tan_() {
  return assign(*this, "tan", [](const Tensor& t) { return ember::tan(t); });
}
Tensor& Tensor::asin_() {
  return assign(*this, "asin", [](const Tensor& t) { return ember::asin(t); });
}
Tensor& Tensor::acos_() {
  return assign(*this, "acos", [](const Tensor& t) { return ember::acos(t); });
}
Tensor& Tensor::atan_() {
  return assign(*this, "atan", [](const Tensor& t) { return ember::atan(t); });
}
Tensor& Tensor::sinh_() {
  return assign(*this, "sinh", [](const Tensor& t) { return ember::sinh(t); });
}
Tensor& Tensor::cosh_() {
  return assign(*this, "cosh", [](const Tensor& t) { return ember::cosh(t); });
}
Tensor& Tensor::asinh_() {
  return assign(*this, "asinh", [](const Tensor& t) { return ember::asinh(t); });
}
Tensor& Tensor::acosh_() {
  return assign(*this, "acosh", [](const Tensor& t) { return ember::acosh(t); });
}
Tensor& Tensor::atanh_() {
  return assign(*this, "atanh", [](const Tensor& t) { return ember::atanh(t); });
}
Tensor& Tensor::log2_() {
  return assign(*this, "log2", [](const Tensor& t) { return ember::log2(t); });
}
Tensor& Tensor::log10_() {
  return assign(*this, "log10", [](const Tensor& t) { return ember::log10(t); });
}
Tensor& Tensor::exp2_() {
  return assign(*this, "exp2", [](const Tensor& t) { return ember::exp2(t); });
}
Tensor& Tensor::expm1_() {
  return assign(*this, "expm1", [](const Tensor& t) { return ember::expm1(t); });
}
Tensor& Tensor::erfc_() {
  return assign(*this, "erfc", [](const Tensor& t) { return ember::erfc(t); });
}
Tensor& Tensor::erfinv_() {
  return assign(*this, "erfinv", [](const Tensor& t) { return ember::erfinv(t); });
}
Tensor& Tensor::lgamma_() {
  return assign(*this, "lgamma", [](const Tensor& t) { return ember::lgamma(t); });
}
Tensor& Tensor::digamma_() {
  return assign(*this, "digamma", [](const Tensor& t) { return ember::digamma(t); });
}
Tensor& Tensor::deg2rad_() {
  return assign(*this, "deg2rad", [](const Tensor& t) { return ember::deg2rad(t); });
}
Tensor& Tensor::rad2deg_() {
  return assign(*this, "rad2deg", [](const Tensor& t) { return ember::rad2deg(t); });
}
Tensor& Tensor::frac_() {
  return assign(*this, "frac", [](const Tensor& t) { return ember::frac(t); });
}
Tensor& Tensor::sinc_() {
  return assign(*this, "sinc", [](const Tensor& t) { return ember::sinc(t); });
}
Tensor& Tensor::sgn_() {
  return assign(*this, "sgn", [](const Tensor& t) { return ember::sgn(t); });
}
Tensor& Tensor::trunc_() {
  return assign(*this, "trunc", [](const Tensor& t) { return ember::trunc(t); });
}
Tensor Tensor::atan2(const Tensor& o) const { return ember::atan2(*this, o); }
Tensor Tensor::hypot(const Tensor& o) const { return ember::hypot(*this, o); }
Tensor Tensor::copysign(const Tensor& o) const { return ember::copysign(*this, o); }
Tensor Tensor::nextafter(const Tensor& o) const { return ember::nextafter(*this, o); }
Tensor Tensor::xlogy(const Tensor& o) const { return ember::xlogy(*this, o); }
Tensor Tensor::logaddexp(const Tensor& o) const { return ember::logaddexp(*this, o); }
Tensor Tensor::logaddexp2(const Tensor& o) const { return ember::logaddexp2(*this, o); }
Tensor Tensor::fmax(const Tensor& o) const { return ember::fmax(*this, o); }
Tensor Tensor::fmin(const Tensor& o) const { return ember::fmin(*this, o); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::bitwise_left_shift(const Tensor& o) const { return ember::bitwise_left_shift(*this, o); }
Tensor Tensor::bitwise_right_shift(const Tensor& o) const { return ember::bitwise_right_shift(*this, o); }
Tensor& Tensor::atan2_(const Tensor& o) {
  return assign(
      *this, "atan2", [&](const Tensor& t) { return ember::atan2(t, o); }, &o);
}
Tensor& Tensor::hypot_(const Tensor& o) {
  return assign(
      *this, "hypot", [&](const Tensor& t) { return ember::hypot(t, o); }, &o);
}
Tensor& Tensor::copysign_(const Tensor& o) {
  return assign(
      *this, "copysign", [&](const Tensor& t) { return ember::copysign(t, o); }, &o);
}
Tensor& Tensor::nextafter_(const Tensor& o) {
  return assign(
      *this, "nextafter", [&](const Tensor& t) { return ember::nextafter(t, o); }, &o);
}
Tensor& Tensor::xlogy_(const Tensor& o) {
  return assign(
      *this, "xlogy", [&](const Tensor& t) { return ember::xlogy(t, o); }, &o);
}
Tensor& Tensor::bitwise_left_shift_(const Tensor& o) {
  return assign(
      *this, "bitwise_left_shift", [&](const Tensor& t) { return ember::bitwise_left_shift(t, o); }, &o);
}
Tensor& Tensor::bitwise_right_shift_(const Tensor& o) {
  return assign(
      *this, "bitwise_right_shift", [&](const Tensor& t) { return ember::bitwise_right_shift(t, o); }, &o);
}
Tensor Tensor::signbit() const { return ember::signbit(*this); }
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor& Tensor::logit_(std::optional<double> eps) {
  return assign(*this, "logit", [&](const Tensor& t) { return ember::logit(t, eps); });
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return ember::nan_to_num(*this, nan, posinf, neginf);
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  return assign(*this, "nan_to_num", [&](const Tensor& t) { return ember::nan_to_num(t, nan, posinf, neginf); });
}
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor Tensor::fmod(const Scalar& o) const { return ember::fmod(*this, o); }
Tensor& Tensor::fmod_(const Tensor& o) {
  return assign(
      *this, "fmod", [&](const Tensor& t) { return ember::fmod(t, o); }, &o);
}
Tensor& Tensor::fmod_(const Scalar& o) {
  return assign(*this, "fmod", [&](const Tensor& t) { return ember::fmod(t, o); });
}
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return ember::remainder(*this, o); }
Tensor Tensor::float_power(const Tensor& e) const { return ember::float_power(*this, e); }
Tensor Tensor::float_power(const Scalar& e) const { return ember::float_power(*this, e); }
Tensor& Tensor::float_power_(const Tensor& e) {
  return assign(
      *this, "float_power", [&](const Tensor& t) { return ember::float_power(t, e); }, &e);
}
Tensor& Tensor::float_power_(const Scalar& e) {
  return assign(*this, "float_power", [&](const Tensor& t) { return ember::float_power(t, e); });
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> rounding_mode) const {
  return ember::div(*this, o, rounding_mode);
}
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> rounding_mode) {
  return assign(
      *this, "div", [&](const Tensor& t) { return ember::div(t, o, rounding_mode); }, &o);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return assign(*this, "clamp", [&](const Tensor& t) { return ember::clamp(t, min, max); });
}
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isposinf() const { return ember::isposinf(*this); }
Tensor Tensor::isneginf() const { return ember::isneginf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }
Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::isclose(*this, o, rtol, atol, equal_nan);
}

// ---- the rest of PyTorch's methods over OPS.md's ops ----
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcdiv(*this, t1, t2, value);
}
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return ember::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return ember::lerp(*this, end, weight); }
Tensor Tensor::floor_divide(const Tensor& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::floor_divide(const Scalar& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ember::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return ember::bitwise_not(*this); }
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return ember::ne(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return ember::le(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return ember::ge(*this, o); }
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::allclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& o) const { return ember::equal(*this, o); }
Tensor Tensor::broadcast_to(IntArrayRef sizes) const { return ember::broadcast_to(*this, sizes); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return ember::where(condition, *this, other);
}
Tensor Tensor::where(const Tensor& condition, const Scalar& other) const {
  return ember::where(condition, *this, other);
}
Tensor Tensor::prelu(const Tensor& weight) const { return ember::prelu(*this, weight); }
Tensor Tensor::hardshrink(double lambd) const { return ember::hardshrink(*this, lambd); }

#define EMBER_UNARY_INPLACE(name)                                                     \
  Tensor& Tensor::name##_() {                                                         \
    return assign(*this, #name, [](const Tensor& t) { return ember::name(t); }); \
  }
EMBER_UNARY_INPLACE(ceil)
EMBER_UNARY_INPLACE(floor)
EMBER_UNARY_INPLACE(round)
EMBER_UNARY_INPLACE(sin)
EMBER_UNARY_INPLACE(cos)
EMBER_UNARY_INPLACE(erf)
EMBER_UNARY_INPLACE(log1p)
EMBER_UNARY_INPLACE(rsqrt)
EMBER_UNARY_INPLACE(reciprocal)
EMBER_UNARY_INPLACE(sign)
EMBER_UNARY_INPLACE(square)
EMBER_UNARY_INPLACE(bitwise_not)
EMBER_UNARY_INPLACE(logical_not)
#undef EMBER_UNARY_INPLACE

Tensor& Tensor::round_(int64_t decimals) {
  return assign(*this, "round", [&](const Tensor& t) { return ember::round(t, decimals); });
}

#define EMBER_BINARY_INPLACE(name, Other)                                                         \
  Tensor& Tensor::name##_(const Other& o) {                                                       \
    return assign(*this, #name, [&](const Tensor& t) { return ember::name(t, o); }, other_of(o)); \
  }
namespace {
const Tensor* other_of(const Tensor& o) { return &o; }
const Tensor* other_of(const Scalar&) { return nullptr; }
}  // namespace
EMBER_BINARY_INPLACE(floor_divide, Tensor)
EMBER_BINARY_INPLACE(floor_divide, Scalar)
EMBER_BINARY_INPLACE(remainder, Tensor)
EMBER_BINARY_INPLACE(remainder, Scalar)
EMBER_BINARY_INPLACE(bitwise_and, Tensor)
EMBER_BINARY_INPLACE(bitwise_or, Tensor)
EMBER_BINARY_INPLACE(bitwise_xor, Tensor)
EMBER_BINARY_INPLACE(logical_and, Tensor)
EMBER_BINARY_INPLACE(logical_or, Tensor)
EMBER_BINARY_INPLACE(logical_xor, Tensor)
EMBER_BINARY_INPLACE(eq, Tensor)
EMBER_BINARY_INPLACE(eq, Scalar)
EMBER_BINARY_INPLACE(ne, Tensor)
EMBER_BINARY_INPLACE(ne, Scalar)
EMBER_BINARY_INPLACE(lt, Tensor)
EMBER_BINARY_INPLACE(lt, Scalar)
EMBER_BINARY_INPLACE(le, Tensor)
EMBER_BINARY_INPLACE(le, Scalar)
EMBER_BINARY_INPLACE(gt, Tensor)
EMBER_BINARY_INPLACE(gt, Scalar)
EMBER_BINARY_INPLACE(ge, Tensor)
EMBER_BINARY_INPLACE(ge, Scalar)
#undef EMBER_BINARY_INPLACE

// ---- in-place views: self's impl takes the view's geometry ----
namespace {
Tensor& restride(Tensor& self, const char* op, const Tensor& view) {
  EMBER_CHECK(!(GradMode::is_enabled() && self.requires_grad()),
              "{}_: in-place view ops are not supported on a tensor that requires grad; use {} (a view) instead", op,
              op);
  self.impl()->set_sizes_and_strides(DimVector(view.sizes().begin(), view.sizes().end()),
                                     DimVector(view.strides().begin(), view.strides().end()), view.storage_offset());
  return self;
}
}  // namespace
Tensor& Tensor::squeeze_() { return restride(*this, "squeeze", squeeze()); }
Tensor& Tensor::squeeze_(int64_t dim) { return restride(*this, "squeeze", squeeze(dim)); }
Tensor& Tensor::unsqueeze_(int64_t dim) { return restride(*this, "unsqueeze", unsqueeze(dim)); }
Tensor& Tensor::transpose_(int64_t dim0, int64_t dim1) { return restride(*this, "transpose", transpose(dim0, dim1)); }
Tensor& Tensor::swapdims_(int64_t dim0, int64_t dim1) { return restride(*this, "swapdims", swapdims(dim0, dim1)); }
Tensor& Tensor::t_() { return restride(*this, "t", t()); }

}  // namespace ember

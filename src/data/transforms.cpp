// Image transforms as plain loops over contiguous [planes, H, W] memory: a
// 28x28 sample is far too small for op dispatch to pay, and the loops are
// the reference (each is checked against torchvision or a closed form).
#include "ember/data/transforms.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "ember/ops/factory.h"

namespace ember::data {

Tensor Transform::operator()(const Tensor& x) const {
  SampleGenerator gen(0, 0, 0);
  return apply(x, gen);
}

namespace transforms {

namespace {

void check_image(const Tensor& x, const std::string& name) {
  EMBER_CHECK(x.defined() && x.dim() >= 2,
              "{}: expected an image tensor [..., H, W], got {}", name,
              x.defined() ? fmt::format("Tensor[{}]", fmt::join(x.sizes(), ", ")) : "undefined");
  EMBER_CHECK(x.dtype() == kFloat32 || x.dtype() == kUInt8,
              "{}: expected a float32 or uint8 image, got dtype {}; convert with .to(kFloat32)",
              name, to_string(x.dtype()));
}

struct Planes {
  int64_t planes, h, w;
};
Planes planes_of(const Tensor& x) {
  int64_t h = x.size(-2), w = x.size(-1);
  return {h * w == 0 ? 0 : x.numel() / (h * w), h, w};
}

// Calls f(T{}) with T the image's element type (float or uint8_t).
template <typename F>
auto dispatch(const Tensor& x, F&& f) {
  if (x.dtype() == kFloat32) return f(float{});
  return f(uint8_t{});
}

template <typename T>
T cast_fill(double v) {
  if constexpr (std::is_same_v<T, uint8_t>) return static_cast<T>(std::clamp(std::nearbyint(v), 0.0, 255.0));
  else return static_cast<T>(v);
}

// Same leading dims as x, last two replaced by (h, w).
std::vector<int64_t> with_hw(const Tensor& x, int64_t h, int64_t w) {
  std::vector<int64_t> s = x.sizes().vec();
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

}  // namespace

Tensor crop(const Tensor& x_in, int64_t top, int64_t left, int64_t height, int64_t width,
            double fill) {
  check_image(x_in, "crop");
  EMBER_CHECK(height >= 0 && width >= 0, "crop: size must be non-negative, got ({}, {})", height,
              width);
  Tensor x = x_in.contiguous();
  Planes p = planes_of(x);
  Tensor out = empty(with_hw(x, height, width), x.dtype());
  dispatch(x, [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    const T f = cast_fill<T>(fill);
    // Columns of the output that read inside the image.
    int64_t c0 = std::clamp<int64_t>(-left, 0, width), c1 = std::clamp<int64_t>(p.w - left, 0, width);
    c1 = std::max(c0, c1);
    for (int64_t pl = 0; pl < p.planes; ++pl) {
      for (int64_t r = 0; r < height; ++r) {
        T* row = dst + (pl * height + r) * width;
        int64_t sr = top + r;
        if (sr < 0 || sr >= p.h || c0 == c1) {
          std::fill(row, row + width, f);
          continue;
        }
        std::fill(row, row + c0, f);
        std::memcpy(row + c0, src + (pl * p.h + sr) * p.w + left + c0,
                    static_cast<size_t>(c1 - c0) * sizeof(T));
        std::fill(row + c1, row + width, f);
      }
    }
  });
  return out;
}

Tensor rotate(const Tensor& x_in, double angle_degrees, double fill) {
  check_image(x_in, "rotate");
  Tensor x = x_in.contiguous();
  Planes p = planes_of(x);
  Tensor out = empty(x.sizes(), x.dtype());
  const double a = angle_degrees * std::numbers::pi / 180.0;
  const double ca = std::cos(a), sa = std::sin(a);
  dispatch(x, [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    const T f = cast_fill<T>(fill);
    // Pixel centres relative to the image centre, y down; output (x, y)
    // reads the source at R(a) (x, y), which turns the picture
    // counter-clockwise; nearest with ties to even, like grid_sample.
    for (int64_t r = 0; r < p.h; ++r) {
      const double y = static_cast<double>(r) + 0.5 - static_cast<double>(p.h) * 0.5;
      for (int64_t c = 0; c < p.w; ++c) {
        const double xc = static_cast<double>(c) + 0.5 - static_cast<double>(p.w) * 0.5;
        const double sx = ca * xc - sa * y + static_cast<double>(p.w) * 0.5 - 0.5;
        const double sy = sa * xc + ca * y + static_cast<double>(p.h) * 0.5 - 0.5;
        const auto ix = static_cast<int64_t>(std::nearbyint(sx));
        const auto iy = static_cast<int64_t>(std::nearbyint(sy));
        const bool inside = ix >= 0 && ix < p.w && iy >= 0 && iy < p.h;
        for (int64_t pl = 0; pl < p.planes; ++pl)
          dst[(pl * p.h + r) * p.w + c] = inside ? src[(pl * p.h + iy) * p.w + ix] : f;
      }
    }
  });
  return out;
}

Compose::Compose(std::vector<TransformPtr> transforms) : transforms_(std::move(transforms)) {
  for (size_t i = 0; i < transforms_.size(); ++i)
    EMBER_CHECK(transforms_[i], "Compose: transform {} is null", i);
}

Tensor Compose::apply(const Tensor& x, SampleGenerator& gen) const {
  Tensor y = x;
  for (const auto& t : transforms_) y = t->apply(y, gen);
  return y;
}

Tensor ToTensor::apply(const Tensor& x_in, SampleGenerator&) const {
  EMBER_CHECK(x_in.defined() && (x_in.dim() == 2 || x_in.dim() == 3) && x_in.dtype() == kUInt8,
              "ToTensor: expected a uint8 image [H, W, C] or [H, W], got {}",
              x_in.defined() ? fmt::format("Tensor[{}] {}", fmt::join(x_in.sizes(), ", "),
                                           to_string(x_in.dtype()))
                             : "undefined");
  Tensor x = x_in.contiguous();
  const int64_t h = x.size(0), w = x.size(1), c = x.dim() == 3 ? x.size(2) : 1;
  Tensor out = empty({c, h, w}, kFloat32);
  const uint8_t* src = x.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  // HWC -> CHW with the 1/255 scale of torchvision (division, not a
  // multiply by the rounded reciprocal, so values match bit for bit).
  for (int64_t i = 0; i < h * w; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      dst[ch * h * w + i] = static_cast<float>(src[i * c + ch]) / 255.0f;
  return out;
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std)
    : mean_(std::move(mean)), std_(std::move(std)) {
  EMBER_CHECK(!mean_.empty() && mean_.size() == std_.size(),
              "Normalize: expected mean and std of the same non-zero length, got {} and {}",
              mean_.size(), std_.size());
  for (double s : std_)
    EMBER_CHECK(s != 0, "Normalize: std evaluated to zero after conversion, leading to division "
                "by zero (std = [{}])", fmt::join(std_, ", "));
}

Tensor Normalize::apply(const Tensor& x_in, SampleGenerator&) const {
  EMBER_CHECK(x_in.defined() && x_in.dim() >= 2 && x_in.dtype() == kFloat32,
              "Normalize: expected a float32 image [C, H, W], got {}; apply ToTensor first",
              x_in.defined() ? fmt::format("Tensor[{}] {}", fmt::join(x_in.sizes(), ", "),
                                           to_string(x_in.dtype()))
                             : "undefined");
  Tensor x = x_in.contiguous();
  const int64_t c = x.dim() >= 3 ? x.size(-3) : 1;
  EMBER_CHECK(mean_.size() == 1 || static_cast<int64_t>(mean_.size()) == c,
              "Normalize: {} means for an image with {} channels; give one per channel or one "
              "for all", mean_.size(), c);
  const int64_t plane = x.size(-2) * x.size(-1);
  Tensor out = empty(x.sizes(), kFloat32);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const int64_t planes = plane == 0 ? 0 : x.numel() / plane;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const size_t ch = mean_.size() == 1 ? 0 : static_cast<size_t>(pl % c);
    const auto m = static_cast<float>(mean_[ch]), s = static_cast<float>(std_[ch]);
    // (x - m) / s in float32, as torchvision computes it.
    for (int64_t i = 0; i < plane; ++i) dst[pl * plane + i] = (src[pl * plane + i] - m) / s;
  }
  return out;
}

RandomCrop::RandomCrop(std::pair<int64_t, int64_t> size, int64_t padding, double fill)
    : h_(size.first), w_(size.second), padding_(padding), fill_(fill) {
  EMBER_CHECK(h_ > 0 && w_ > 0 && padding >= 0,
              "RandomCrop: expected a positive size and non-negative padding, got size ({}, {}) "
              "padding {}", h_, w_, padding);
}

std::pair<int64_t, int64_t> RandomCrop::get_params(int64_t height, int64_t width,
                                                   SampleGenerator& gen) const {
  EMBER_CHECK(height >= h_ && width >= w_,
              "RandomCrop: required crop size ({}, {}) is larger than the (padded) input image "
              "size ({}, {}); add padding", h_, w_, height, width);
  int64_t top = gen.randint(0, height - h_ + 1);
  int64_t left = gen.randint(0, width - w_ + 1);
  return {top, left};
}

Tensor RandomCrop::apply(const Tensor& x, SampleGenerator& gen) const {
  check_image(x, "RandomCrop");
  auto [top, left] = get_params(x.size(-2) + 2 * padding_, x.size(-1) + 2 * padding_, gen);
  return crop(x, top - padding_, left - padding_, h_, w_, fill_);
}

CenterCrop::CenterCrop(std::pair<int64_t, int64_t> size) : h_(size.first), w_(size.second) {
  EMBER_CHECK(h_ > 0 && w_ > 0, "CenterCrop: expected a positive size, got ({}, {})", h_, w_);
}

Tensor CenterCrop::apply(const Tensor& x, SampleGenerator&) const {
  check_image(x, "CenterCrop");
  const int64_t h = x.size(-2), w = x.size(-1);
  // torchvision pads a small image by ((crop - size) // 2) before and the
  // rest after, then takes round((size - crop) / 2) of the padded image.
  auto offset = [](int64_t size, int64_t crop_size) {
    if (crop_size > size) return -((crop_size - size) / 2);
    return static_cast<int64_t>(std::nearbyint(static_cast<double>(size - crop_size) / 2.0));
  };
  return crop(x, offset(h, h_), offset(w, w_), h_, w_, 0);
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  EMBER_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: p must be in [0, 1], got {}", p);
}

Tensor RandomHorizontalFlip::apply(const Tensor& x_in, SampleGenerator& gen) const {
  check_image(x_in, "RandomHorizontalFlip");
  if (!gen.bernoulli(p_)) return x_in;
  Tensor x = x_in.contiguous();
  Planes p = planes_of(x);
  Tensor out = empty(x.sizes(), x.dtype());
  dispatch(x, [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    for (int64_t r = 0; r < p.planes * p.h; ++r)
      std::reverse_copy(src + r * p.w, src + (r + 1) * p.w, dst + r * p.w);
  });
  return out;
}

RandomRotation::RandomRotation(double degrees, double fill)
    : RandomRotation({-degrees, degrees}, fill) {
  EMBER_CHECK(degrees >= 0, "RandomRotation: if degrees is a single number, it must be "
              "positive, got {}", degrees);
}

RandomRotation::RandomRotation(std::pair<double, double> degrees, double fill)
    : min_(degrees.first), max_(degrees.second), fill_(fill) {
  EMBER_CHECK(min_ <= max_, "RandomRotation: expected degrees (min, max) with min <= max, got "
              "({}, {})", min_, max_);
}

Tensor RandomRotation::apply(const Tensor& x, SampleGenerator& gen) const {
  return rotate(x, gen.uniform(min_, max_), fill_);
}

RandomErasing::RandomErasing(double p, std::pair<double, double> scale,
                             std::pair<double, double> ratio, double value)
    : p_(p), scale_(scale), ratio_(ratio), value_(value) {
  EMBER_CHECK(p >= 0 && p <= 1, "RandomErasing: p must be in [0, 1], got {}", p);
  EMBER_CHECK(scale.first <= scale.second && ratio.first <= ratio.second && scale.first >= 0 &&
                  ratio.first > 0,
              "RandomErasing: expected scale and ratio as (min, max) with min <= max (ratio > 0), "
              "got scale ({}, {}) ratio ({}, {})", scale.first, scale.second, ratio.first,
              ratio.second);
}

RandomErasing::Box RandomErasing::get_params(int64_t height, int64_t width,
                                            SampleGenerator& gen) const {
  const double area = static_cast<double>(height * width);
  const double lr0 = std::log(ratio_.first), lr1 = std::log(ratio_.second);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * gen.uniform(scale_.first, scale_.second);
    const double aspect = std::exp(gen.uniform(lr0, lr1));
    const auto h = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area * aspect)));
    const auto w = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area / aspect)));
    if (!(h < height && w < width)) continue;
    const int64_t top = gen.randint(0, height - h + 1);
    const int64_t left = gen.randint(0, width - w + 1);
    return {top, left, h, w};
  }
  return {};
}

Tensor RandomErasing::apply(const Tensor& x_in, SampleGenerator& gen) const {
  check_image(x_in, "RandomErasing");
  if (!gen.bernoulli(p_)) return x_in;
  Box b = get_params(x_in.size(-2), x_in.size(-1), gen);
  if (b.height == 0 || b.width == 0) return x_in;
  Tensor out = x_in.contiguous().clone();
  Planes p = planes_of(out);
  dispatch(out, [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data_ptr<T>();
    const T v = cast_fill<T>(value_);
    for (int64_t pl = 0; pl < p.planes; ++pl)
      for (int64_t r = b.top; r < b.top + b.height; ++r) {
        T* row = dst + (pl * p.h + r) * p.w + b.left;
        std::fill(row, row + b.width, v);
      }
  });
  return out;
}

Resize::Resize(std::pair<int64_t, int64_t> size) : h_(size.first), w_(size.second) {
  EMBER_CHECK(h_ > 0 && w_ > 0, "Resize: expected a positive size, got ({}, {})", h_, w_);
}

Tensor Resize::apply(const Tensor& x_in, SampleGenerator&) const {
  check_image(x_in, "Resize");
  EMBER_CHECK(x_in.dtype() == kFloat32, "Resize: expected a float32 image, got {}; apply "
              "ToTensor first", to_string(x_in.dtype()));
  Tensor x = x_in.contiguous();
  Planes p = planes_of(x);
  Tensor out = empty(with_hw(x, h_, w_), kFloat32);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  // PyTorch's upsample_bilinear2d source index: (dst + 0.5) * scale - 0.5,
  // clamped at 0; the right/bottom neighbour clamps at the edge.
  auto source = [](int64_t d, int64_t in, int64_t outn, int64_t& i0, int64_t& i1, float& l) {
    const float scale = static_cast<float>(in) / static_cast<float>(outn);
    float s = std::max((static_cast<float>(d) + 0.5f) * scale - 0.5f, 0.0f);
    i0 = static_cast<int64_t>(s);
    i1 = i0 < in - 1 ? i0 + 1 : i0;
    l = s - static_cast<float>(i0);
  };
  for (int64_t r = 0; r < h_; ++r) {
    int64_t y0, y1;
    float ly;
    source(r, p.h, h_, y0, y1, ly);
    for (int64_t c = 0; c < w_; ++c) {
      int64_t x0, x1;
      float lx;
      source(c, p.w, w_, x0, x1, lx);
      for (int64_t pl = 0; pl < p.planes; ++pl) {
        const float* s = src + pl * p.h * p.w;
        dst[(pl * h_ + r) * w_ + c] =
            (1 - ly) * ((1 - lx) * s[y0 * p.w + x0] + lx * s[y0 * p.w + x1]) +
            ly * ((1 - lx) * s[y1 * p.w + x0] + lx * s[y1 * p.w + x1]);
      }
    }
  }
  return out;
}

}  // namespace transforms

TransformedDataset::TransformedDataset(DatasetPtr dataset, TransformPtr transform, uint64_t seed,
                                       size_t element)
    : dataset_(std::move(dataset)), transform_(std::move(transform)), seed_(seed),
      element_(element) {
  EMBER_CHECK(dataset_ && transform_, "TransformedDataset: the dataset and transform must not be "
              "null");
}

void TransformedDataset::set_epoch(int64_t epoch) {
  epoch_ = epoch;
  dataset_->set_epoch(epoch);
}

Sample TransformedDataset::get(int64_t index) const {
  Sample s = dataset_->get(index);
  SampleGenerator gen(seed_, epoch_, index);
  if (s.is_tensor()) return Sample(transform_->apply(s.tensor(), gen));
  EMBER_CHECK(s.is_tuple() && element_ < s.size() && s[element_].is_tensor(),
              "TransformedDataset: cannot apply {} to element {} of sample {} ({}); expected a "
              "tensor or a tuple with a tensor there",
              transform_->name(), element_, index, s.describe());
  s[element_] = Sample(transform_->apply(s[element_].tensor(), gen));
  return s;
}

}  // namespace ember::data

// Tensor factories: allocation, filling and ranges.
#include "ember/ops/factory.h"

#include <cmath>
#include <cstring>

#include "ember/ops/elementwise.h"
#include "ember/ops/view.h"
#include "kernels/dispatch.h"

namespace ember {

Tensor empty(IntArrayRef sizes, TensorOptions opts) {
  if (!opts.device_.is_cpu()) check_device_available(opts.device_);
  // Sizes, strides, the checked byte count and the storage in one pass
  // (Note [size checks]).
  Tensor t(make_intrusive<TensorImpl>(opts.dtype_or(kDefaultFloat), sizes, opts.device_));
  if (opts.requires_grad_) t.requires_grad_();
  return t;
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts) {
  EMBER_CHECK(sizes.size() == strides.size(),
              "empty_strided: sizes has {} dims but strides has {}", sizes.size(), strides.size());
  ScalarType dt = opts.dtype_or(kDefaultFloat);
  const size_t nbytes = compute_strided_nbytes(sizes, strides, 0, dt, "empty_strided");
  Tensor base = empty({static_cast<int64_t>(nbytes / element_size(dt))}, opts);
  return as_strided(base, sizes, strides, 0);
}

Tensor zeros(IntArrayRef sizes, TensorOptions opts) {
  Tensor t = empty(sizes, opts);
  std::memset(t.data_ptr(), 0, t.nbytes());
  return t;
}

Tensor ones(IntArrayRef sizes, TensorOptions opts) {
  if (!opts.dtype_) opts.dtype_ = kDefaultFloat;
  return full(sizes, 1, opts);
}

Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts) {
  if (!opts.dtype_) opts.dtype_ = value.default_dtype();
  Tensor t = empty(sizes, opts);
  t.fill_(value);
  return t;
}

static TensorOptions like(const Tensor& t, TensorOptions opts) {
  if (!opts.dtype_) opts.dtype_ = t.dtype();
  return opts;
}
Tensor empty_like(const Tensor& t, TensorOptions opts) { return empty(t.sizes(), like(t, opts)); }
Tensor zeros_like(const Tensor& t, TensorOptions opts) { return zeros(t.sizes(), like(t, opts)); }
Tensor ones_like(const Tensor& t, TensorOptions opts) { return ones(t.sizes(), like(t, opts)); }
Tensor full_like(const Tensor& t, const Scalar& v, TensorOptions opts) {
  return full(t.sizes(), v, like(t, opts));
}
Tensor rand_like(const Tensor& t, Generator* gen) { return rand(t.sizes(), t.dtype(), gen); }
Tensor randn_like(const Tensor& t, Generator* gen) { return randn(t.sizes(), t.dtype(), gen); }

Tensor scalar_tensor(const Scalar& value, TensorOptions opts) { return full({}, value, opts); }

Tensor arange(const Scalar& end, TensorOptions opts) { return arange(0, end, 1, opts); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts) {
  bool all_int = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  ScalarType dt = opts.dtype_or(all_int ? kInt64 : kDefaultFloat);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, "arange: step must be nonzero");
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "arange: upper bound and larger bound inconsistent with step sign (start={}, end={}, "
              "step={})",
              s, e, st);
  int64_t n = all_int ? (end.to_long() - start.to_long() + step.to_long() - (st > 0 ? 1 : -1)) /
                            step.to_long()
                      : static_cast<int64_t>(std::ceil((e - s) / st));
  opts.dtype_ = dt;
  Tensor t = empty({n}, opts);
  dispatch_numeric(dt, "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data_ptr<T>();
    if (all_int) {
      int64_t s0 = start.to_long(), step0 = step.to_long();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s0 + i * step0);
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + static_cast<double>(i) * st);
    }
  });
  return t;
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions opts) {
  EMBER_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got {}", steps);
  Tensor t = empty({steps}, opts);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  dispatch_numeric(t.dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data_ptr<T>();
    // Symmetric like PyTorch: the second half counts back from `end`.
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      double v = i < half ? start + step * static_cast<double>(i)
                          : end - step * static_cast<double>(steps - 1 - i);
      p[i] = static_cast<T>(v);
    }
  });
  return t;
}

Tensor eye(int64_t n, std::optional<int64_t> m, TensorOptions opts) {
  int64_t cols = m.value_or(n);
  EMBER_CHECK(n >= 0 && cols >= 0, "eye: n and m must be non-negative, got n={} m={}", n, cols);
  Tensor t = zeros({n, cols}, opts);
  dispatch_all(t.dtype(), "eye", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = static_cast<T>(1);
  });
  return t;
}

template <typename T>
Tensor tensor(const std::vector<T>& data, IntArrayRef sizes, TensorOptions opts) {
  DimVector shape = sizes.empty() ? DimVector{static_cast<int64_t>(data.size())} : DimVector(sizes);
  EMBER_CHECK(compute_numel(shape) == static_cast<int64_t>(data.size()),
              "tensor: {} values do not fill shape [{}] ({} elements)", data.size(),
              fmt::join(shape, ", "), compute_numel(shape));
  ScalarType own = scalar_type_of<T>;
  Tensor t = empty(shape, own);
  if (!data.empty()) {
    if constexpr (std::is_same_v<T, bool>) {
      bool* p = t.data_ptr<bool>();
      for (size_t i = 0; i < data.size(); ++i) p[i] = data[i];
    } else {
      std::memcpy(t.data_ptr(), data.data(), data.size() * sizeof(T));
    }
  }
  ScalarType want = opts.dtype_or(own);
  return want == own ? t : t.to(want);
}

#define EMBER_INSTANTIATE_TENSOR(ctype, name, str) \
  template Tensor tensor<ctype>(const std::vector<ctype>&, IntArrayRef, TensorOptions);
EMBER_FORALL_SCALAR_TYPES(EMBER_INSTANTIATE_TENSOR)
#undef EMBER_INSTANTIATE_TENSOR

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions opts, std::function<void(void*)> deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), opts, std::move(deleter));
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions opts,
                 std::function<void(void*)> deleter) {
  EMBER_CHECK(sizes.size() == strides.size(), "from_blob: sizes has {} dims but strides has {}",
              sizes.size(), strides.size());
  ScalarType dt = opts.dtype_or(kDefaultFloat);
  const size_t nbytes = compute_strided_nbytes(sizes, strides, 0, dt, "from_blob");
  auto storage = make_intrusive<StorageImpl>(data, nbytes, opts.device_, std::move(deleter));
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dt, DimVector(sizes), DimVector(strides), 0));
}

}  // namespace ember

// Tensor: a cheap, reference-counted handle to a TensorImpl. Copies share
// data; use clone() for a deep copy. Methods that compute are implemented by
// the ops layer (src/ops), which is linked into the same library.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor_impl.h"

namespace ember {

// What a factory makes: dtype, device, requires_grad. Converts implicitly
// from a ScalarType or a Device, like torch::TensorOptions.
struct TensorOptions {
  std::optional<ScalarType> dtype_;
  Device device_ = kCPU;
  bool requires_grad_ = false;

  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}  // NOLINT
  TensorOptions(Device d) : device_(d) {}     // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}  // NOLINT

  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  ScalarType dtype_or(ScalarType fallback) const { return dtype_.value_or(fallback); }
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }

class Generator;
class Node;
class Tensor;
using TensorList = ArrayRef<Tensor>;

// A slice of one dim for Tensor::index: Slice(start, stop, step) with None
// ends, or a single integer index.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
};
// One entry of t.index({...}) / t.index_put_({...}, v) (below Tensor).
struct TensorIndex;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata (core) ----
  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  IntArrayRef sizes() const { return checked().sizes(); }
  IntArrayRef strides() const { return checked().strides(); }
  IntArrayRef shape() const { return sizes(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return checked().dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked().numel(); }
  ScalarType dtype() const { return checked().dtype(); }
  ScalarType scalar_type() const { return dtype(); }
  Device device() const { return checked().device(); }
  bool is_contiguous() const { return checked().is_contiguous(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  int64_t storage_offset() const { return checked().storage_offset(); }
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  const Storage& storage() const { return checked().storage(); }
  uint32_t version() const { return storage()->version(); }
  void bump_version() const { storage()->bump_version(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  int64_t use_count() const { return impl_.use_count(); }

  void* data_ptr() const { return checked().data(); }
  // Typed pointer to the first element; the dtype must match T exactly.
  template <typename T>
  T* data_ptr() const;
  // The single value of a one-element tensor, converted to T.
  template <typename T>
  T item() const;
  Scalar item() const;

  // Row-major copy of the elements as T (any dtype is converted).
  template <typename T>
  std::vector<T> to_vector() const;

  std::string str() const;  // PyTorch-style repr
  std::string toString() const { return str(); }

  // ---- views: share storage ----
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor contiguous() const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor mT() const { return transpose(-2, -1); }
  Tensor permute(IntArrayRef dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  // libtorch's t.index({0, Slice(1, None), idx}): basic entries (integers,
  // slices, None, ellipsis) make a view; index tensors then index it as
  // ember::index does (a copy).
  Tensor index(std::initializer_list<TensorIndex> idx) const;
  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor diagonal(int64_t offset = 0, int64_t d0 = 0, int64_t d1 = 1) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;

  // ---- copies and conversion ----
  Tensor clone() const;
  Tensor to(ScalarType dtype, bool copy = false) const;
  Tensor to(Device device, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool copy = false) const;
  Tensor cpu() const { return to(kCPU); }
  Tensor float_() const { return to(kFloat32); }

  // ---- in-place (bump the version counter) ----
  Tensor& zero_();
  Tensor& fill_(const Scalar& v);
  Tensor& fill_(const Tensor& v);
  Tensor& copy_(const Tensor& src);
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o);
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o);
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor& div_(const Tensor& o);
  Tensor& div_(const Scalar& o);
  Tensor& pow_(const Scalar& e);
  Tensor& neg_();
  Tensor& abs_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& relu_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max);
  Tensor& masked_fill_(const Tensor& mask, const Scalar& v);
  Tensor& addcmul_(const Tensor& a, const Tensor& b, const Scalar& value = 1);
  Tensor& addcdiv_(const Tensor& a, const Tensor& b, const Scalar& value = 1);
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& uniform_(double from = 0, double to = 1, Generator* gen = nullptr);
  Tensor& normal_(double mean = 0, double std = 1, Generator* gen = nullptr);
  Tensor& bernoulli_(double p = 0.5, Generator* gen = nullptr);
  Tensor& random_(int64_t from, int64_t to, Generator* gen = nullptr);
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& v);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor& index_put_(TensorList indices, const Tensor& values, bool accumulate = false);
  // t[idx] = values (or a Scalar) with t.index's entries: the basic ones pick
  // a view of t, which is written through.
  Tensor& index_put_(std::initializer_list<TensorIndex> idx, const Tensor& values);
  Tensor& index_put_(std::initializer_list<TensorIndex> idx, const Scalar& value);
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                          bool include_self = true);
  Tensor& cumsum_(int64_t dim);
  Tensor& cumprod_(int64_t dim);
  Tensor& addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor& addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor& addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor& addbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor& baddbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1);

  // ---- elementwise ----
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(const Scalar& e) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor erf() const;
  Tensor sign() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& v) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor isnan() const;
  // More pointwise math (src/ops/tensor_methods_math.cpp); each forwards
  // to the free function, the `_` form writes the result into self.
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor exp2() const;
  Tensor expm1() const;
  Tensor erfc() const;
  Tensor erfinv() const;
  Tensor lgamma() const;
  Tensor digamma() const;
  Tensor deg2rad() const;
  Tensor rad2deg() const;
  Tensor frac() const;
  Tensor sinc() const;
  Tensor sgn() const;
  Tensor trunc() const;
  Tensor signbit() const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor round(int64_t decimals) const;
  Tensor atan2(const Tensor& o) const;
  Tensor hypot(const Tensor& o) const;
  Tensor copysign(const Tensor& o) const;
  Tensor nextafter(const Tensor& o) const;
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(const Scalar& o) const;
  Tensor remainder(const Tensor& o) const;
  Tensor remainder(const Scalar& o) const;
  Tensor xlogy(const Tensor& o) const;
  Tensor float_power(const Tensor& e) const;
  Tensor float_power(const Scalar& e) const;
  Tensor logaddexp(const Tensor& o) const;
  Tensor logaddexp2(const Tensor& o) const;
  Tensor fmax(const Tensor& o) const;
  Tensor fmin(const Tensor& o) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor bitwise_left_shift(const Tensor& o) const;
  Tensor bitwise_right_shift(const Tensor& o) const;
  Tensor div(const Tensor& o, std::optional<std::string_view> rounding_mode) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const;
  Tensor isinf() const;
  Tensor isposinf() const;
  Tensor isneginf() const;
  Tensor isfinite() const;
  Tensor isclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  Tensor& tan_();
  Tensor& asin_();
  Tensor& acos_();
  Tensor& atan_();
  Tensor& sinh_();
  Tensor& cosh_();
  Tensor& asinh_();
  Tensor& acosh_();
  Tensor& atanh_();
  Tensor& log2_();
  Tensor& log10_();
  Tensor& exp2_();
  Tensor& expm1_();
  Tensor& erfc_();
  Tensor& erfinv_();
  Tensor& lgamma_();
  Tensor& digamma_();
  Tensor& deg2rad_();
  Tensor& rad2deg_();
  Tensor& frac_();
  Tensor& sinc_();
  Tensor& sgn_();
  Tensor& trunc_();
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor& nan_to_num_(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor& atan2_(const Tensor& o);
  Tensor& hypot_(const Tensor& o);
  Tensor& copysign_(const Tensor& o);
  Tensor& nextafter_(const Tensor& o);
  Tensor& fmod_(const Tensor& o);
  Tensor& fmod_(const Scalar& o);
  Tensor& xlogy_(const Tensor& o);
  Tensor& float_power_(const Tensor& e);
  Tensor& float_power_(const Scalar& e);
  Tensor& bitwise_left_shift_(const Tensor& o);
  Tensor& bitwise_right_shift_(const Tensor& o);
  Tensor& div_(const Tensor& o, std::optional<std::string_view> rounding_mode);
  Tensor& clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max);
  // The rest of PyTorch's methods and `_` forms over the ops of
  // ../shared/OPS.md (tests/data/op_db/tensor_methods.txt lists them;
  // OpDbTable.EveryPyTorchTensorMethodExists checks this header).
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor floor_divide(const Tensor& o) const;
  Tensor floor_divide(const Scalar& o) const;
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor bitwise_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Scalar& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool equal(const Tensor& o) const;
  Tensor broadcast_to(IntArrayRef sizes) const;
  // PyTorch's x.where(condition, y): x where condition holds, else y.
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor where(const Tensor& condition, const Scalar& other) const;
  Tensor prelu(const Tensor& weight) const;
  Tensor hardshrink(double lambd = 0.5) const;
  Tensor& ceil_();
  Tensor& floor_();
  Tensor& round_();
  Tensor& round_(int64_t decimals);
  Tensor& sin_();
  Tensor& cos_();
  Tensor& erf_();
  Tensor& log1p_();
  Tensor& rsqrt_();
  Tensor& reciprocal_();
  Tensor& sign_();
  Tensor& square_();
  Tensor& floor_divide_(const Tensor& o);
  Tensor& floor_divide_(const Scalar& o);
  Tensor& remainder_(const Tensor& o);
  Tensor& remainder_(const Scalar& o);
  Tensor& bitwise_and_(const Tensor& o);
  Tensor& bitwise_or_(const Tensor& o);
  Tensor& bitwise_xor_(const Tensor& o);
  Tensor& bitwise_not_();
  Tensor& logical_and_(const Tensor& o);
  Tensor& logical_or_(const Tensor& o);
  Tensor& logical_xor_(const Tensor& o);
  Tensor& logical_not_();
  // Comparisons in place write 1 or 0 in self's dtype.
  Tensor& eq_(const Tensor& o);
  Tensor& eq_(const Scalar& o);
  Tensor& ne_(const Tensor& o);
  Tensor& ne_(const Scalar& o);
  Tensor& lt_(const Tensor& o);
  Tensor& lt_(const Scalar& o);
  Tensor& le_(const Tensor& o);
  Tensor& le_(const Scalar& o);
  Tensor& gt_(const Tensor& o);
  Tensor& gt_(const Scalar& o);
  Tensor& ge_(const Tensor& o);
  Tensor& ge_(const Scalar& o);
  // In-place views change self's shape and strides (every handle to it
  // sees them), as in PyTorch; refused on a tensor that requires grad.
  Tensor& squeeze_();
  Tensor& squeeze_(int64_t dim);
  Tensor& unsqueeze_(int64_t dim);
  Tensor& transpose_(int64_t dim0, int64_t dim1);
  Tensor& swapdims_(int64_t dim0, int64_t dim1);
  Tensor& t_();

  // ---- reductions ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1,
             bool keepdim = false) const;
  Tensor std(std::optional<std::vector<int64_t>> dims = std::nullopt, double correction = 1,
             bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor norm(double p = 2) const;
  Tensor norm(double p, IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor any() const;
  Tensor cumsum(int64_t dim) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  // more reductions and scans (issue 20)
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  std::pair<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor count_nonzero(IntArrayRef dims = {}) const;
  Tensor dist(const Tensor& other, double p = 2) const;
  Tensor median() const;
  std::pair<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::pair<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  std::pair<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor nansum(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor nanmean(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor cumprod(int64_t dim) const;
  std::pair<Tensor, Tensor> cummax(int64_t dim) const;
  std::pair<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor logcumsumexp(int64_t dim) const;
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  std::pair<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor msort() const;

  // ---- linear algebra and indexing ----
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  // more products, shapes and indexing (issue 20)
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& o) const;
  Tensor outer(const Tensor& o) const;
  Tensor inner(const Tensor& o) const;
  Tensor addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor matrix_power(int64_t n) const;
  Tensor inverse() const;
  Tensor kron(const Tensor& o) const;
  Tensor cross(const Tensor& o, std::optional<int64_t> dim = std::nullopt) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor diff(int64_t n = 1, int64_t dim = -1) const;
  Tensor trace() const;
  Tensor bincount(const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, double min = 0, double max = 0) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  Tensor swapaxes(int64_t dim0, int64_t dim1) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t dim = 0) const;
  std::vector<Tensor> hsplit(int64_t sections) const;
  std::vector<Tensor> vsplit(int64_t sections) const;
  Tensor argwhere() const;
  Tensor nonzero() const;
  Tensor take(const Tensor& index) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_put(TensorList indices, const Tensor& values, bool accumulate = false) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor select_scatter(const Tensor& src, int64_t dim, int64_t index) const;
  Tensor slice_scatter(const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                       std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  std::tuple<Tensor, Tensor, Tensor> unique(bool sorted = true, std::optional<int64_t> dim = std::nullopt) const;
  std::tuple<Tensor, Tensor, Tensor> unique_consecutive(std::optional<int64_t> dim = std::nullopt) const;
  std::vector<Tensor> hsplit(IntArrayRef indices) const;
  std::vector<Tensor> vsplit(IntArrayRef indices) const;

  // ---- autograd (implemented by autograd/) ----
  bool requires_grad() const;
  // Only leaves can change the flag; only floating-point tensors can require grad.
  Tensor& requires_grad_(bool requires_grad = true);
  bool is_leaf() const;
  // The accumulated gradient (undefined until a backward reaches this tensor).
  Tensor grad() const;
  void set_grad(const Tensor& g) const;
  // The node that produced this tensor (null for leaves).
  std::shared_ptr<Node> grad_fn() const;
  uint32_t output_nr() const;
  // Backpropagates from this tensor. `gradient` may be omitted for one-element
  // tensors; retain_graph defaults to create_graph.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // Shares storage, never requires grad.
  Tensor detach() const;
  Tensor& detach_();
  // Keeps grad() of a non-leaf after backward.
  void retain_grad() const;
  bool retains_grad() const;
  // hook(grad) runs when the gradient for this tensor is computed; a defined
  // return value replaces the gradient.
  void register_hook(std::function<Tensor(const Tensor&)> hook) const;

 private:
  // Kept tiny so it inlines into every accessor; the throw is out of line.
  const TensorImpl& checked() const {
    if (!impl_) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Operators follow PyTorch: arithmetic with broadcasting and type promotion;
// comparisons return bool tensors.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Scalar& b);

// ---- template definitions ----
template <typename T>
T* Tensor::data_ptr() const {
  EMBER_CHECK_TYPE(dtype() == scalar_type_of<T>,
                   "data_ptr<{}>: tensor has dtype {}; call .to({}) first or use data_ptr<{}>()",
                   to_string(scalar_type_of<T>), to_string(dtype()), to_string(scalar_type_of<T>),
                   to_string(dtype()));
  return static_cast<T*>(data_ptr());
}

struct TensorIndex {
  enum Kind { Integer, SliceKind, Ellipsis, None, TensorKind } kind;
  int64_t i = 0;
  Slice s;
  Tensor t;  // an index tensor (int64/int32, or a bool mask); undefined: a full slice
  TensorIndex(int64_t v) : kind(Integer), i(v) {}  // NOLINT
  TensorIndex(int v) : kind(Integer), i(v) {}      // NOLINT
  TensorIndex(Slice sl) : kind(SliceKind), s(sl) {}  // NOLINT
  TensorIndex(Tensor index) : kind(TensorKind), t(std::move(index)) {}  // NOLINT
  static TensorIndex ellipsis() { TensorIndex t(0); t.kind = Ellipsis; return t; }
  static TensorIndex none() { TensorIndex t(0); t.kind = None; return t; }
};

template <typename T>
T Tensor::item() const {
  return item().to<T>();
}

}  // namespace ember

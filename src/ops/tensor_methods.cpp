// Tensor methods and operators for views, elementwise ops and element access;
// each forwards to the free function of the same name. (Reduction, linalg
// and indexing methods live beside their ops.)
#include <cstring>

#include "ember/ember.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/view.h"
#include "kernels/dispatch.h"
#include "ops/inplace.h"
#include "ember/core/trace_hook.h"

namespace ember {

void Tensor::throw_undefined() { EMBER_ERROR("cannot use an undefined Tensor (default-constructed handle)"); }

int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "item: a Tensor with {} elements cannot be converted to Scalar", numel());
  if (TraceHook* th = trace_hook()) [[unlikely]] th->host_read(*this, "item()");
  return dispatch_all(dtype(), "item", [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  if (TraceHook* th = trace_hook()) [[unlikely]] th->host_read(*this, "to_vector()");
  Tensor c = to(scalar_type_of<T>).contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  if constexpr (std::is_same_v<T, bool>) {
    const bool* p = static_cast<const bool*>(c.data_ptr());
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else if (!out.empty()) {
    std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(T));
  }
  return out;
}
#define EMBER_INSTANTIATE_TO_VECTOR(ctype, name, str) template std::vector<ctype> Tensor::to_vector<ctype>() const;
EMBER_FORALL_SCALAR_TYPES(EMBER_INSTANTIATE_TO_VECTOR)
#undef EMBER_INSTANTIATE_TO_VECTOR

// ---- views ----
Tensor Tensor::view(IntArrayRef s) const { return ember::view(*this, s); }
Tensor Tensor::reshape(IntArrayRef s) const { return ember::reshape(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ember::transpose(*this, a, b); }
Tensor Tensor::t() const {
  EMBER_CHECK(dim() <= 2, "t: expects a tensor with <= 2 dimensions, but self is {}D", dim());
  return dim() < 2 ? *this : transpose(0, 1);
}
Tensor Tensor::permute(IntArrayRef d) const { return ember::permute(*this, d); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return ember::narrow(*this, d, s, l); }
Tensor Tensor::select(int64_t d, int64_t i) const { return ember::select(*this, d, i); }
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t st) const {
  return ember::slice(*this, d, s, e, st);
}
Tensor Tensor::expand(IntArrayRef s) const { return ember::expand(*this, s); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return ember::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return ember::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ember::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t d, IntArrayRef s) const { return ember::unflatten(*this, d, s); }
Tensor Tensor::as_strided(IntArrayRef s, IntArrayRef st, std::optional<int64_t> o) const {
  return ember::as_strided(*this, s, st, o);
}
Tensor Tensor::diagonal(int64_t offset, int64_t d0, int64_t d1) const {
  d0 = wrap_dim(d0, dim(), "diagonal");
  d1 = wrap_dim(d1, dim(), "diagonal");
  EMBER_CHECK(d0 != d1, "diagonal: dimensions cannot be identical {}, {}", d0, d1);
  int64_t len = offset >= 0 ? std::min(size(d0), size(d1) - offset) : std::min(size(d0) + offset, size(d1));
  len = std::max<int64_t>(len, 0);
  int64_t off = storage_offset() + (len > 0 ? (offset >= 0 ? offset * stride(d1) : -offset * stride(d0)) : 0);
  DimVector sz, st;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i == d0 || i == d1) continue;
    sz.push_back(size(i));
    st.push_back(stride(i));
  }
  sz.push_back(len);
  st.push_back(stride(d0) + stride(d1));
  return ember::as_strided(*this, sz, st, off);
}
Tensor Tensor::unfold(int64_t d, int64_t size_, int64_t step) const {
  d = wrap_dim(d, dim(), "unfold");
  int64_t len = dim() == 0 ? 1 : size(d);
  EMBER_CHECK(size_ <= len && size_ >= 0, "unfold: maximum size for tensor at dimension {} is {} but size is {}",
              d, len, size_);
  EMBER_CHECK(step > 0, "unfold: step is {} but must be > 0", step);
  DimVector sz(sizes()), st(strides());
  sz[d] = (len - size_) / step + 1;
  st[d] = stride(d) * step;
  sz.push_back(size_);
  st.push_back(stride(d));
  return ember::as_strided(*this, sz, st, storage_offset());
}

namespace {

bool is_mask(const Tensor& t) { return t.defined() && (t.dtype() == kBool || t.dtype() == kUInt8); }

// The view the basic entries of idx pick, and the index tensors (with
// undefined entries for the view's dims before them that they skip) that
// then apply to it. Integers select, slices slice, None inserts a dim, the
// ellipsis spans the dims no entry names, and an index tensor (a mask for
// as many dims as it has) keeps its dims for the advanced step.
std::pair<Tensor, std::vector<Tensor>> split_index(const Tensor& self, std::initializer_list<TensorIndex> idx) {
  Tensor r = self;
  int64_t d = 0, consumed = 0;
  for (const auto& i : idx) {
    if (i.kind == TensorIndex::Integer || i.kind == TensorIndex::SliceKind) ++consumed;
    if (i.kind == TensorIndex::TensorKind) consumed += is_mask(i.t) ? i.t.dim() : 1;
  }
  std::vector<Tensor> advanced;
  bool any = false;
  for (const auto& i : idx) {
    switch (i.kind) {
      case TensorIndex::Integer: r = r.select(d, i.i); break;
      case TensorIndex::SliceKind: r = r.slice(d, i.s.start, i.s.stop, i.s.step); ++d; break;
      case TensorIndex::None: r = r.unsqueeze(d); ++d; break;
      case TensorIndex::Ellipsis: d += self.dim() - consumed; break;
      case TensorIndex::TensorKind: {
        advanced.resize(static_cast<size_t>(d));
        advanced.push_back(i.t);
        any = any || i.t.defined();
        d += is_mask(i.t) ? i.t.dim() : 1;
        break;
      }
    }
  }
  if (!any) advanced.clear();
  return {r, advanced};
}

}  // namespace

Tensor Tensor::index(std::initializer_list<TensorIndex> idx) const {
  auto [view, advanced] = split_index(*this, idx);
  return advanced.empty() ? view : ember::index(view, advanced);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> idx, const Tensor& values) {
  auto [view, advanced] = split_index(*this, idx);
  // As in Python: t[basic] = v copies (casting v to t's dtype); with index
  // tensors the dtypes must match (index_put's error).
  if (advanced.empty()) view.copy_(values);
  else view.index_put_(TensorList(advanced), values);
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> idx, const Scalar& value) {
  return index_put_(idx, full({}, value, dtype()));
}

// ---- in-place ----
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { return ember::add_(*this, o, alpha); }
Tensor& Tensor::add_(const Scalar& o) { return detail::binary_inplace_op(Op::add, *this, o); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  if (!(alpha.is_integral() && alpha.to_long() == 1)) return ember::add_(*this, ember::mul(o, alpha), -1);
  return detail::binary_inplace_op(Op::sub, *this, o);
}
Tensor& Tensor::sub_(const Scalar& o) { return detail::binary_inplace_op(Op::sub, *this, o); }
Tensor& Tensor::mul_(const Tensor& o) { return detail::binary_inplace_op(Op::mul, *this, o); }
Tensor& Tensor::mul_(const Scalar& o) { return detail::binary_inplace_op(Op::mul, *this, o); }
Tensor& Tensor::div_(const Tensor& o) { return detail::binary_inplace_op(Op::div, *this, o); }
Tensor& Tensor::div_(const Scalar& o) { return detail::binary_inplace_op(Op::div, *this, o); }
Tensor& Tensor::pow_(const Scalar& e) { return detail::binary_inplace_op(Op::pow, *this, e); }
Tensor& Tensor::neg_() { return detail::unary_inplace_op(Op::neg, *this); }
Tensor& Tensor::abs_() { return detail::unary_inplace_op(Op::abs, *this); }
Tensor& Tensor::exp_() { return detail::unary_inplace_op(Op::exp, *this); }
Tensor& Tensor::log_() { return detail::unary_inplace_op(Op::log, *this); }
Tensor& Tensor::sqrt_() { return detail::unary_inplace_op(Op::sqrt, *this); }
Tensor& Tensor::relu_() { return detail::unary_inplace_op(Op::relu, *this); }
Tensor& Tensor::sigmoid_() { return detail::unary_inplace_op(Op::sigmoid, *this); }
Tensor& Tensor::tanh_() { return detail::unary_inplace_op(Op::tanh, *this); }
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  return copy_(ember::clamp(*this, min, max).to(dtype()));
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  return copy_(ember::masked_fill(*this, mask, v));
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, const Scalar& value) {
  return ember::add_(*this, ember::mul(ember::mul(a, b), value));
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, const Scalar& value) {
  return ember::add_(*this, ember::mul(ember::div(a, b), value));
}
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  return ember::add_(*this, ember::mul(ember::sub(end, *this), weight));
}

// ---- elementwise ----
Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return ember::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor Tensor::abs() const { return ember::abs(*this); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor Tensor::log() const { return ember::log(*this); }
Tensor Tensor::log1p() const { return ember::log1p(*this); }
Tensor Tensor::sqrt() const { return ember::sqrt(*this); }
Tensor Tensor::rsqrt() const { return ember::rsqrt(*this); }
Tensor Tensor::sin() const { return ember::sin(*this); }
Tensor Tensor::cos() const { return ember::cos(*this); }
Tensor Tensor::tanh() const { return ember::tanh(*this); }
Tensor Tensor::sigmoid() const { return ember::sigmoid(*this); }
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor Tensor::erf() const { return ember::erf(*this); }
Tensor Tensor::sign() const { return ember::sign(*this); }
Tensor Tensor::floor() const { return ember::floor(*this); }
Tensor Tensor::ceil() const { return ember::ceil(*this); }
Tensor Tensor::round() const { return ember::round(*this); }
Tensor Tensor::reciprocal() const { return ember::reciprocal(*this); }
Tensor Tensor::square() const { return ember::square(*this); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const { return ember::masked_fill(*this, mask, v); }
Tensor Tensor::eq(const Tensor& o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return ember::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return ember::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return ember::ge(*this, o); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }

// ---- operators ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(full_like(b, a, result_type(b, a)), b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

const char* version() { return "0.1.0"; }

}  // namespace ember

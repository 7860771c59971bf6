// TensorImpl metadata upkeep and the central size checks (Note [size checks]).
#include "ember/core/tensor_impl.h"

#include "ember/core/error.h"

namespace ember {

namespace {

// The error paths: cold and out of line, so the checking loops stay small.
// dtype null: a shape on its own (compute_numel).
[[noreturn, gnu::cold, gnu::noinline]] void throw_size_error(const char* what, IntArrayRef sizes,
                                                           const ScalarType* dtype) {
  const std::string of = dtype ? fmt::format(" of dtype {}", to_string(*dtype)) : std::string();
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, "{}: sizes must be non-negative, got shape [{}]{}", what, fmt::join(sizes, ", "), of);
  int64_t numel = 1;
  for (int64_t s : sizes)
    EMBER_CHECK(!__builtin_mul_overflow(numel, std::max<int64_t>(s, 1), &numel),
                "{}: shape [{}]{} has more elements than int64 can count (the product of the sizes overflows)",
                what, fmt::join(sizes, ", "), of);
  EMBER_ASSERT(dtype != nullptr);
  EMBER_ERROR("{}: shape [{}] of dtype {} needs {} elements x {} bytes, which overflows int64 bytes", what,
              fmt::join(sizes, ", "), to_string(*dtype), numel, element_size(*dtype));
}

// Throws for a strided layout that overflows or leaves its storage of
// `capacity` bytes (capacity < 0: no storage to check against).
[[noreturn, gnu::cold, gnu::noinline]] void throw_strided_error(const char* what, IntArrayRef sizes,
                                                              IntArrayRef strides, int64_t offset,
                                                              ScalarType dtype, int64_t capacity) {
  EMBER_CHECK(sizes.size() == strides.size(), "{}: sizes [{}] and strides [{}] differ in length", what,
              fmt::join(sizes, ", "), fmt::join(strides, ", "));
  int64_t numel = 1;
  for (int64_t s : sizes)
    if (s < 0 || __builtin_mul_overflow(numel, std::max<int64_t>(s, 1), &numel)) throw_size_error(what, sizes, &dtype);
  EMBER_CHECK(offset >= 0, "{}: storage offset {} is negative (shape [{}], strides [{}])", what, offset,
              fmt::join(sizes, ", "), fmt::join(strides, ", "));
  EMBER_ERROR("{}: sizes [{}], strides [{}] and storage offset {} of dtype {} {}", what, fmt::join(sizes, ", "),
              fmt::join(strides, ", "), offset, to_string(dtype),
              capacity < 0 ? std::string("address an element beyond int64 bytes (the extent overflows)")
                           : fmt::format("reach outside the storage of {} bytes ({} elements); a view must stay "
                                         "inside its storage",
                                         capacity, capacity / static_cast<int64_t>(element_size(dtype))));
}

// Lowest and highest element index a layout addresses, and whether a product
// or sum overflowed. Only meaningful for a non-empty layout.
struct Extent {
  int64_t lo, hi;
  bool overflow;
};

Extent layout_extent(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Extent e{offset, offset, false};
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    e.overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
    int64_t& end = strides[i] < 0 ? e.lo : e.hi;
    e.overflow |= __builtin_add_overflow(end, span, &end);
  }
  return e;
}

}  // namespace

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    // Saturates instead of wrapping (signed overflow is undefined): the size
    // checks that follow (Note [size checks]) refuse such a layout by name.
    if (__builtin_mul_overflow(s, std::max<int64_t>(sizes[i], 1), &s)) s = INT64_MAX;
  }
  return strides;
}

int64_t compute_numel(IntArrayRef sizes) {
  int64_t n = 1, any = 0;
  bool overflow = false, zero = false;
  for (int64_t s : sizes) {
    any |= s;
    zero |= s == 0;
    overflow |= __builtin_mul_overflow(n, std::max<int64_t>(s, 1), &n);
  }
  if (any < 0 || overflow) [[unlikely]]
    throw_size_error("shape", sizes, nullptr);
  return zero ? 0 : n;
}

size_t compute_nbytes(IntArrayRef sizes, ScalarType dtype, const char* what) {
  int64_t n = 1, any = 0, bytes = 0;
  bool overflow = false, zero = false;
  for (int64_t s : sizes) {
    any |= s;
    zero |= s == 0;
    overflow |= __builtin_mul_overflow(n, std::max<int64_t>(s, 1), &n);
  }
  overflow |= __builtin_mul_overflow(n, static_cast<int64_t>(element_size(dtype)), &bytes);
  if (any < 0 || overflow) [[unlikely]]
    throw_size_error(what, sizes, &dtype);
  return zero ? 0 : static_cast<size_t>(bytes);
}

size_t compute_strided_nbytes(IntArrayRef sizes, IntArrayRef strides, int64_t offset, ScalarType dtype,
                              const char* what) {
  if (sizes.size() != strides.size()) throw_strided_error(what, sizes, strides, offset, dtype, -1);
  if (compute_nbytes(sizes, dtype, what) == 0) return 0;  // negative sizes, overflow; empty
  EMBER_CHECK(offset >= 0, "{}: storage offset {} is negative (shape [{}], strides [{}])", what, offset,
              fmt::join(sizes, ", "), fmt::join(strides, ", "));
  for (int64_t st : strides)
    EMBER_CHECK(st >= 0, "{}: negative strides are not supported, got strides [{}] for shape [{}]", what,
                fmt::join(strides, ", "), fmt::join(sizes, ", "));
  Extent e = layout_extent(sizes, strides, offset);
  int64_t bytes = 0;
  bool overflow = e.overflow || __builtin_add_overflow(e.hi, 1, &e.hi) ||
                  __builtin_mul_overflow(e.hi, static_cast<int64_t>(element_size(dtype)), &bytes);
  if (overflow) throw_strided_error(what, sizes, strides, offset, dtype, -1);
  return static_cast<size_t>(bytes);
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, DimVector sizes, DimVector strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  EMBER_ASSERT(sizes_.size() == strides_.size());
  refresh();
}

// One pass fills sizes, strides and numel: this runs for every op's output.
// Overflow and negative sizes are accumulated into flags and tested once; a
// shape whose sizes (zeros counted as 1) multiply beyond int64 is refused even
// when empty, since its strides would not be representable.
TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), offset_(0), dtype_(dtype) {
  const size_t n = sizes.size();
  sizes_.resize_for_overwrite(n);
  strides_.resize_for_overwrite(n);
  int64_t* sz = sizes_.data();
  int64_t* st = strides_.data();
  int64_t stride = 1, any = 0, bytes = 0;
  bool overflow = false, zero = false;
  for (size_t i = n; i-- > 0;) {
    const int64_t s = sizes[i];
    sz[i] = s;
    st[i] = stride;
    any |= s;
    zero |= s == 0;
    overflow |= __builtin_mul_overflow(stride, std::max<int64_t>(s, 1), &stride);
  }
  numel_ = zero ? 0 : stride;
  is_contiguous_ = true;
  overflow |= __builtin_mul_overflow(numel_, static_cast<int64_t>(element_size(dtype)), &bytes);
  if (any < 0 || overflow) [[unlikely]]
    throw_size_error("tensor", sizes, &dtype);
  if (static_cast<size_t>(bytes) > storage_->nbytes()) [[unlikely]]
    throw_strided_error("tensor", sizes_, strides_, 0, dtype, static_cast<int64_t>(storage_->nbytes()));
}

TensorImpl::TensorImpl(ScalarType dtype, IntArrayRef sizes, Device device) : offset_(0), dtype_(dtype) {
  const size_t n = sizes.size();
  sizes_.resize_for_overwrite(n);
  strides_.resize_for_overwrite(n);
  int64_t* sz = sizes_.data();
  int64_t* st = strides_.data();
  int64_t stride = 1, any = 0, bytes = 0;
  bool overflow = false, zero = false;
  for (size_t i = n; i-- > 0;) {
    const int64_t s = sizes[i];
    sz[i] = s;
    st[i] = stride;
    any |= s;
    zero |= s == 0;
    overflow |= __builtin_mul_overflow(stride, std::max<int64_t>(s, 1), &stride);
  }
  numel_ = zero ? 0 : stride;
  is_contiguous_ = true;
  overflow |= __builtin_mul_overflow(numel_, static_cast<int64_t>(element_size(dtype)), &bytes);
  if (any < 0 || overflow) [[unlikely]]
    throw_size_error("empty", sizes, &dtype);
  storage_ = make_intrusive<StorageImpl>(static_cast<size_t>(bytes), device);
}

void TensorImpl::set_sizes_and_strides(DimVector sizes, DimVector strides, int64_t offset) {
  EMBER_ASSERT(sizes.size() == strides.size());
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  refresh();
}

// numel, contiguity and the storage bound of a strided layout in one pass.
void TensorImpl::refresh() {
  const int64_t* sz = sizes_.data();
  const int64_t* st = strides_.data();
  int64_t numel = 1, any = 0, lo = offset_, hi = offset_;
  bool overflow = false, extent_overflow = false, zero = false;
  // Dims of size 1 may have any stride (PyTorch's definition); otherwise a
  // row-major stride equals the product of the sizes to its right.
  bool contig = true;
  for (size_t i = sizes_.size(); i-- > 0;) {
    const int64_t s = sz[i];
    if (s != 1 && st[i] != numel) contig = false;
    any |= s;
    zero |= s == 0;
    overflow |= __builtin_mul_overflow(numel, std::max<int64_t>(s, 1), &numel);
    int64_t span = 0;
    extent_overflow |= __builtin_mul_overflow(s - 1, st[i], &span);
    int64_t& end = st[i] < 0 ? lo : hi;
    extent_overflow |= __builtin_add_overflow(end, span, &end);
  }
  numel_ = zero ? 0 : numel;
  is_contiguous_ = contig || numel_ == 0;
  if (any < 0 || overflow) [[unlikely]]
    throw_size_error("tensor", sizes_, &dtype_);
  if (zero) return;  // an empty view addresses nothing
  int64_t bytes = 0;
  extent_overflow |= __builtin_add_overflow(hi, 1, &hi);
  extent_overflow |= __builtin_mul_overflow(hi, static_cast<int64_t>(element_size(dtype_)), &bytes);
  if (extent_overflow) [[unlikely]]
    throw_strided_error("tensor", sizes_, strides_, offset_, dtype_, -1);
  if (lo < 0 || static_cast<size_t>(bytes) > storage_->nbytes()) [[unlikely]]
    throw_strided_error("tensor", sizes_, strides_, offset_, dtype_, static_cast<int64_t>(storage_->nbytes()));
}

}  // namespace ember

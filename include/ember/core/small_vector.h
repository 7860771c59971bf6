// A vector of trivially copyable values stored inline up to N elements, so
// sizes and strides of ordinary tensors never touch the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace ember {

// An element loop rather than std::equal: shapes hold a few elements, and
// std::equal becomes a memcmp call that costs more than the comparison.
template <typename T>
constexpr bool elements_equal(const T* a, const T* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t n, T v = T()) { resize(n, v); }
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(std::span<const T> s) { assign(s.data(), s.data() + s.size()); }  // NOLINT
  template <typename U, typename = decltype(std::declval<const U&>().data()),
            typename = std::enable_if_t<std::is_same_v<typename U::value_type, T>>>
  SmallVector(const U& r) { assign(r.data(), r.data() + r.size()); }  // NOLINT
  SmallVector(const std::vector<T>& v) { assign(v.data(), v.data() + v.size()); }  // NOLINT
  template <typename It>
  SmallVector(It b, It e) { assign(b, e); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector(SmallVector&& o) noexcept { *this = std::move(o); }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this == &o) return *this;
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      cap_ = o.cap_;
      size_ = o.size_;
      o.cap_ = N;
      o.size_ = 0;
    } else {
      heap_.reset();
      cap_ = N;
      size_ = o.size_;
      std::memcpy(inline_, o.inline_, sizeof(T) * o.size_);
      o.size_ = 0;
    }
    return *this;
  }

  template <typename It>
  void assign(It b, It e) {
    size_t n = static_cast<size_t>(std::distance(b, e));
    size_ = 0;
    reserve(n);
    std::copy(b, e, data());
    size_ = n;
  }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    auto mem = std::make_unique<T[]>(cap);
    std::copy(begin(), end(), mem.get());
    heap_ = std::move(mem);
    cap_ = cap;
  }
  // Sets the size to n leaving new elements unset, for callers that write
  // every element next (TensorImpl's shape and strides).
  void resize_for_overwrite(size_t n) {
    reserve(n);
    size_ = n;
  }
  void resize(size_t n, T v = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void insert(size_t pos, T v) {
    reserve(size_ + 1);
    T* d = data();
    std::memmove(d + pos + 1, d + pos, sizeof(T) * (size_ - pos));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    T* d = data();
    std::memmove(d + pos, d + pos + 1, sizeof(T) * (size_ - pos - 1));
    --size_;
  }

  operator std::span<const T>() const { return {data(), size_}; }  // NOLINT
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  // Always inlined: shape checks run on every op, and GCC kept an
  // out-of-line copy whose call cost more than comparing one or two sizes.
  [[gnu::always_inline]] friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && elements_equal(a.data(), b.data(), a.size_);
  }

 private:
  T inline_[N];  // only [0, size_) is ever read
  std::unique_ptr<T[]> heap_;
  size_t size_ = 0;
  size_t cap_ = N;
};

// Sizes and strides (in elements).
using DimVector = SmallVector<int64_t, 6>;

// A non-owning view of a list (like c10::ArrayRef): accepts a braced list
// {2, 3}, a std::vector, a SmallVector or a span. A braced list lives until
// the end of the full expression, which covers every function argument.
template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
#if !defined(__clang__)  // a GCC-only warning group (clang warns that it is unknown)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr ArrayRef(std::initializer_list<T> il) : data_(il.begin()), size_(il.size()) {}  // NOLINT
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  ArrayRef(const SmallVector<T, N>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  constexpr ArrayRef(std::span<const T> s) : data_(s.data()), size_(s.size()) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef o) const { return size_ == o.size_ && elements_equal(data_, o.data_, size_); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;

}  // namespace ember

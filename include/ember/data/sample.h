// Sample: what a Dataset returns and a collate function batches — a tensor,
// a tuple of samples, or a map from names to samples (PyTorch's nested
// tensor/tuple/dict structure, made explicit for C++).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::data {

class Sample {
 public:
  enum class Kind : uint8_t { None, Tensor, Tuple, Map };

  Sample() = default;
  Sample(ember::Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT
  // A pair, the usual (input, target) sample.
  Sample(ember::Tensor a, ember::Tensor b);
  static Sample tuple(std::vector<Sample> items);
  // Keys keep their insertion order; duplicates are an error.
  static Sample map(std::vector<std::pair<std::string, Sample>> fields);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  bool is_map() const { return kind_ == Kind::Map; }

  // The tensor of a tensor sample (error otherwise).
  const ember::Tensor& tensor() const;
  ember::Tensor& tensor();
  // Number of elements of a tuple or map.
  size_t size() const;
  // Element i of a tuple (or the i-th field of a map).
  const Sample& operator[](size_t i) const;
  Sample& operator[](size_t i);
  // Field `key` of a map.
  const Sample& at(const std::string& key) const;
  bool contains(const std::string& key) const;
  const std::vector<Sample>& items() const { return items_; }
  std::vector<Sample>& items() { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }

  // "Tensor[2, 3] float32", "(Tensor[...], Tensor[])", "{x: ..., y: ...}".
  std::string describe() const;

 private:
  Kind kind_ = Kind::None;
  ember::Tensor tensor_;
  std::vector<Sample> items_;     // tuple elements or map values
  std::vector<std::string> keys_;  // map keys, parallel to items_
};

// Structured bindings on an (input, target) batch, PyTorch's `x, y = batch`:
//   for (auto& [x, y] : loader) ...      auto [x, y] = dataset->get(0);
// Element I is the tensor of tuple item I. A sample that is not a tuple of
// two tensors raises when bound (use [i] or at(key) for other structures).
const ember::Tensor& pair_item(const Sample& s, size_t i);
template <size_t I>
const ember::Tensor& get(const Sample& s) {
  static_assert(I < 2, "a sample binds as a pair: auto [x, y] = batch");
  return pair_item(s, I);
}
template <size_t I>
ember::Tensor& get(Sample& s) {
  static_assert(I < 2, "a sample binds as a pair: auto [x, y] = batch");
  pair_item(s, I);  // checks the structure
  return s[I].tensor();
}
template <size_t I>
ember::Tensor&& get(Sample&& s) {
  return std::move(get<I>(s));
}

}  // namespace ember::data

namespace std {
template <>
struct tuple_size<ember::data::Sample> : integral_constant<size_t, 2> {};
template <size_t I>
struct tuple_element<I, ember::data::Sample> {
  using type = ember::Tensor;
};
}  // namespace std

// StateDict: an ordered name -> Tensor map (Python's OrderedDict of tensors),
// the currency of module state, optimizer state and safetensors files.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  StateDict() = default;
  StateDict(std::initializer_list<Item> items) {
    for (const Item& it : items) insert(it.first, it.second);
  }

  // Adds key at the end, or replaces its value in place (keeping its position).
  void insert(std::string key, Tensor value);
  // Removes key if present; returns whether it was.
  bool erase(std::string_view key);
  bool contains(std::string_view key) const { return index_.count(std::string(key)) != 0; }
  // Null when absent.
  const Tensor* find(std::string_view key) const;
  // Raises naming the key when absent.
  const Tensor& at(std::string_view key) const;
  const Tensor& operator[](std::string_view key) const { return at(key); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> keys() const;
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace ember

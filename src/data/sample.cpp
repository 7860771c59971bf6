// Sample: the nested tensor/tuple/map value datasets return.
#include "ember/data/sample.h"

#include <algorithm>

namespace ember::data {

Sample::Sample(ember::Tensor a, ember::Tensor b) : kind_(Kind::Tuple) {
  items_.emplace_back(std::move(a));
  items_.emplace_back(std::move(b));
}

Sample Sample::tuple(std::vector<Sample> items) {
  Sample s;
  s.kind_ = Kind::Tuple;
  s.items_ = std::move(items);
  return s;
}

Sample Sample::map(std::vector<std::pair<std::string, Sample>> fields) {
  Sample s;
  s.kind_ = Kind::Map;
  for (auto& [key, value] : fields) {
    EMBER_CHECK(std::find(s.keys_.begin(), s.keys_.end(), key) == s.keys_.end(),
                "Sample::map: duplicate key '{}'; each field name may appear once", key);
    s.keys_.push_back(key);
    s.items_.push_back(std::move(value));
  }
  return s;
}

const ember::Tensor& Sample::tensor() const {
  EMBER_CHECK(is_tensor(), "Sample::tensor: expected a tensor sample, got {}; index a tuple "
              "with [i] or a map with at(key) first", describe());
  return tensor_;
}

size_t Sample::size() const {
  EMBER_CHECK(is_tuple() || is_map(), "Sample::size: expected a tuple or map sample, got {}",
              describe());
  return items_.size();
}

ember::Tensor& Sample::tensor() {
  return const_cast<ember::Tensor&>(static_cast<const Sample&>(*this).tensor());
}

const ember::Tensor& pair_item(const Sample& s, size_t i) {
  EMBER_CHECK(s.is_tuple() && s.size() == 2 && s[0].is_tensor() && s[1].is_tensor(),
              "auto [x, y] = sample: expected a tuple of two tensors, got {}; index it with [i] or at(key)",
              s.describe());
  return s[i].tensor();
}

const Sample& Sample::operator[](size_t i) const {
  EMBER_CHECK(is_tuple() || is_map(), "Sample[{}]: expected a tuple or map sample, got {}", i,
              describe());
  EMBER_CHECK_INDEX(i < items_.size(), "Sample[{}]: index out of range for a {} of {} elements",
                    i, is_tuple() ? "tuple" : "map", items_.size());
  return items_[i];
}

Sample& Sample::operator[](size_t i) {
  return const_cast<Sample&>(static_cast<const Sample&>(*this)[i]);
}

bool Sample::contains(const std::string& key) const {
  return is_map() && std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

const Sample& Sample::at(const std::string& key) const {
  EMBER_CHECK(is_map(), "Sample::at('{}'): expected a map sample, got {}", key, describe());
  auto it = std::find(keys_.begin(), keys_.end(), key);
  EMBER_CHECK_INDEX(it != keys_.end(), "Sample::at: no field '{}'; the map has fields [{}]", key,
                    fmt::join(keys_, ", "));
  return items_[static_cast<size_t>(it - keys_.begin())];
}

std::string Sample::describe() const {
  switch (kind_) {
    case Kind::None:
      return "None";
    case Kind::Tensor:
      return fmt::format("Tensor[{}] {}", fmt::join(tensor_.sizes(), ", "),
                         to_string(tensor_.dtype()));
    case Kind::Tuple: {
      std::vector<std::string> parts;
      for (const auto& s : items_) parts.push_back(s.describe());
      return fmt::format("({})", fmt::join(parts, ", "));
    }
    case Kind::Map: {
      std::vector<std::string> parts;
      for (size_t i = 0; i < items_.size(); ++i)
        parts.push_back(fmt::format("{}: {}", keys_[i], items_[i].describe()));
      return fmt::format("{{{}}}", fmt::join(parts, ", "));
    }
  }
  return "?";
}

}  // namespace ember::data

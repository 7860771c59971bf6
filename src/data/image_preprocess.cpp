// ImagePreprocess: apply it, and its JSON form (the .ember source key
// "input_transform", docs/file-formats.md).
#include "ember/data/image_preprocess.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ember/core/error.h"
#include "ember/data/datasets/image_folder.h"
#include "ember/data/transforms.h"

namespace ember::data {

Tensor ImagePreprocess::operator()(const Tensor& image) const {
  EMBER_CHECK(image.defined() && image.dtype() == kUInt8 && (image.dim() == 2 || image.dim() == 3),
              "preprocess: expected a uint8 image [H, W] or [H, W, C], got {}",
              image.defined() ? fmt::format("[{}] {}", fmt::join(image.sizes(), ", "), to_string(image.dtype()))
                              : "undefined");
  Tensor x = image.dim() == 2 ? image.unsqueeze(-1) : image;  // IDX images are [H, W]: one channel
  EMBER_CHECK(x.size(2) == channels, "preprocess: the image has {} channels, the model takes {}", x.size(2),
              channels);
  // resize_image returns a same-size image unchanged, as ImageFolder relies on.
  if (height > 0 && width > 0) x = resize_image(x, height, width);
  x = transforms::ToTensor()(x);
  if (!mean.empty()) x = transforms::Normalize(mean, std)(x);
  return x;
}

Tensor ImagePreprocess::load(const std::string& path) const {
  return (*this)(read_image(path, channels));
}

Tensor ImagePreprocess::decode(std::span<const uint8_t> bytes, const std::string& name) const {
  return (*this)(decode_image(bytes, name, channels));
}

std::string ImagePreprocess::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = "image";
  j["channels"] = channels;
  j["size"] = {height, width};
  if (!mean.empty()) {
    j["mean"] = mean;
    j["std"] = std;
  }
  return j.dump();
}

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& problem) {
  EMBER_ERROR("{}: input_transform: {}", what, problem);
}

std::vector<double> numbers(const nlohmann::json& j, const char* key, const std::string& what) {
  if (!j.contains(key)) return {};
  if (!j[key].is_array() || j[key].empty()) bad(what, fmt::format("'{}' must be a non-empty list of numbers", key));
  std::vector<double> out;
  for (const auto& v : j[key]) {
    if (!v.is_number()) bad(what, fmt::format("'{}' must be a list of numbers, got {}", key, j[key].dump()));
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

ImagePreprocess ImagePreprocess::from_json(const std::string& text, const std::string& what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad(what, fmt::format("not a JSON object: '{}'", text));
  if (!j.contains("kind") || j["kind"] != "image")
    bad(what, fmt::format("kind {} is not supported (this Ember knows \"image\")",
                          j.contains("kind") ? j["kind"].dump() : "missing"));
  ImagePreprocess p;
  if (!j.contains("channels") || !j["channels"].is_number_integer() || j["channels"].get<int64_t>() < 1 ||
      j["channels"].get<int64_t>() > 4)
    bad(what, "'channels' must be 1, 2, 3 or 4");
  p.channels = j["channels"].get<int>();
  const auto& size = j.contains("size") ? j["size"] : nlohmann::json();
  if (!size.is_array() || size.size() != 2 || !size[0].is_number_integer() || !size[1].is_number_integer() ||
      size[0].get<int64_t>() < 0 || size[1].get<int64_t>() < 0 || (size[0] == 0) != (size[1] == 0))
    bad(what, "'size' must be [height, width] (both 0: keep the image's size)");
  p.height = size[0].get<int64_t>();
  p.width = size[1].get<int64_t>();
  p.mean = numbers(j, "mean", what);
  p.std = numbers(j, "std", what);
  if (p.mean.size() != p.std.size()) bad(what, fmt::format("{} means but {} stds", p.mean.size(), p.std.size()));
  if (!p.mean.empty() && p.mean.size() != 1 && static_cast<int>(p.mean.size()) != p.channels)
    bad(what, fmt::format("{} means for {} channels (give one, or one per channel)", p.mean.size(), p.channels));
  for (double s : p.std)
    if (!(s > 0)) bad(what, fmt::format("std {} is not positive", s));
  return p;
}

}  // namespace ember::data

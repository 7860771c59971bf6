#include "ember/train/split_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ember/io/atomic_file.h"
#include "ember/train/config.h"

namespace ember::train {

namespace {

constexpr std::uintmax_t kMaxSplitFileBytes = std::uintmax_t{1} << 30;

[[noreturn]] void split_error(const std::string& source, const std::string& what) {
  throw ConfigError(fmt::format("data.split_file '{}': {}", source, what));
}

// One list's rows, checked against the data and against rows already taken.
std::vector<int64_t> rows_of(const nlohmann::json& doc, const char* key, int64_t rows, std::vector<char>& taken,
                             const std::string& source) {
  std::vector<int64_t> out;
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return out;
  if (!it->is_array())
    split_error(source, fmt::format("\"{}\" must be a list of row indices, got {}", key, it->type_name()));
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& v = (*it)[i];
    if (!v.is_number_integer())
      split_error(source, fmt::format("\"{}\"[{}] must be an integer row index, got {}", key, i, v.dump()));
    // Unsigned values above INT64_MAX and negative ones both fall outside [0, rows).
    const bool negative = v.is_number_unsigned() ? false : v.get<int64_t>() < 0;
    const bool too_big = v.is_number_unsigned() ? v.get<uint64_t>() >= static_cast<uint64_t>(rows)
                                                : v.get<int64_t>() >= rows;
    if (negative || too_big)
      split_error(source, fmt::format("\"{}\"[{}] = {} is not a row of the training data (rows 0..{})", key, i,
                                      v.dump(), rows - 1));
    const int64_t row = v.get<int64_t>();
    char& seen = taken[static_cast<size_t>(row)];
    if (seen)
      split_error(source, fmt::format("row {} appears twice (\"{}\"[{}] and an earlier entry of \"{}\")", row, key, i,
                                      seen == 1 ? "train" : "val"));
    seen = std::string_view(key) == "train" ? 1 : 2;
    out.push_back(row);
  }
  return out;
}

}  // namespace

SplitIndices parse_split(std::string_view json_text, int64_t rows, const std::string& source) {
  if (rows <= 0) split_error(source, "the training data has no rows");
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) split_error(source, "not valid JSON");
  if (!doc.is_object())
    split_error(source, fmt::format("expected an object {{\"train\": [...], \"val\": [...]}}, got {}", doc.type_name()));
  for (const auto& [key, value] : doc.items()) {
    (void)value;
    if (key != "train" && key != "val")
      split_error(source, fmt::format("unknown key \"{}\" (expected \"train\" and \"val\"; the test split comes from "
                                      "data.test_file)", key));
  }
  std::vector<char> taken(static_cast<size_t>(rows), 0);
  SplitIndices s;
  s.train = rows_of(doc, "train", rows, taken, source);
  s.val = rows_of(doc, "val", rows, taken, source);
  if (s.train.empty()) split_error(source, "\"train\" lists no rows");
  return s;
}

SplitIndices read_split_file(const std::string& path, int64_t rows) {
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) split_error(path, fmt::format("cannot read it ({})", ec.message()));
  if (bytes > kMaxSplitFileBytes)
    split_error(path, fmt::format("{} bytes; a split file over 1 GiB is not a list of row indices", bytes));
  return parse_split(io::read_file(path, "read the split file"), rows, path);
}

}  // namespace ember::train

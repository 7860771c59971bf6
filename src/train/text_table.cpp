// Aligned plain-text tables (see text_table.h).
#include "text_table.h"

#include <algorithm>

namespace ember::train {

namespace {
// Display width: UTF-8 continuation bytes take no column.
size_t width_of(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
}  // namespace

std::string text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right) {
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], width_of(row[i]));
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : std::string();
      const std::string pad(width[i] - width_of(cell), ' ');
      if (i > 0) line += "  ";
      line += i < right.size() && right[i] ? pad + cell : cell + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header);
  for (const auto& r : rows) emit(r);
  return out;
}

}  // namespace ember::train

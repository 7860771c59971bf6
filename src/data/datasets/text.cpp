// Tokenizers, Vocab and TextDataset.
#include "ember/data/datasets/text.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ember/ops/factory.h"
#include "file_reader.h"

namespace ember::data {

std::vector<std::string> tokenize(std::string_view text, Tokenizer tokenizer) {
  std::vector<std::string> out;
  if (tokenizer == Tokenizer::Character) {
    // Bytes, except that a UTF-8 sequence stays one token.
    for (size_t i = 0; i < text.size();) {
      auto c = static_cast<unsigned char>(text[i]);
      size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
      len = std::min(len, text.size() - i);
      out.emplace_back(text.substr(i, len));
      i += len;
    }
    return out;
  }
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& documents, int64_t min_freq) {
  EMBER_CHECK(min_freq >= 1, "Vocab::build: min_freq must be at least 1, got {}", min_freq);
  std::map<std::string, int64_t> counts;
  for (const auto& doc : documents)
    for (const auto& t : doc) ++counts[t];
  std::vector<std::pair<std::string, int64_t>> kept;
  for (auto& [tok, n] : counts)
    if (n >= min_freq && tok != kPad && tok != kUnk) kept.emplace_back(tok, n);
  // Most frequent first, ties lexicographic (stable over the sorted map).
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocab v;
  v.itos_ = {kPad, kUnk};
  for (auto& [tok, n] : kept) v.itos_.push_back(tok);
  for (size_t i = 0; i < v.itos_.size(); ++i) v.stoi_[v.itos_[i]] = static_cast<int64_t>(i);
  return v;
}

int64_t Vocab::operator[](const std::string& token) const {
  auto it = stoi_.find(token);
  return it == stoi_.end() ? unk_index() : it->second;
}

const std::string& Vocab::token(int64_t id) const {
  EMBER_CHECK_INDEX(id >= 0 && id < size(), "Vocab::token: id {} is out of range for a vocabulary "
                    "of {} tokens", id, size());
  return itos_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back((*this)[t]);
  return ids;
}

TextDataset::TextDataset(const std::string& path, TextOptions options) {
  std::vector<std::string> lines = detail::read_lines(path);
  std::vector<std::vector<std::string>> docs;
  std::vector<std::string> label_text;
  std::vector<size_t> line_no;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    size_t sep = line.find(options.separator);
    EMBER_CHECK(sep != std::string::npos,
                "TextDataset: '{}' line {}: no separator between label and text; expected "
                "\"label{}text\"", path, li + 1, options.separator == '\t' ? "<TAB>" : std::string(1, options.separator));
    std::string label = line.substr(0, sep);
    label.erase(0, label.find_first_not_of(" "));
    label.erase(label.find_last_not_of(" ") + 1);
    EMBER_CHECK(!label.empty(), "TextDataset: '{}' line {}: the label is empty", path, li + 1);
    std::string text = line.substr(sep + 1);
    if (options.lowercase)
      std::transform(text.begin(), text.end(), text.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    docs.push_back(tokenize(text, options.tokenizer));
    // A sample of no tokens has length 0, which the sequence models (like
    // PyTorch's pack_padded_sequence) cannot take: say so here, by line.
    EMBER_CHECK(!docs.back().empty(), "TextDataset: '{}' line {}: the text after the label '{}' is empty (no tokens)",
                path, li + 1, label);
    label_text.push_back(std::move(label));
    line_no.push_back(li + 1);
  }
  EMBER_CHECK(!docs.empty(), "TextDataset: '{}' has no samples (no non-empty lines)", path);
  // The training split builds vocabulary and classes; other splits reuse them.
  vocab_ = options.vocab ? options.vocab
                         : std::make_shared<const Vocab>(Vocab::build(docs, options.min_freq));
  classes_ = options.classes;
  if (classes_.empty()) {
    std::set<std::string> names(label_text.begin(), label_text.end());
    classes_.assign(names.begin(), names.end());
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    auto it = std::find(classes_.begin(), classes_.end(), label_text[i]);
    EMBER_CHECK(it != classes_.end(),
                "TextDataset: '{}' line {}: label '{}' is out of range: not one of the {} "
                "training classes [{}]", path, line_no[i], label_text[i], classes_.size(),
                fmt::join(classes_, ", "));
    labels_.push_back(it - classes_.begin());
    tokens_.push_back(vocab_->encode(docs[i]));
  }
}

Sample TextDataset::get(int64_t index) const {
  EMBER_CHECK_INDEX(index >= 0 && index < size(),
                    "TextDataset: index {} is out of range for a dataset of size {}", index, size());
  const auto i = static_cast<size_t>(index);
  return Sample(tensor<int64_t>(tokens_[i], {static_cast<int64_t>(tokens_[i].size())}),
                scalar_tensor(labels_[i], kInt64));
}

}  // namespace ember::data

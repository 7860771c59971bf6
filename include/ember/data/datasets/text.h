// Text classification data: one "label<TAB>text" line per sample, a
// tokenizer, a vocabulary built from the training split, token-id samples.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::data {

enum class Tokenizer { Whitespace, Character };

std::vector<std::string> tokenize(std::string_view text, Tokenizer tokenizer);

// Token <-> id. The special tokens come first: "<pad>" = 0, "<unk>" = 1;
// other tokens follow by decreasing count, ties in lexicographic order.
class Vocab {
 public:
  static constexpr const char* kPad = "<pad>";
  static constexpr const char* kUnk = "<unk>";
  // Keeps the tokens seen at least min_freq times.
  static Vocab build(const std::vector<std::vector<std::string>>& documents, int64_t min_freq = 1);

  int64_t size() const { return static_cast<int64_t>(itos_.size()); }
  int64_t pad_index() const { return 0; }
  int64_t unk_index() const { return 1; }
  // unk_index() for an unknown token.
  int64_t operator[](const std::string& token) const;
  const std::string& token(int64_t id) const;
  bool contains(const std::string& token) const { return stoi_.count(token) != 0; }
  std::vector<int64_t> encode(const std::vector<std::string>& tokens) const;

 private:
  std::vector<std::string> itos_;
  std::unordered_map<std::string, int64_t> stoi_;
};

struct TextOptions {
  Tokenizer tokenizer = Tokenizer::Whitespace;
  bool lowercase = true;
  int64_t min_freq = 1;
  char separator = '\t';  // between the label and the text
  // The training split's vocabulary and classes, for a validation/test file;
  // when null they are built from this file (it is the training split).
  std::shared_ptr<const Vocab> vocab;
  std::vector<std::string> classes;
};

// Samples (token ids int64 [L], label int64 []). Labels are class names
// mapped to indices in sorted order; a line without a separator, with an
// empty label, or (given classes) an unknown label is an error naming file
// and line. Empty lines are skipped. Use pad_collate (collate.h) to batch.
class TextDataset : public Dataset {
 public:
  TextDataset(const std::string& path, TextOptions options = {});
  int64_t size() const override { return static_cast<int64_t>(tokens_.size()); }
  Sample get(int64_t index) const override;
  const std::shared_ptr<const Vocab>& vocab() const { return vocab_; }
  const std::vector<std::string>& classes() const { return classes_; }

 private:
  std::shared_ptr<const Vocab> vocab_;
  std::vector<std::string> classes_;
  std::vector<std::vector<int64_t>> tokens_;
  std::vector<int64_t> labels_;
};

}  // namespace ember::data

// data.split_file: which rows of the training file train and which validate,
// chosen by the user instead of data.val_fraction's seeded random split.
//
//   {"train": [0, 1, 2, 5, ...], "val": [3, 4, ...]}
//
// Indices are 0-based rows of data.train_file (header excluded), after
// data.limit_train; "val" may be empty or absent (no validation split). A
// row may not appear twice, in one list or in both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::train {

struct SplitIndices {
  std::vector<int64_t> train, val;
};

// Throws ConfigError naming `source`, the list and the offending entry.
SplitIndices parse_split(std::string_view json_text, int64_t rows, const std::string& source);
// Reads the file (at most 1 GiB), then parse_split.
SplitIndices read_split_file(const std::string& path, int64_t rows);

}  // namespace ember::train

// Collate functions: how a DataLoader turns a list of samples into a batch.
#pragma once

#include <functional>
#include <vector>

#include "ember/data/sample.h"

namespace ember::data {

using CollateFn = std::function<Sample(std::vector<Sample>)>;

// Stacks the tensors of the samples along a new dim 0, recursing into tuples
// and maps (torch.utils.data.default_collate): samples of (image [C, H, W],
// label []) give (images [B, C, H, W], labels [B]). All samples must have
// the same structure, shapes and dtypes.
Sample default_collate(std::vector<Sample> samples);

// Pads 1-D+ tensors of different lengths (dim 0) to the longest:
// [B, L_max, *] when batch_first, else [L_max, B, *].
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = true,
                    double padding_value = 0);

// For (token ids [L] int64, label []) samples of varying length: returns the
// tuple (padded [B, L_max] int64, lengths [B] int64, labels [B]) — the input
// of a packed LSTM/GRU. Samples keep their order (no sorting by length).
CollateFn pad_collate(int64_t padding_index = 0);

}  // namespace ember::data

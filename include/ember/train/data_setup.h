// Builds the data sets and loaders of an experiment from its data.* options.
#pragma once

#include <memory>

#include "ember/data/dataloader.h"
#include "ember/train/config.h"
#include "ember/train/zoo.h"

namespace ember::train {

// Batches are Sample tuples (input, target); the input may itself be a
// tuple (token ids, lengths) for text. Targets are int64 class indices
// (classification) or float32 [B, outputs] (regression).
struct DataBundle {
  DataInfo info;
  data::DatasetPtr train;  // after removing the validation split
  data::DatasetPtr val;    // empty when data.val_fraction == 0
  data::DatasetPtr test;
};

// data.* schema options (part of experiment_schema).
Schema data_schema();
// Throws ConfigError for a missing data set path (naming the package or
// path to provide) and data::... errors for unreadable files.
DataBundle build_data(const Config& config);
// A loader over `dataset` with the config's batch size, workers and seed;
// `train` selects shuffling + drop_last per config, eval loaders keep order.
// With world > 1 the train loader draws this rank's share of each epoch
// through a DistributedSampler (dist.drop_last: drop or pad).
std::unique_ptr<data::DataLoader> make_loader(const Config& config, const data::DatasetPtr& dataset, bool train,
                                              int64_t rank = 0, int64_t world = 1);

}  // namespace ember::train

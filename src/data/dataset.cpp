// TensorDataset, Subset, ConcatDataset and random_split.
#include "ember/data/dataset.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/data/sampler.h"

namespace ember::data {

namespace {
void check_index(const char* what, int64_t index, int64_t size) {
  EMBER_CHECK_INDEX(index >= 0 && index < size,
                    "{}: index {} is out of range for a dataset of size {}", what, index, size);
}
}  // namespace

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  EMBER_CHECK(!tensors_.empty(), "TensorDataset: expected at least one tensor, got none");
  for (size_t i = 0; i < tensors_.size(); ++i) {
    EMBER_CHECK(tensors_[i].defined() && tensors_[i].dim() >= 1,
                "TensorDataset: tensor {} must have at least one dim (the sample dim)", i);
    EMBER_CHECK(tensors_[i].size(0) == tensors_[0].size(0),
                "TensorDataset: size mismatch between tensors: tensor 0 has {} samples, "
                "tensor {} has {}; all tensors need the same size(0)",
                tensors_[0].size(0), i, tensors_[i].size(0));
  }
  size_ = tensors_[0].size(0);
}

Sample TensorDataset::get(int64_t index) const {
  check_index("TensorDataset", index, size_);
  std::vector<Sample> items;
  items.reserve(tensors_.size());
  for (const auto& t : tensors_) items.emplace_back(t.select(0, index));
  return Sample::tuple(std::move(items));
}

Subset::Subset(DatasetPtr dataset, std::vector<int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  EMBER_CHECK(dataset_, "Subset: the dataset is null");
  const int64_t n = dataset_->size();
  for (size_t i = 0; i < indices_.size(); ++i)
    EMBER_CHECK_INDEX(indices_[i] >= 0 && indices_[i] < n,
                      "Subset: indices[{}] = {} is out of range for a dataset of size {}", i,
                      indices_[i], n);
}

Sample Subset::get(int64_t index) const {
  check_index("Subset", index, size());
  return dataset_->get(indices_[static_cast<size_t>(index)]);
}

ConcatDataset::ConcatDataset(std::vector<DatasetPtr> datasets) : datasets_(std::move(datasets)) {
  EMBER_CHECK(!datasets_.empty(), "ConcatDataset: expected at least one dataset, got none");
  int64_t total = 0;
  for (size_t i = 0; i < datasets_.size(); ++i) {
    EMBER_CHECK(datasets_[i], "ConcatDataset: dataset {} is null", i);
    total += datasets_[i]->size();
    cumulative_.push_back(total);
  }
}

Sample ConcatDataset::get(int64_t index) const {
  check_index("ConcatDataset", index, size());
  // First dataset whose cumulative size exceeds index.
  size_t d = static_cast<size_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), index) - cumulative_.begin());
  int64_t start = d == 0 ? 0 : cumulative_[d - 1];
  return datasets_[d]->get(index - start);
}

void ConcatDataset::set_epoch(int64_t epoch) {
  for (auto& d : datasets_) d->set_epoch(epoch);
}

std::vector<std::shared_ptr<Subset>> random_split(const DatasetPtr& dataset,
                                                  const std::vector<int64_t>& lengths,
                                                  uint64_t seed) {
  EMBER_CHECK(dataset, "random_split: the dataset is null");
  int64_t total = 0;
  for (int64_t l : lengths) {
    EMBER_CHECK(l >= 0, "random_split: lengths must be non-negative, got [{}]",
                fmt::join(lengths, ", "));
    total += l;
  }
  EMBER_CHECK(total == dataset->size(),
              "random_split: sum of input lengths ({}) does not equal the length of the input "
              "dataset ({}); pass fractions summing to 1 to split proportionally",
              total, dataset->size());
  std::vector<int64_t> perm = seeded_randperm(total, seed, 0);
  std::vector<std::shared_ptr<Subset>> out;
  int64_t offset = 0;
  for (int64_t l : lengths) {
    out.push_back(std::make_shared<Subset>(
        dataset, std::vector<int64_t>(perm.begin() + offset, perm.begin() + offset + l)));
    offset += l;
  }
  return out;
}

std::vector<std::shared_ptr<Subset>> random_split(const DatasetPtr& dataset,
                                                  const std::vector<double>& fractions,
                                                  uint64_t seed) {
  EMBER_CHECK(dataset, "random_split: the dataset is null");
  double sum = std::accumulate(fractions.begin(), fractions.end(), 0.0);
  EMBER_CHECK(std::fabs(sum - 1.0) < 1e-6 && !fractions.empty(),
              "random_split: fractions must sum to 1, got [{}] (sum {})",
              fmt::join(fractions, ", "), sum);
  const int64_t n = dataset->size();
  std::vector<int64_t> lengths;
  for (double f : fractions) {
    EMBER_CHECK(f >= 0 && f <= 1, "random_split: fraction {} is outside [0, 1]", f);
    lengths.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * f)));
  }
  int64_t remainder = n - std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
  for (int64_t i = 0; i < remainder; ++i) lengths[static_cast<size_t>(i) % lengths.size()] += 1;
  return random_split(dataset, lengths, seed);
}

}  // namespace ember::data

// Map-style datasets (torch.utils.data.dataset): the Dataset interface,
// TensorDataset, Subset, ConcatDataset and a seeded random_split.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/data/sample.h"

namespace ember::data {

// size() + get(i). get must be safe to call from several threads at once
// (DataLoader workers); datasets are shared through shared_ptr.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Sample get(int64_t index) const = 0;
  // The epoch per-sample random transforms derive their randomness from
  // (see Note [per-sample randomness] in sample_generator.h). The DataLoader
  // calls it before an epoch starts, never while workers run; decorators
  // forward it to the dataset they wrap.
  virtual void set_epoch(int64_t epoch) { (void)epoch; }
};

using DatasetPtr = std::shared_ptr<Dataset>;

// Sample i is the tuple (t[i] for t in tensors); all share size(0).
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  // TensorDataset({X, y}) and TensorDataset{X, y} (this overload keeps the
  // braced form unambiguous next to the one below).
  explicit TensorDataset(std::initializer_list<Tensor> tensors) : TensorDataset(std::vector<Tensor>(tensors)) {}
  // TensorDataset(X, y), as in PyTorch.
  template <std::same_as<Tensor>... Rest>
  explicit TensorDataset(Tensor first, Rest... rest)
      : TensorDataset(std::vector<Tensor>{std::move(first), std::move(rest)...}) {}
  int64_t size() const override { return size_; }
  Sample get(int64_t index) const override;
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  int64_t size_ = 0;
};

// The samples of `dataset` at `indices`, in that order.
class Subset : public Dataset {
 public:
  Subset(DatasetPtr dataset, std::vector<int64_t> indices);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Sample get(int64_t index) const override;
  void set_epoch(int64_t epoch) override { dataset_->set_epoch(epoch); }
  const std::vector<int64_t>& indices() const { return indices_; }
  const DatasetPtr& dataset() const { return dataset_; }

 private:
  DatasetPtr dataset_;
  std::vector<int64_t> indices_;
};

// The datasets one after another.
class ConcatDataset : public Dataset {
 public:
  explicit ConcatDataset(std::vector<DatasetPtr> datasets);
  int64_t size() const override { return cumulative_.empty() ? 0 : cumulative_.back(); }
  Sample get(int64_t index) const override;
  void set_epoch(int64_t epoch) override;
  const std::vector<int64_t>& cumulative_sizes() const { return cumulative_; }

 private:
  std::vector<DatasetPtr> datasets_;
  std::vector<int64_t> cumulative_;
};

// Splits a permutation of the dataset (Philox, from `seed`) into subsets of
// the given lengths, which must add up to the dataset size.
std::vector<std::shared_ptr<Subset>> random_split(const DatasetPtr& dataset,
                                                  const std::vector<int64_t>& lengths,
                                                  uint64_t seed = 0);
// Fractions summing to 1: floor(n * f) each, the remainder handed out one by
// one from the first subset on (PyTorch's rule).
std::vector<std::shared_ptr<Subset>> random_split(const DatasetPtr& dataset,
                                                  const std::vector<double>& fractions,
                                                  uint64_t seed = 0);
// random_split(ds, {0.8, 0.2}) or random_split(ds, {800, 200}): a braced
// list picks the fractions or the lengths form by its element type (the
// vector overloads alone would be ambiguous for a braced list).
template <typename T>
  requires std::is_arithmetic_v<T>
std::vector<std::shared_ptr<Subset>> random_split(const DatasetPtr& dataset, std::initializer_list<T> parts,
                                                  uint64_t seed = 0) {
  if constexpr (std::is_floating_point_v<T>)
    return random_split(dataset, std::vector<double>(parts.begin(), parts.end()), seed);
  else
    return random_split(dataset, std::vector<int64_t>(parts.begin(), parts.end()), seed);
}

}  // namespace ember::data

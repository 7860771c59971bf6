// IDX files (the MNIST format, raw or gzip) and the MNIST / Fashion-MNIST
// datasets built on them.
#pragma once

#include <string>

#include "ember/data/dataset.h"

namespace ember::data {

// Reads an IDX file (gzip detected by its magic bytes) into a tensor whose
// shape and dtype come from the header (0x08 uint8, 0x09 int8, 0x0B int16 as
// int32, 0x0C int32, 0x0D float32, 0x0E float64). Errors name the file and,
// for a truncated file, the record where the data ends.
Tensor read_idx(const std::string& path);

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kDebianFashionMnistRoot = "/usr/share/datasets/fashion-mnist";

// Samples (image uint8 [28, 28], label int64 []). Reads
// {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from root; checks the
// counts agree and every label is below num_classes.
class MNIST : public Dataset {
 public:
  explicit MNIST(const std::string& root, bool train = true, int64_t num_classes = 10);
  int64_t size() const override { return images_.size(0); }
  Sample get(int64_t index) const override;
  const Tensor& images() const { return images_; }  // uint8 [N, 28, 28]
  const Tensor& targets() const { return targets_; }  // int64 [N]

 private:
  Tensor images_, targets_;
};

// MNIST's format with Zalando's clothing images; root defaults to Debian's.
class FashionMNIST : public MNIST {
 public:
  explicit FashionMNIST(const std::string& root = kDebianFashionMnistRoot, bool train = true)
      : MNIST(root, train) {}
};

}  // namespace ember::data

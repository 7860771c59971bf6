// Image transforms (torchvision.transforms) on [..., H, W] tensors, and the
// TransformedDataset that applies them with per-sample seeded randomness.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/sample_generator.h"

namespace ember::data {

// A transform maps a tensor to a new tensor (never modifying its input) and
// draws any randomness from the sample's own generator.
class Transform {
 public:
  virtual ~Transform() = default;
  virtual Tensor apply(const Tensor& x, SampleGenerator& gen) const = 0;
  virtual std::string name() const = 0;
  Tensor operator()(const Tensor& x, SampleGenerator& gen) const { return apply(x, gen); }
  // With the generator of (seed 0, epoch 0, index 0).
  Tensor operator()(const Tensor& x) const;
};

using TransformPtr = std::shared_ptr<const Transform>;

namespace transforms {

// Applies the transforms in order; they share the sample's generator.
class Compose : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> transforms);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "Compose"; }

 private:
  std::vector<TransformPtr> transforms_;
};

// uint8 [H, W, C] (or [H, W]) -> float32 [C, H, W] (or [1, H, W]) in [0, 1].
class ToTensor : public Transform {
 public:
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "ToTensor"; }
};

// (x - mean[c]) / std[c] per channel of a float [C, H, W] tensor; one mean
// and std apply to every channel.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "Normalize"; }

 private:
  std::vector<double> mean_, std_;
};

// Pads by `padding` on every side with `fill`, then crops size at a uniform
// random (top, left). Float32 or uint8 [..., H, W].
class RandomCrop : public Transform {
 public:
  RandomCrop(std::pair<int64_t, int64_t> size, int64_t padding = 0, double fill = 0);
  explicit RandomCrop(int64_t size, int64_t padding = 0, double fill = 0)
      : RandomCrop({size, size}, padding, fill) {}
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "RandomCrop"; }
  // (top, left) in the padded image; draws top, then left.
  std::pair<int64_t, int64_t> get_params(int64_t height, int64_t width, SampleGenerator& gen) const;

 private:
  int64_t h_, w_, padding_;
  double fill_;
};

// Crops the centre (top = round((H - h) / 2), half to even), zero-padding
// when the image is smaller than the crop, like torchvision.
class CenterCrop : public Transform {
 public:
  explicit CenterCrop(std::pair<int64_t, int64_t> size);
  explicit CenterCrop(int64_t size) : CenterCrop(std::pair<int64_t, int64_t>{size, size}) {}
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "CenterCrop"; }

 private:
  int64_t h_, w_;
};

// Mirrors the last dim with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "RandomHorizontalFlip"; }

 private:
  double p_;
};

// Rotates by an angle uniform in [-degrees, degrees] (or [min, max]) about
// the image centre, counter-clockwise for positive angles, nearest
// neighbour, `fill` outside (torchvision's defaults).
class RandomRotation : public Transform {
 public:
  explicit RandomRotation(double degrees, double fill = 0);
  RandomRotation(std::pair<double, double> degrees, double fill = 0);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "RandomRotation"; }

 private:
  double min_, max_, fill_;
};

// With probability p, sets a random rectangle of float [C, H, W] to value;
// its area is a uniform fraction in `scale` of the image and its aspect ratio
// log-uniform in `ratio` (up to 10 tries, else the image is unchanged).
class RandomErasing : public Transform {
 public:
  struct Box {
    int64_t top = 0, left = 0, height = 0, width = 0;  // height 0: no erase
  };
  explicit RandomErasing(double p = 0.5, std::pair<double, double> scale = {0.02, 0.33},
                         std::pair<double, double> ratio = {0.3, 3.3}, double value = 0);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "RandomErasing"; }
  // The rectangle for an image of this size (draws the same numbers as apply
  // after its probability draw).
  Box get_params(int64_t height, int64_t width, SampleGenerator& gen) const;

 private:
  double p_;
  std::pair<double, double> scale_, ratio_;
  double value_;
};

// Bilinear resize of float [..., H, W] (align_corners = false, no antialias).
class Resize : public Transform {
 public:
  explicit Resize(std::pair<int64_t, int64_t> size);
  Tensor apply(const Tensor& x, SampleGenerator& gen) const override;
  std::string name() const override { return "Resize"; }

 private:
  int64_t h_, w_;
};

// Rotation of an image by a fixed angle (what RandomRotation applies).
Tensor rotate(const Tensor& x, double angle_degrees, double fill = 0);
// Crop of [..., H, W] at (top, left) of size (h, w); outside reads as fill.
Tensor crop(const Tensor& x, int64_t top, int64_t left, int64_t height, int64_t width,
            double fill = 0);

}  // namespace transforms

// Applies `transform` to each sample — the whole sample when it is a
// tensor, element `element` of a tuple sample otherwise (the image of an
// (image, label) pair) — with the generator of (seed, epoch, index).
class TransformedDataset : public Dataset {
 public:
  TransformedDataset(DatasetPtr dataset, TransformPtr transform, uint64_t seed = 0,
                     size_t element = 0);
  int64_t size() const override { return dataset_->size(); }
  Sample get(int64_t index) const override;
  void set_epoch(int64_t epoch) override;

 private:
  DatasetPtr dataset_;
  TransformPtr transform_;
  uint64_t seed_;
  size_t element_;
  int64_t epoch_ = 0;
};

}  // namespace ember::data

// The padding layers of torch.nn (ZeroPad2d, ConstantPad1d/2d/3d,
// ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d): F.pad as a module, with
// PyTorch's arguments and repr. One int pads every side; a list gives
// (left, right, top, bottom, front, back) as F.pad does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

class PadNd : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  const std::vector<int64_t> padding;  // 2 per padded dim, last dim first
  const std::string mode;
  const std::optional<double> value;  // ConstantPadNd's fill (and repr); 0 otherwise

 protected:
  PadNd(std::string type_name, int64_t dims, std::vector<int64_t> padding, std::string mode,
        std::optional<double> value = std::nullopt);
};

#define EMBER_PAD_LAYER(Name, dims, mode)                                                  \
  class Name : public PadNd {                                                              \
   public:                                                                                 \
    explicit Name(int64_t padding) : Name(std::vector<int64_t>{padding}) {}                \
    explicit Name(std::vector<int64_t> padding) : PadNd(#Name, dims, std::move(padding), mode) {} \
  };
EMBER_PAD_LAYER(ZeroPad2d, 2, "constant")
EMBER_PAD_LAYER(ReflectionPad1d, 1, "reflect")
EMBER_PAD_LAYER(ReflectionPad2d, 2, "reflect")
EMBER_PAD_LAYER(ReflectionPad3d, 3, "reflect")
EMBER_PAD_LAYER(ReplicationPad1d, 1, "replicate")
EMBER_PAD_LAYER(ReplicationPad2d, 2, "replicate")
EMBER_PAD_LAYER(ReplicationPad3d, 3, "replicate")
#undef EMBER_PAD_LAYER

#define EMBER_CONSTANT_PAD_LAYER(Name, dims)                                                        \
  class Name : public PadNd {                                                                       \
   public:                                                                                          \
    Name(int64_t padding, double value) : Name(std::vector<int64_t>{padding}, value) {}            \
    Name(std::vector<int64_t> padding, double value) : PadNd(#Name, dims, std::move(padding), "constant", value) {} \
  };
EMBER_CONSTANT_PAD_LAYER(ConstantPad1d, 1)
EMBER_CONSTANT_PAD_LAYER(ConstantPad2d, 2)
EMBER_CONSTANT_PAD_LAYER(ConstantPad3d, 3)
#undef EMBER_CONSTANT_PAD_LAYER

}  // namespace ember::nn

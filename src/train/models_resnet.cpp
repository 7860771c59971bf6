// ResNet-18/34 for small images (CIFAR stem) with torchvision's names, and
// He et al.'s CIFAR ResNets of depth 6n + 2.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/core/grad_mode.h"
#include "ember/nn/activation.h"
#include "ember/nn/init.h"
#include "ember/ops/elementwise.h"
#include "ember/train/models.h"

namespace ember::train {

namespace {

std::string shape_str(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes().vec(), ", ")); }

std::shared_ptr<nn::Conv2d> conv3x3(int64_t in, int64_t out, int64_t stride) {
  return std::make_shared<nn::Conv2d>(in, out, 3, stride, 1, 1, 1, /*bias=*/false);
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride) : Module("BasicBlock") {
  // Registration order is torchvision's: conv1, bn1, relu, conv2, bn2, downsample.
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(planes));
  register_module("relu", std::make_shared<nn::ReLU>());
  conv2 = register_module("conv2", conv3x3(planes, planes, 1));
  bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(planes));
  if (stride != 1 || inplanes != planes) {
    downsample = register_module(
        "downsample", std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
                          std::make_shared<nn::Conv2d>(inplanes, planes, 1, stride, 0, 1, 1, /*bias=*/false),
                          std::make_shared<nn::BatchNorm2d>(planes)}));
  }
}

Tensor BasicBlock::forward(const Tensor& input) {
  Tensor out = relu(bn1->forward(conv1->forward(input)));
  out = bn2->forward(conv2->forward(out));
  Tensor identity = downsample ? downsample->forward(input) : input;
  return relu(out + identity);
}

bool is_resnet_depth(int64_t depth) {
  // 50, 101 and 152 name torchvision's bottleneck nets (152 is also 6n + 2).
  if (depth == 50 || depth == 101 || depth == 152) return false;
  return depth == 18 || depth == 34 || (depth >= 8 && (depth - 2) % 6 == 0);
}

ResNet::ResNet(const ResNetOptions& options_) : Module("ResNet"), options(options_) {
  const auto& o = options;
  EMBER_CHECK(is_resnet_depth(o.depth), "ResNet: expected depth 18, 34 or 6n + 2 (8, 14, 20, 32, 44, 56, 110), got {}",
              o.depth);
  EMBER_CHECK(o.in_channels > 0 && o.num_classes > 0 && o.width >= 0,
              "ResNet: expected in_channels and num_classes > 0 and width >= 0, got {}, {}, {}", o.in_channels,
              o.num_classes, o.width);
  const bool cifar = o.depth != 18 && o.depth != 34;
  const int64_t width = o.width > 0 ? o.width : cifar ? 16 : 64;
  const std::vector<int64_t> blocks = cifar            ? std::vector<int64_t>(3, (o.depth - 2) / 6)
                                      : o.depth == 18 ? std::vector<int64_t>{2, 2, 2, 2}
                                                      : std::vector<int64_t>{3, 4, 6, 3};
  conv1 = register_module("conv1", conv3x3(o.in_channels, width, 1));
  bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(width));
  register_module("relu", std::make_shared<nn::ReLU>());
  int64_t inplanes = width;
  auto make_layer = [&](const std::string& name, int64_t planes, int64_t n, int64_t stride) {
    auto layer = std::make_shared<nn::Sequential>();
    for (int64_t i = 0; i < n; ++i) {
      layer->push_back(std::make_shared<BasicBlock>(inplanes, planes, i == 0 ? stride : 1));
      inplanes = planes;
    }
    return register_module(name, layer);
  };
  layer1 = make_layer("layer1", width, blocks[0], 1);
  layer2 = make_layer("layer2", 2 * width, blocks[1], 2);
  layer3 = make_layer("layer3", 4 * width, blocks[2], 2);
  if (!cifar) layer4 = make_layer("layer4", 8 * width, blocks[3], 2);
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(nn::ExpandingArray<2>{1, 1}));
  fc = register_module("fc", std::make_shared<nn::Linear>(inplanes, o.num_classes));

  // torchvision's init: He-normal convolutions (fan_out); BatchNorm already
  // starts at weight 1, bias 0; fc keeps Linear's default.
  NoGradGuard no_grad;
  for (const auto& m : modules())
    if (auto* conv = dynamic_cast<nn::Conv2d*>(m.get())) nn::init::kaiming_normal_(conv->weight, 0, "fan_out", "relu");
}

Tensor ResNet::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 4 && input.size(1) == options.in_channels,
              "ResNet: expected input [B, {}, H, W] (in_channels = {}), got {}", options.in_channels,
              options.in_channels, shape_str(input));
  Tensor x = relu(bn1->forward(conv1->forward(input)));
  x = layer3->forward(layer2->forward(layer1->forward(x)));
  if (layer4) x = layer4->forward(x);
  return fc->forward(avgpool->forward(x).flatten(1));
}

}  // namespace ember::train

// The zoo models the ONNX tests export: each traced (fixed and dynamic batch),
// with the module and its forward kept for eager references.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"

namespace ember::onnx_test {

struct ZooCase {
  std::string name;
  std::shared_ptr<nn::Module> module;
  jit::TraceFn fn;
  std::vector<Tensor> example;  // the trace's inputs
  std::vector<Tensor> other;    // another batch size (3 -> 5)
};

inline Tensor lengths_of(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor<int64_t>(v, {n});
}

// mlp, cnn (with BatchNorm statistics that are not the defaults), resnet,
// lstm, gru, transformer, and the text models with their lengths input.
inline std::vector<ZooCase> zoo_cases() {
  manual_seed(16);
  std::vector<ZooCase> out;
  auto one = [](nn::Module& m) {
    return [&m](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
  };
  {
    train::MLPOptions o;
    o.in_features = 12, o.hidden = {16, 8}, o.out_features = 3;
    auto m = std::make_shared<train::MLP>(o);
    out.push_back({"mlp", m, one(*m), {randn({3, 12})}, {randn({5, 12})}});
  }
  {
    train::CNNOptions o;
    o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5, o.channels = {4, 8}, o.hidden = 16;
    auto m = std::make_shared<train::CNN>(o);
    m->train();
    {
      NoGradGuard ng;
      for (int i = 0; i < 3; ++i) m->forward(randn({6, 1, 12, 12}));
    }
    m->eval();
    out.push_back({"cnn", m, one(*m), {randn({3, 1, 12, 12})}, {randn({5, 1, 12, 12})}});
  }
  {
    train::ResNetOptions o;
    o.depth = 18, o.in_channels = 3, o.num_classes = 4, o.width = 4;
    auto m = std::make_shared<train::ResNet>(o);
    m->train();
    {
      NoGradGuard ng;
      m->forward(randn({4, 3, 8, 8}));
    }
    m->eval();
    out.push_back({"resnet", m, one(*m), {randn({3, 3, 8, 8})}, {randn({5, 3, 8, 8})}});
  }
  for (std::string cell : {"lstm", "gru"}) {
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    auto m = std::make_shared<train::LSTMClassifier>(o);
    out.push_back({cell, m, one(*m), {randint(0, 20, {3, 7})}, {randint(0, 20, {5, 7})}});
    auto* p = m.get();
    out.push_back({cell + "+lengths", m,
                   [p](const std::vector<Tensor>& in) { return std::vector<Tensor>{p->forward(in[0], in[1])}; },
                   {randint(0, 20, {3, 7}), lengths_of({7, 2, 5})},
                   {randint(0, 20, {5, 7}), lengths_of({3, 3, 7, 6, 1})}});
  }
  {
    train::TransformerClassifierOptions o;
    o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
    o.num_classes = 3;
    auto m = std::make_shared<train::TransformerClassifier>(o);
    out.push_back({"transformer", m, one(*m), {randint(0, 30, {3, 9})}, {randint(0, 30, {5, 9})}});
    auto* p = m.get();
    out.push_back({"transformer+lengths", m,
                   [p](const std::vector<Tensor>& in) { return std::vector<Tensor>{p->forward(in[0], in[1])}; },
                   {randint(0, 30, {3, 9}), lengths_of({9, 4, 6})},
                   {randint(0, 30, {5, 9}), lengths_of({1, 2, 8, 9, 3})}});
  }
  for (ZooCase& c : out) c.module->eval();  // eager references without dropout
  return out;
}

inline jit::Graph trace_case(const ZooCase& c, bool dynamic_batch) {
  jit::TraceOptions o;
  if (dynamic_batch)
    for (size_t i = 0; i < c.example.size(); ++i) o.dynamic_dims.push_back({i, 0, "batch"});
  return jit::trace(*c.module, c.fn, c.example, o);
}

}  // namespace ember::onnx_test

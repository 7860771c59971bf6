// jit::quantize_dynamic: traced Linear stacks get linear_dynamic_int8 nodes
// that run (interpreter and runtime::Session) exactly as the eager int8
// modules, LSTM/GRU layers rnn_layer_dynamic_int8 nodes near PyTorch's
// dynamic LSTM; the files save and load back; products of two activations
// stay float with the reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/quantize_dynamic.h"
#include "ember/jit/trace.h"
#include "ember/quant/qrnn.h"
#include "ember/quant/quantize_dynamic.h"
#include "ember/runtime/session.h"
#include "quant/quant_reference.h"
#include "jit/graph_test_util.h"

namespace ember {
namespace {

using testing::qref;

using jit::testing::count_kind;

std::shared_ptr<nn::Sequential> mlp() {
  manual_seed(11);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(20, 30), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(30, 5)});
  m->eval();
  return m;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()) + ".ember")).string();
}

TEST(GraphQuantizeDynamic, LinearsBecomeInt8NodesEqualToTheEagerModules) {
  auto m = mlp();
  Tensor x = randn({6, 20});
  for (int level : {0, 2}) {
    SCOPED_TRACE(level);
    jit::Graph g = jit::optimize(jit::trace(*m, {x}), level).graph;
    jit::DynamicQuantizeResult r = jit::quantize_dynamic(g);
    EXPECT_EQ(count_kind(r.graph, jit::kLinearDynamicInt8), 2) << r.graph.str();
    EXPECT_EQ(count_kind(r.graph, "matmul"), 0);
    EXPECT_EQ(r.quantized.size(), 2u);
    EXPECT_TRUE(r.kept_float.empty()) << r.str();
    // The float weights are gone: 3 int8 parts per Linear, plus the biases.
    EXPECT_EQ(r.graph.constants.size(), 8u);
    nn::ModulePtr q = quant::quantize_dynamic(m, {"Linear"});
    Tensor want = q->forward(x);
    EXPECT_TRUE(equal(jit::run(r.graph, {x})[0], want)) << r.graph.str();
    Tensor other = randn({6, 20}) * 4;
    EXPECT_TRUE(equal(jit::run(r.graph, {other})[0], q->forward(other)));
  }
}

TEST(GraphQuantizeDynamic, SavesAsVersion2AndRunsInTheRuntime) {
  // Big enough that the weights, not the graph JSON, make the file.
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(256, 512), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(512, 10)});
  m->eval();
  Tensor x = randn({4, 256});
  jit::ModelFile f;
  f.graph = jit::quantize_dynamic(jit::trace(*m, {x})).graph;
  const std::string path = temp_path("qdyn");
  jit::save_model(f, path);
  jit::ModelFile back = jit::load_model(path);
  EXPECT_EQ(back.format_version, jit::kModelFormatVersion);
  runtime::Session s(path);
  EXPECT_TRUE(equal(s.run(std::vector<Tensor>{x})[0], jit::run(f.graph, {x})[0]));
  // int8 weights (+ 8 bytes per output channel): about a quarter of float.
  jit::ModelFile ff;
  ff.graph = jit::trace(*m, {x});
  const std::string fpath = temp_path("qdyn_float");
  jit::save_model(ff, fpath);
  EXPECT_LT(static_cast<double>(std::filesystem::file_size(path)),
            0.3 * static_cast<double>(std::filesystem::file_size(fpath)));
  std::filesystem::remove(path);
  std::filesystem::remove(fpath);
}

TEST(GraphQuantizeDynamic, Version1FilesLoadAndCannotHoldInt8Nodes) {
  auto m = mlp();
  Tensor x = randn({2, 20});
  jit::ModelFile f;
  f.graph = jit::trace(*m, {x});
  f.format_version = 1;  // a file an older Ember wrote
  const std::string path = temp_path("v1");
  jit::save_model(f, path);
  EXPECT_TRUE(equal(runtime::Session(path).run(std::vector<Tensor>{x})[0], m->forward(x)));
  jit::ModelFile q;
  q.graph = jit::quantize_dynamic(f.graph).graph;
  q.format_version = 1;
  jit::save_model(q, path);
  testing::expect_error([&] { jit::load_model(path); }, {"linear_dynamic_int8", "needs format version 2"});
  q.format_version = jit::kModelFormatVersion + 1;
  jit::save_model(q, path);
  testing::expect_error([&] { jit::load_model(path); },
                        {"is not supported", fmt::format("1 to {}", jit::kModelFormatVersion).c_str()});
  std::filesystem::remove(path);
}

// Recurrent layers trace as one rnn_layer node (issue 14's dynamic sequence
// length); the pass makes both of its projections int8
// (rnn_layer_dynamic_int8). Against PyTorch's quantize_dynamic LSTM on the
// same weights (tests/data/gen_quant.py: lstm.int8): PyTorch quantizes each
// weight per tensor, Ember per output channel, so the two differ by their
// rounding: within 0.02, as each is within that of the float LSTM.
TEST(GraphQuantizeDynamic, LstmLayersBecomeInt8NearPyTorchsDynamicLstm) {
  nn::LSTM lstm(8, 12);
  StateDict d;
  for (const char* k : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"})
    d.insert(k, qref(std::string("lstm.p.") + k).to(kFloat32));
  lstm.load_state_dict(d, true);
  Tensor x = qref("lstm.x").to(kFloat32);
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{lstm.forward(in[0]).first}; };
  jit::Graph g = jit::trace(lstm, fn, {x});
  Tensor yf = jit::run(g, {x})[0];
  EXPECT_LE((yf - qref("lstm.float").to(kFloat32)).abs().max().item<double>(), 1e-5) << "the float graph is PyTorch's";
  jit::DynamicQuantizeResult r = jit::quantize_dynamic(g);
  EXPECT_EQ(count_kind(r.graph, jit::kRnnLayerDynamicInt8), 1) << r.str();
  EXPECT_EQ(count_kind(r.graph, "rnn_layer"), 0);
  EXPECT_TRUE(r.kept_float.empty()) << r.str();
  ASSERT_EQ(r.quantized.size(), 1u);
  EXPECT_NE(r.quantized[0].find("weight_hh_l0"), std::string::npos) << r.str();
  Tensor y = jit::run(r.graph, {x})[0];
  EXPECT_LE((y - qref("lstm.int8").to(kFloat32)).abs().max().item<double>(), 0.02);
  EXPECT_LE((y - yf).abs().max().item<double>(), 0.02);
  EXPECT_GT((y - yf).abs().max().item<double>(), 0.0) << "the products did run in int8";
  // The node is quant::rnn_layer_dynamic_int8 on the packed weights, bitwise.
  const Tensor h0 = zeros({x.size(1), 12}), c0 = zeros({x.size(1), 12});
  RnnLayerResult want = quant::rnn_layer_dynamic_int8(
      RnnCell::lstm, x, Tensor(), h0, c0, quant::PackedLinear::pack(d.at("weight_ih_l0"), d.at("bias_ih_l0")),
      quant::PackedLinear::pack(d.at("weight_hh_l0"), d.at("bias_hh_l0")), false);
  EXPECT_TRUE(equal(y, want.output));
}

TEST(GraphQuantizeDynamic, GruWithLengthsAndASymbolicSequenceSavesAndRuns) {
  manual_seed(17);
  nn::GRU gru(6, 10);
  gru.eval();
  Tensor x = randn({7, 3, 6}), lengths = tensor<int64_t>({7, 4, 2}, {3});
  auto fn = [&](const std::vector<Tensor>& in) {
    auto [out, h] = gru.forward(in[0], in[1], Tensor());
    return std::vector<Tensor>{out, h};
  };
  jit::TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "seq"}};
  jit::ModelFile f;
  f.graph = jit::quantize_dynamic(jit::trace(gru, fn, {x, lengths}, opts)).graph;
  ASSERT_EQ(count_kind(f.graph, jit::kRnnLayerDynamicInt8), 1) << f.graph.str();
  const std::string path = temp_path("qgru");
  jit::save_model(f, path);
  runtime::Session s(path);
  for (int64_t seq : {7, 4}) {
    Tensor xs = randn({seq, 3, 6}), ls = tensor<int64_t>({seq, 3, 1}, {3});
    std::vector<Tensor> got = s.run(std::vector<Tensor>{xs, ls}), want = fn({xs, ls});
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_LE((got[i] - want[i]).abs().max().item<double>(), 0.02) << seq << " " << i;
      EXPECT_GT((got[i] - want[i]).abs().max().item<double>(), 0.0);
    }
    // Finished sequences keep their state and output zeros, as in float.
    EXPECT_EQ(got[0].narrow(0, seq - 1, 1).narrow(1, 2, 1).abs().max().item<float>(), 0.f);
  }
  std::filesystem::remove(path);
}

// q @ k^T of two activations has no weight to quantize.
class Scores : public nn::Module {
 public:
  Scores() : nn::Module("Scores") { proj = register_module("proj", std::make_shared<nn::Linear>(4, 4)); }
  Tensor forward(const Tensor& x) override {
    Tensor h = proj->forward(x);
    return matmul(h, h.t());
  }
  std::shared_ptr<nn::Linear> proj;
};

TEST(GraphQuantizeDynamic, ActivationProductsStayFloatWithTheReason) {
  Scores m;
  Tensor x = randn({3, 4});
  jit::DynamicQuantizeResult r = jit::quantize_dynamic(jit::trace(m, {x}));
  EXPECT_EQ(r.quantized.size(), 1u);
  ASSERT_EQ(r.kept_float.size(), 1u) << r.str();
  EXPECT_NE(r.kept_float[0].second.find("not a constant weight"), std::string::npos);
  EXPECT_NE(r.str().find("kept in float (1)"), std::string::npos);
  EXPECT_EQ(count_kind(r.graph, "matmul"), 1);
}

}  // namespace
}  // namespace ember

// Links libember_runtime.so alone (no libember): a graph built by hand is
// saved, loaded by a Session and run, and its result equals the same ops.
// That it links at all is the point: the runtime needs no autograd engine,
// nn, optim, data or train (the symbol check is a CTest beside this one).
#include <gtest/gtest.h>

#include <filesystem>

#include "ember/ember.h"
#include "ember/runtime/session.h"

namespace ember::runtime {
namespace {

TEST(RuntimeStandalone, HandBuiltLinearReluRunsThroughASession) {
  manual_seed(41);
  Tensor w = randn({3, 4}), b = randn({3});
  jit::Graph g;
  auto type = [](ScalarType dt, std::vector<jit::Dim> shape) { return jit::TensorType{dt, std::move(shape)}; };
  const int x = g.add_value(type(kFloat32, {{2, "batch"}, {4, ""}}));
  const int wv = g.add_value(type(kFloat32, {{3, ""}, {4, ""}}));
  const int bv = g.add_value(type(kFloat32, {{3, ""}}));
  const int wt = g.add_value(type(kFloat32, {{4, ""}, {3, ""}}));
  const int y = g.add_value(type(kFloat32, {{2, "batch"}, {3, ""}}));
  const int r = g.add_value(type(kFloat32, {{2, "batch"}, {3, ""}}));
  g.inputs = {{"x", x}};
  g.constants = {{"fc.weight", wv, jit::Constant::Kind::Parameter, w}, {"fc.bias", bv, jit::Constant::Kind::Parameter, b}};
  jit::Node t;
  t.kind = "as_strided";
  t.inputs = {wv};
  t.outputs = {wt};
  t.attrs = {{"sizes", std::vector<int64_t>{4, 3}}, {"strides", std::vector<int64_t>{1, 4}}, {"offset", int64_t{0}}};
  jit::Node mm;
  mm.kind = "matmul";
  mm.inputs = {x, wt, bv, jit::kNoValue};
  mm.outputs = {y};
  mm.attrs = {{"alpha", Scalar(1)}, {"beta", Scalar(0)}};
  jit::Node relu_node;
  relu_node.kind = "relu";
  relu_node.inputs = {y};
  relu_node.outputs = {r};
  g.nodes = {t, mm, relu_node};
  g.outputs = {{"y", r}};
  jit::ModelFile m;
  m.graph = g;
  m.source = {{"made_by", "standalone_test"}};
  const std::string path = (std::filesystem::temp_directory_path() / "ember_runtime_standalone.ember").string();
  jit::save_model(m, path);
  Session s(path);
  std::filesystem::remove(path);
  EXPECT_EQ(s.model().source.at("made_by"), "standalone_test");
  for (int64_t batch : {2, 5}) {
    Tensor in = randn({batch, 4});
    Tensor got = s.run({{"x", in}}).at("y");
    Tensor want = relu(linear(in, w, b));
    EXPECT_TRUE(allclose(got, want, 1e-6, 1e-6)) << batch;
  }
}

}  // namespace
}  // namespace ember::runtime

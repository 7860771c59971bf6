// Residual-add fusion, kernel selection and the prepared oneDNN kernels
// (post-ops, weights reordered once, blocked intermediates): the graphs
// before and after, and the numbers against eager.
#include <gtest/gtest.h>

#include "ember/core/allocator.h"
#include "ember/core/parallel.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/fuse_activation.h"
#include "ember/jit/passes/fuse_elementwise.h"
#include "ember/jit/passes/fuse_residual.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/select_kernels.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"
#include "graph_test_util.h"

namespace ember::jit {
namespace {

using testing::node;

int64_t kinds(const Graph& g, const std::string& kind) {
  int64_t n = 0;
  for (const Node& x : g.nodes) n += x.kind == kind;
  return n;
}

int64_t with_attr(const Graph& g, const std::string& attr, const std::string& value) {
  int64_t n = 0;
  for (const Node& x : g.nodes)
    if (const AttrValue* a = x.find(attr)) {
      if (const std::string* s = std::get_if<std::string>(a)) n += *s == value;
      else if (const bool* b = std::get_if<bool>(a)) n += *b && value == "true";
    }
  return n;
}

std::unique_ptr<train::ResNet> small_resnet(int64_t width) {
  train::ResNetOptions o;
  o.depth = 18, o.in_channels = 3, o.num_classes = 4, o.width = width;
  auto m = std::make_unique<train::ResNet>(o);
  // Non-trivial BatchNorm statistics, so folding them matters.
  m->train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 2; ++i) m->forward(randn({4, 3, 8, 8}) * 2 + 0.5);
  }
  m->eval();
  return m;
}

Tensor eager(nn::Module& m, const Tensor& x) {
  NoGradGuard ng;
  return m.forward(x);
}

TEST(FuseResidualAdd, ResNetBlocksBecomeConvsWithResidualAndPostRelu) {
  manual_seed(51);
  auto m = small_resnet(4);
  TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  Graph g1 = fuse_activations(optimize(trace(*m, {randn({2, 3, 8, 8})}, opts), 1).graph);
  // ResNet-18: 8 BasicBlocks, each ending in relu(conv + shortcut).
  ASSERT_EQ(kinds(g1, "add"), 8) << g1.str();
  const int64_t relus = kinds(g1, "relu");
  EXPECT_EQ(relus, 8) << "the relus after the adds (the others fused into their convs)";
  Graph g2 = fuse_activations(fuse_residual_add(g1));
  SCOPED_TRACE(g2.str());
  EXPECT_EQ(kinds(g2, "add"), 0);
  EXPECT_EQ(kinds(g2, "relu"), 0);
  EXPECT_EQ(g2.nodes.size(), g1.nodes.size() - 16);
  EXPECT_EQ(with_attr(g2, "residual", "true"), 8);
  EXPECT_EQ(with_attr(g2, "post_activation", "relu"), 8);
  for (const Node& n : g2.nodes)
    if (n.find("residual")) {
      ASSERT_EQ(n.inputs.size(), 4u);
      EXPECT_EQ(n.find("activation"), nullptr) << "the block's second conv has no relu of its own";
    }
  check_graph(g2, "fused");
  // The generic path (no kernel="prepared"): the kernel, then the add and the relu in place.
  for (int64_t batch : {1, 3}) {
    Tensor x = randn({batch, 3, 8, 8});
    EXPECT_TRUE(allclose(run(g2, {x})[0], eager(*m, x), 1e-5, 1e-6)) << batch;
  }
}

TEST(FuseResidualAdd, TheFusedConvMovesToTheAddWhenTheShortcutComesLater) {
  // y = conv(x); r = x * 2 (computed after the conv); out = y + r.
  Graph g;
  TensorType t{kFloat32, {{1, ""}, {2, ""}, {4, ""}, {4, ""}}};
  TensorType wt{kFloat32, {{2, ""}, {2, ""}, {3, ""}, {3, ""}}};
  const int x = g.add_value(t), w = g.add_value(wt), two = g.add_value({kFloat32, {}});
  const int y = g.add_value(t), r = g.add_value(t), out = g.add_value(t), z = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"w", w, Constant::Kind::Parameter, randn({2, 2, 3, 3})},
                 {"two", two, Constant::Kind::Inline, full({}, 2.0)}};
  Node conv = node("conv2d", {x, w}, {y});
  conv.attrs = {{"stride", std::vector<int64_t>{1, 1}},
                {"dilation", std::vector<int64_t>{1, 1}},
                {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                {"groups", int64_t{1}}};
  g.nodes = {conv, node("mul", {x, two}, {r}), node("add", {r, y}, {out}), node("silu", {out}, {z})};
  g.outputs = {{"z", z}};
  check_graph(g);
  Graph f = fuse_activations(fuse_residual_add(g));
  SCOPED_TRACE(f.str());
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[0].kind, "mul");
  EXPECT_EQ(f.nodes[1].kind, "conv2d");
  EXPECT_EQ(f.nodes[1].inputs.size(), 4u);
  EXPECT_EQ(f.nodes[1].inputs[2], kNoValue) << "no bias";
  EXPECT_EQ(with_attr(f, "post_activation", "silu"), 1);
  check_graph(f);
  Tensor in = randn({1, 2, 4, 4});
  Tensor want = run(g, {in})[0];
  EXPECT_TRUE(allclose(run(f, {in})[0], want, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(run(select_kernels(f), {in})[0], want, 1e-5, 1e-6)) << "oneDNN sum + swish post-ops";
  // An add whose operands differ in shape (a broadcast) is left alone.
  Graph b = g;
  b.values[static_cast<size_t>(r)].type = {kFloat32, {{1, ""}, {2, ""}, {1, ""}, {1, ""}}};
  EXPECT_EQ(kinds(fuse_residual_add(b), "add"), 1);
}

TEST(SelectKernels, MarksConvAndMatmulWithConstantWeightsOnlyAtLevel2) {
  manual_seed(52);
  auto m = small_resnet(4);
  Graph g = trace(*m, {randn({2, 3, 8, 8})});
  EXPECT_EQ(with_attr(optimize(g, 1).graph, "kernel", "prepared"), 0);
  Graph o = optimize(g, 2).graph;
  // 20 convs (17 + 3 downsample shortcuts) and the classifier's matmul.
  EXPECT_EQ(kinds(o, "conv2d"), 20) << o.str();
  EXPECT_EQ(with_attr(o, "kernel", "prepared"), 21) << o.str();
  // A matmul whose weight is an input keeps the traced kernel.
  Graph h;
  TensorType a{kFloat32, {{2, ""}, {3, ""}}}, b{kFloat32, {{3, ""}, {4, ""}}}, c{kFloat32, {{2, ""}, {4, ""}}};
  const int x = h.add_value(a), w = h.add_value(b), y = h.add_value(c);
  h.inputs = {{"x", x}, {"w", w}};
  Node mm = node("matmul", {x, w, kNoValue, kNoValue}, {y});
  mm.attrs = {{"alpha", Scalar(1.0)}, {"beta", Scalar(0.0)}};
  h.nodes = {mm};
  h.outputs = {{"y", y}};
  EXPECT_EQ(with_attr(select_kernels(h), "kernel", "prepared"), 0);
}

// The prepared kernels against eager: ResNet (residual adds, blocked
// intermediates, a strided shortcut) at batch 1 and 3, twice each (the
// second run reuses the prepared primitives and memories).
TEST(PreparedKernels, ResNetMatchesEagerAtBatch1And3) {
  manual_seed(53);
  auto m = small_resnet(4);
  TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  Graph o = optimize(trace(*m, {randn({2, 3, 8, 8})}, opts), 2).graph;
  for (int64_t batch : {1, 3}) {
    PreparedGraph p(o, {{"batch", batch}});
    for (int rep = 0; rep < 2; ++rep) {
      Tensor x = randn({batch, 3, 8, 8});
      EXPECT_TRUE(allclose(p.run({x})[0], eager(*m, x), 1e-5, 1e-6)) << batch << " rep " << rep;
    }
  }
}

// Odd channel counts (oneDNN pads the blocked layouts to 8/16 channels), a
// conv + residual + relu, conv + silu + avg pool (ceil-free, padded), conv +
// max pool, and a linear + gelu.
struct OddNet : nn::Module {
  std::shared_ptr<nn::Conv2d> c1, c2, c3;
  std::shared_ptr<nn::Linear> fc;
  OddNet() : Module("OddNet") {
    c1 = register_module("c1", std::make_shared<nn::Conv2d>(5, 7, 3, 1, 1));
    c2 = register_module("c2", std::make_shared<nn::Conv2d>(7, 7, 3, 1, 1));
    c3 = register_module("c3", std::make_shared<nn::Conv2d>(7, 9, 3, 1, 1));
    fc = register_module("fc", std::make_shared<nn::Linear>(9 * 3 * 3, 3));
  }
  Tensor forward(const Tensor& x) override {
    Tensor a = relu(c1->forward(x));
    Tensor b = relu(c2->forward(a) + a);
    Tensor c = max_pool2d(b, {2, 2});
    Tensor d = avg_pool2d(silu(c3->forward(c)), {3, 3}, {2, 2}, {1, 1});
    return gelu(fc->forward(flatten(d, 1)));
  }
};

TEST(PreparedKernels, OddChannelsResidualAndPoolsMatchEager) {
  manual_seed(54);
  OddNet m;
  m.eval();
  TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  Graph o = optimize(trace(m, {randn({2, 5, 11, 11})}, opts), 2).graph;
  SCOPED_TRACE(o.str());
  EXPECT_EQ(kinds(o, "add"), 0);
  EXPECT_EQ(kinds(o, "max_pool2d"), 1) << "a conv with a fused residual add is not pooled";
  EXPECT_EQ(kinds(o, "avg_pool2d"), 0);
  EXPECT_EQ(kinds(o, "gelu"), 0);
  EXPECT_EQ(with_attr(o, "kernel", "prepared"), 4);
  for (int64_t batch : {1, 3}) {
    PreparedGraph p(o, {{"batch", batch}});
    for (int rep = 0; rep < 2; ++rep) {
      Tensor x = randn({batch, 5, 11, 11});
      EXPECT_TRUE(allclose(p.run({x})[0], eager(m, x), 1e-5, 1e-6)) << batch << " rep " << rep;
    }
  }
}

TEST(PreparedKernels, RemadeWhenTheThreadCountChanges) {
  manual_seed(55);
  OddNet m;
  m.eval();
  Graph o = optimize(trace(m, {randn({3, 5, 11, 11})}), 2).graph;
  PreparedGraph p(o, {});
  Tensor x = randn({3, 5, 11, 11});
  const Tensor want = eager(m, x);
  const int threads = get_num_threads();
  for (int t : {1, 2, threads}) {
    set_num_threads(t);
    EXPECT_TRUE(allclose(p.run({x})[0], want, 1e-5, 1e-6)) << t;
  }
  set_num_threads(threads);
}

TEST(PreparedKernels, SteadyStateRunAllocatesOnlyItsOutput) {
  manual_seed(56);
  auto m = small_resnet(4);
  Graph o = optimize(trace(*m, {randn({2, 3, 8, 8})}), 2).graph;
  PreparedGraph p(o, {});
  Tensor x = randn({2, 3, 8, 8});
  const Tensor want = eager(*m, x);
  (void)p.run({x});  // makes the prepared kernels: weights, buffers, scratchpads
  std::vector<Tensor> got;
  const uint64_t before = cpu_alloc_calls_on_this_thread();
  for (int rep = 0; rep < 3; ++rep) got.push_back(p.run({x})[0]);
  // At most one allocation per run, the logits it returns (none when the
  // thread's cache of small blocks serves them).
  EXPECT_LE(cpu_alloc_calls_on_this_thread() - before, 3u);
  for (const Tensor& y : got) EXPECT_TRUE(allclose(y, want, 1e-5, 1e-6));
}

}  // namespace
}  // namespace ember::jit

namespace ember::jit {
namespace {

TEST(FuseElementwise, AChainBecomesOneNodeWithTheSameBits) {
  // y = relu((x * w + b) * 0.5) - x: mul, add, mul (scalar), relu, sub.
  Graph g;
  TensorType t{kFloat32, {{3, ""}, {50000, ""}}}, one{kFloat32, {}};
  const int x = g.add_value(t), w = g.add_value(t), b = g.add_value(t), half = g.add_value(one);
  const int m1 = g.add_value(t), a = g.add_value(t), m2 = g.add_value(t), r = g.add_value(t), y = g.add_value(t);
  const int e = g.add_value(t), z = g.add_value(t);
  g.inputs = {{"x", x}, {"w", w}, {"b", b}};
  g.constants = {{"half", half, Constant::Kind::Inline, full({}, 0.5)}};
  g.nodes = {node("mul", {x, w}, {m1}), node("add", {m1, b}, {a}),   node("mul", {a, half}, {m2}),
             node("relu", {m2}, {r}),   node("sub", {x, r}, {y}),    node("exp", {y}, {e}),
             node("neg", {a}, {z})};
  // `a` has two readers (the scalar mul and neg): the chains are mul-add and mul-relu-sub-exp.
  g.outputs = {{"e", e}, {"z", z}};
  Graph f = fuse_elementwise(g);
  SCOPED_TRACE(f.str());
  ASSERT_EQ(kinds(f, "fused_elementwise"), 2);
  EXPECT_EQ(f.nodes.size(), 3u);
  EXPECT_EQ(f.nodes[0].kind, "fused_elementwise");
  EXPECT_EQ(std::get<std::string>(*f.nodes[0].find("ops")), "mul,add");
  EXPECT_EQ(f.nodes[0].inputs, (std::vector<int>{f.inputs[0].value, f.inputs[1].value, f.inputs[2].value}));
  EXPECT_EQ(f.nodes[0].attr_ints("operands"), (std::vector<int64_t>{0, 1, -1, 2}));
  EXPECT_EQ(f.nodes[1].kind, "fused_elementwise");
  EXPECT_EQ(std::get<std::string>(*f.nodes[1].find("ops")), "mul,relu,sub,exp");
  EXPECT_EQ(f.nodes[1].attr_ints("operands"), (std::vector<int64_t>{0, 1, -1, -2, 2, -1, -1, -2}));
  EXPECT_EQ(f.nodes[2].kind, "neg");
  check_graph(f, "fused");
  std::vector<Tensor> in{randn({3, 50000}), randn({3, 50000}), randn({3, 50000})};
  std::vector<Tensor> want = run(g, in), got = run(f, in);
  EXPECT_TRUE(equal(got[0], want[0])) << "the same kernels, a chunk at a time";
  EXPECT_TRUE(equal(got[1], want[1]));
  // A broadcast operand ends a chain: it is not one element nor the output's shape.
  Graph h = g;
  h.values[static_cast<size_t>(b)].type = {kFloat32, {{1, ""}, {50000, ""}}};
  EXPECT_EQ(kinds(fuse_elementwise(h), "fused_elementwise"), 1) << "mul-relu-sub-exp only";
}

TEST(FuseElementwise, TwoChainsMeetingAtABinaryOpShareNoNode) {
  // An LSTM cell's i * g: tanh(p) and sigmoid(q) both end in the same mul.
  Graph g;
  TensorType t{kFloat32, {{3, ""}, {5, ""}}};
  const int p = g.add_value(t), q = g.add_value(t), u = g.add_value(t), s = g.add_value(t), m = g.add_value(t);
  const int y = g.add_value(t);
  g.inputs = {{"p", p}, {"q", q}};
  g.nodes = {node("tanh", {p}, {u}), node("sigmoid", {q}, {s}), node("mul", {s, u}, {m}), node("exp", {m}, {y})};
  g.outputs = {{"y", y}};
  Graph f = fuse_elementwise(g);
  SCOPED_TRACE(f.str());
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[0].kind, "sigmoid");
  EXPECT_EQ(std::get<std::string>(*f.nodes[1].find("ops")), "tanh,mul,exp");
  check_graph(f, "fused");
  std::vector<Tensor> in{randn({3, 5}), randn({3, 5})};
  EXPECT_TRUE(equal(run(f, in)[0], run(g, in)[0]));
}

TEST(FuseElementwise, ABadFusedNodeFailsWithTheNode) {
  Graph g;
  TensorType t{kFloat32, {{4, ""}}};
  const int x = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}};
  Node n = node("fused_elementwise", {x}, {y});
  n.attrs = {{"ops", std::string("relu,softmax")}, {"operands", std::vector<int64_t>{0, -2, -1, -2}}};
  g.nodes = {n};
  g.outputs = {{"y", y}};
  EXPECT_THROW(run(g, {randn({4})}), Error);
  g.nodes[0].attrs = {{"ops", std::string("relu,exp")}, {"operands", std::vector<int64_t>{0, -2, 5, -2}}};
  EXPECT_THROW(run(g, {randn({4})}), Error);
  g.nodes[0].attrs = {{"ops", std::string("relu,exp")}, {"operands", std::vector<int64_t>{0, -2, -1, -2}}};
  EXPECT_TRUE(equal(run(g, {Tensor(full({4}, -1.0))})[0], full({4}, 1.0)));
}

}  // namespace
}  // namespace ember::jit


// jit::propagate_layouts and the interpreter's blocked activations (Note
// [layout propagation] in src/kernels/cpu/prepared.cpp): which conv outputs
// the pass marks, which layout each value really had in a prepared run, and
// the numbers against the unoptimised graph.
#include <gtest/gtest.h>

#include "ember/core/allocator.h"
#include "ember/core/parallel.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/propagate_layouts.h"
#include "ember/jit/passes/select_kernels.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"
#include "graph_test_util.h"

namespace ember::jit {
namespace {

using testing::node;

bool blocked_out(const Node& n) {
  const AttrValue* a = n.find("output_layout");
  return a && std::get<std::string>(*a) == "blocked";
}

int64_t count_blocked(const Graph& g) {
  int64_t k = 0;
  for (const Node& n : g.nodes) k += blocked_out(n);
  return k;
}

// The graph without the pass's marks: level 2 as it was before it.
Graph without_layouts(Graph g) {
  for (Node& n : g.nodes) std::erase_if(n.attrs, [](const Attr& a) { return a.name == "output_layout"; });
  return g;
}

// Layout names of every conv2d output after a prepared run, in node order.
std::vector<std::string> conv_layouts(const Graph& g, const PreparedGraph& p) {
  std::vector<std::string> r;
  for (const Node& n : g.nodes)
    if (n.kind == "conv2d") r.push_back(p.layout_name(n.outputs[0]));
  return r;
}

Tensor eager(nn::Module& m, const Tensor& x) {
  NoGradGuard ng;
  return m.forward(x);
}

Graph traced(nn::Module& m, const Tensor& example) {
  TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  return trace(m, {example}, opts);
}

// Two training-mode batches, so eval-mode BatchNorm has statistics worth folding.
void with_batch_norm_statistics(nn::Module& m, std::vector<int64_t> shape) {
  m.train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 2; ++i) m.forward(randn(shape) * 2 + 0.5);
  }
  m.eval();
}

// Each conv2d's output_layout mark, in graph order.
std::vector<char> conv_marks(const Graph& g) {
  std::vector<char> marks;
  for (const Node& n : g.nodes)
    if (n.kind == "conv2d") marks.push_back(blocked_out(n));
  return marks;
}

// W1's CNN: the first conv (1 input channel, Ember's small-c_in kernel at
// level 2 without the pass) hands its pooled output to the second conv
// blocked, so it runs oneDNN; the second feeds the flatten and stays NCHW.
TEST(PropagateLayouts, W1CnnFirstConvFeedsTheSecondBlocked) {
  manual_seed(61);
  train::CNN m{train::CNNOptions{}};
  with_batch_norm_statistics(m, {4, 1, 28, 28});
  const Graph g0 = traced(m, randn({2, 1, 28, 28}));
  const Graph g2 = optimize(g0, 2).graph;
  SCOPED_TRACE(g2.str());
  EXPECT_EQ(conv_marks(g2), (std::vector<char>{1, 0}));
  const Graph before = without_layouts(g2);
  EXPECT_EQ(propagate_layouts(before).str(), g2.str());
  for (int64_t batch : {1, 5, 37}) {
    Tensor x = randn({batch, 1, 28, 28});
    const Tensor want = run(g0, {x})[0];
    PreparedGraph p(g2, {{"batch", batch}});
    PreparedGraph q(before, {{"batch", batch}});
    for (int rep = 0; rep < 2; ++rep) {
      EXPECT_TRUE(allclose(p.run({x})[0], want, 1e-5, 1e-5)) << batch << " rep " << rep;
      EXPECT_TRUE(allclose(q.run({x})[0], want, 1e-5, 1e-5)) << batch << " rep " << rep;
    }
    const std::vector<std::string> layouts = conv_layouts(g2, p);
    ASSERT_EQ(layouts.size(), 2u);
    EXPECT_NE(layouts[0], "nchw") << batch;
    EXPECT_EQ(layouts[1], "nchw") << "read by the flatten";
    for (const std::string& l : conv_layouts(before, q)) EXPECT_EQ(l, "nchw");
  }
}

// A CNN of W1's shape with three input channels and a third block: conv1
// (3 -> 32) and conv2 (32 -> 64) hand their pooled outputs to the next conv
// blocked; conv3 feeds the flatten and stays NCHW. Batch 5 and 37 exercise
// the pooled convs' chunks (a full chunk and a remainder).
TEST(PropagateLayouts, ConvChainOfACnnStaysBlockedUntilTheFlatten) {
  manual_seed(62);
  train::CNNOptions o;
  o.in_channels = 3, o.height = 16, o.width = 16, o.channels = {32, 64, 64}, o.hidden = 32;
  train::CNN m{o};
  with_batch_norm_statistics(m, {4, 3, 16, 16});
  const Graph g0 = traced(m, randn({2, 3, 16, 16}));
  const Graph g2 = optimize(g0, 2).graph;
  SCOPED_TRACE(g2.str());
  EXPECT_EQ(conv_marks(g2), (std::vector<char>{1, 1, 0}));
  // Before the pass: the same graph, no marks.
  const Graph before = without_layouts(g2);
  EXPECT_EQ(count_blocked(before), 0);
  EXPECT_EQ(propagate_layouts(before).str(), g2.str());
  for (int64_t batch : {1, 5, 37}) {
    Tensor x = randn({batch, 3, 16, 16});
    const Tensor want = run(g0, {x})[0];
    PreparedGraph p(g2, {{"batch", batch}});
    PreparedGraph q(before, {{"batch", batch}});
    for (int rep = 0; rep < 2; ++rep) {
      const Tensor got = p.run({x})[0];
      EXPECT_TRUE(allclose(got, want, 1e-5, 1e-5)) << batch << " rep " << rep;
      EXPECT_TRUE(allclose(got, q.run({x})[0], 1e-6, 1e-6)) << "the same primitives, minus reorders";
    }
    const std::vector<std::string> layouts = conv_layouts(g2, p);
    ASSERT_EQ(layouts.size(), 3u);
    EXPECT_NE(layouts[0], "nchw") << batch;
    EXPECT_NE(layouts[1], "nchw") << batch;
    EXPECT_EQ(layouts[2], "nchw") << "read by the flatten";
    EXPECT_EQ(eager(m, x).sizes().vec(), want.sizes().vec());
  }
}

std::unique_ptr<train::ResNet> small_resnet(int64_t width) {
  train::ResNetOptions o;
  o.depth = 18, o.in_channels = 3, o.num_classes = 4, o.width = width;
  auto m = std::make_unique<train::ResNet>(o);
  m->train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 2; ++i) m->forward(randn({4, 3, 8, 8}) * 2 + 0.5);
  }
  m->eval();
  return m;
}

// ResNet-18 at width 16 (16..128 channels): each block's input is read by
// its first conv and, as the fused residual, by its second (or by the
// downsample conv, whose output is the residual): every conv output but the
// last block's (read by the average pool) stays blocked.
TEST(PropagateLayouts, ResNetBlocksExchangeBlockedActivations) {
  manual_seed(63);
  auto m = small_resnet(16);
  const Graph g0 = traced(*m, randn({2, 3, 8, 8}));
  const Graph g2 = optimize(g0, 2).graph;
  SCOPED_TRACE(g2.str());
  int64_t convs = 0, residual_blocked = 0;
  std::vector<char> blocked_value(g2.values.size(), 0);
  for (const Node& n : g2.nodes)
    if (n.kind == "conv2d") {
      ++convs;
      if (blocked_out(n)) blocked_value[static_cast<size_t>(n.outputs[0])] = 1;
    }
  for (const Node& n : g2.nodes)
    if (n.kind == "conv2d" && n.inputs.size() == 4 && blocked_value[static_cast<size_t>(n.inputs[3])]) ++residual_blocked;
  EXPECT_EQ(convs, 20);
  EXPECT_EQ(count_blocked(g2), 19);
  EXPECT_EQ(residual_blocked, 8) << "every block's residual";
  size_t last_conv = 0;
  for (size_t i = 0; i < g2.nodes.size(); ++i)
    if (g2.nodes[i].kind == "conv2d") last_conv = i;
  EXPECT_FALSE(blocked_out(g2.nodes[last_conv])) << "read by the average pool";
  const Graph before = without_layouts(g2);
  for (int64_t batch : {1, 3}) {
    PreparedGraph p(g2, {{"batch", batch}});
    PreparedGraph q(before, {{"batch", batch}});
    for (int rep = 0; rep < 2; ++rep) {
      Tensor x = randn({batch, 3, 8, 8});
      const Tensor got = p.run({x})[0];
      EXPECT_TRUE(allclose(got, run(g0, {x})[0], 1e-5, 1e-5)) << batch << " rep " << rep;
      EXPECT_TRUE(allclose(got, eager(*m, x), 1e-5, 1e-5)) << batch;
      EXPECT_TRUE(allclose(got, q.run({x})[0], 1e-6, 1e-6)) << batch;
    }
    // Every marked output is in its primitive's layout (nhwc or nChw16c
    // here), except at 1 x 1 pixels, where that layout is NCHW's bytes.
    std::string names;
    for (const Node& n : g2.nodes) {
      if (n.kind != "conv2d") continue;
      const std::string l = p.layout_name(n.outputs[0]);
      const std::vector<int64_t> y = g2.type(n.outputs[0]).sizes();
      names += l + " ";
      EXPECT_EQ(l != "nchw", blocked_out(n) && y[2] * y[3] > 1) << n.scope << " " << l;
    }
    SCOPED_TRACE(names);
  }
}

// A conv output with several readers: two prepared convs (marked), or a
// prepared conv and a relu, or the graph's output (both left NCHW).
TEST(PropagateLayouts, EveryReaderMustTakeTheBlockedLayout) {
  TensorType t{kFloat32, {{2, "batch"}, {16, ""}, {6, ""}, {6, ""}}};
  TensorType wt{kFloat32, {{16, ""}, {16, ""}, {3, ""}, {3, ""}}};
  auto conv = [](int x, int w, int y) {
    Node n = node("conv2d", {x, w}, {y});
    n.attrs = {{"stride", std::vector<int64_t>{1, 1}},
               {"dilation", std::vector<int64_t>{1, 1}},
               {"padding", std::vector<int64_t>{1, 1, 1, 1}},
               {"groups", int64_t{1}}};
    return n;
  };
  manual_seed(64);
  Graph g;
  const int x = g.add_value(t), w = g.add_value(wt);
  const int a = g.add_value(t), b = g.add_value(t), c = g.add_value(t), d = g.add_value(t), e = g.add_value(t);
  const int s = g.add_value(t), out = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"w", w, Constant::Kind::Parameter, randn({16, 16, 3, 3}) * 0.2}};
  // a -> {conv b, conv c}; b -> {conv d, relu e}; c, d -> add s; s -> conv out (returned); d is returned too.
  g.nodes = {conv(x, w, a), conv(a, w, b), conv(a, w, c), conv(b, w, d), node("relu", {b}, {e}),
             node("add", {c, d}, {s})};
  g.nodes.push_back(node("add", {s, e}, {out}));
  g.outputs = {{"out", out}, {"d", d}};
  check_graph(g);
  const Graph f = propagate_layouts(select_kernels(g));
  SCOPED_TRACE(f.str());
  std::vector<char> marks;
  for (const Node& n : f.nodes)
    if (n.kind == "conv2d") marks.push_back(blocked_out(n));
  EXPECT_EQ(marks, (std::vector<char>{1, 0, 0, 0})) << "a: two convs; b: a relu too; c: an add; d: returned";
  Tensor in = randn({3, 16, 6, 6});
  const std::vector<Tensor> want = run(g, {in});
  PreparedGraph p(f, {{"batch", 3}});
  const std::vector<Tensor> got = p.run({in});
  EXPECT_NE(p.layout_name(a), "nchw");
  EXPECT_EQ(p.layout_name(b), "nchw");
  EXPECT_TRUE(allclose(got[0], want[0], 1e-5, 1e-5));
  EXPECT_TRUE(allclose(got[1], want[1], 1e-5, 1e-5));
}

// A hand-made file may mark a conv whose readers cannot take the layout (an
// elementwise op, the graph's output): the interpreter hands them NCHW copies.
TEST(PropagateLayouts, AMarkedConvReadByAnythingElseStillComputesTheSame) {
  TensorType t{kFloat32, {{2, ""}, {16, ""}, {5, ""}, {5, ""}}};
  TensorType wt{kFloat32, {{16, ""}, {16, ""}, {3, ""}, {3, ""}}};
  manual_seed(65);
  Graph g;
  const int x = g.add_value(t), w = g.add_value(wt), a = g.add_value(t), b = g.add_value(t), c = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"w", w, Constant::Kind::Parameter, randn({16, 16, 3, 3}) * 0.2}};
  Node c1 = node("conv2d", {x, w}, {a});
  c1.attrs = {{"stride", std::vector<int64_t>{1, 1}},
              {"dilation", std::vector<int64_t>{1, 1}},
              {"padding", std::vector<int64_t>{1, 1, 1, 1}},
              {"groups", int64_t{1}}};
  Node c2 = c1;
  c2.inputs = {a, w};
  c2.outputs = {b};
  g.nodes = {c1, c2, node("sigmoid", {a}, {c})};
  g.outputs = {{"b", b}, {"c", c}};
  Tensor in = randn({2, 16, 5, 5});
  const std::vector<Tensor> ref = run(g, {in});
  Graph f = select_kernels(g);
  for (Node& n : f.nodes)
    if (n.kind == "conv2d") n.attrs.push_back({"output_layout", std::string("blocked")});
  PreparedGraph p(f, {});
  for (int rep = 0; rep < 2; ++rep) {
    const std::vector<Tensor> got = p.run({in});
    EXPECT_NE(p.layout_name(a), "nchw");
    EXPECT_NE(p.layout_name(b), "nchw") << "returned: copied to NCHW on the way out";
    EXPECT_TRUE(allclose(got[0], ref[0], 1e-5, 1e-5));
    EXPECT_TRUE(allclose(got[1], ref[1], 1e-5, 1e-5));
  }
  // A mistyped mark fails naming the node.
  f.nodes[0].attrs.back().value = std::string("sideways");
  EXPECT_THROW(PreparedGraph(f, {}).run({in}), Error);
}

// Seven channels: oneDNN's nChw8c/16c would pad past the NCHW buffer, so the
// marked conv writes NCHW and its reader is made for that.
TEST(PropagateLayouts, PaddedLayoutsFallBackToNchw) {
  TensorType t{kFloat32, {{2, ""}, {7, ""}, {5, ""}, {5, ""}}};
  TensorType wt{kFloat32, {{7, ""}, {7, ""}, {3, ""}, {3, ""}}};
  manual_seed(66);
  Graph g;
  const int x = g.add_value(t), w = g.add_value(wt), a = g.add_value(t), b = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"w", w, Constant::Kind::Parameter, randn({7, 7, 3, 3}) * 0.3}};
  Node c1 = node("conv2d", {x, w}, {a});
  c1.attrs = {{"stride", std::vector<int64_t>{1, 1}},
              {"dilation", std::vector<int64_t>{1, 1}},
              {"padding", std::vector<int64_t>{1, 1, 1, 1}},
              {"groups", int64_t{1}}};
  Node c2 = c1;
  c2.inputs = {a, w};
  c2.outputs = {b};
  g.nodes = {c1, c2};
  g.outputs = {{"b", b}};
  const Graph f = propagate_layouts(select_kernels(g));
  EXPECT_EQ(count_blocked(f), 1);
  Tensor in = randn({2, 7, 5, 5});
  PreparedGraph p(f, {});
  EXPECT_TRUE(allclose(p.run({in})[0], run(g, {in})[0], 1e-5, 1e-5));
  EXPECT_EQ(p.layout_name(a).find_first_of("C"), std::string::npos) << p.layout_name(a) << ": no channel blocks";
}

TEST(PropagateLayouts, RemadeWhenTheThreadCountChangesAndAllocatesNothingInSteadyState) {
  manual_seed(67);
  auto m = small_resnet(16);
  const Graph g2 = optimize(trace(*m, {randn({2, 3, 8, 8})}), 2).graph;
  ASSERT_GT(count_blocked(g2), 0);
  PreparedGraph p(g2, {});
  Tensor x = randn({2, 3, 8, 8});
  const Tensor want = eager(*m, x);
  const int threads = get_num_threads();
  for (int t : {1, 2, threads}) {
    set_num_threads(t);
    EXPECT_TRUE(allclose(p.run({x})[0], want, 1e-5, 1e-5)) << t;
  }
  set_num_threads(threads);
  (void)p.run({x});
  std::vector<Tensor> got;
  const uint64_t before = cpu_alloc_calls_on_this_thread();
  for (int rep = 0; rep < 3; ++rep) got.push_back(p.run({x})[0]);
  EXPECT_LE(cpu_alloc_calls_on_this_thread() - before, 3u) << "at most the returned logits";
  for (const Tensor& y : got) EXPECT_TRUE(allclose(y, want, 1e-5, 1e-5));
}

}  // namespace
}  // namespace ember::jit

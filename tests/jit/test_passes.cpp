// Passes: the graph before and after, and the numbers unchanged.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "graph_test_util.h"
#include "ember/jit/passes/constant_fold.h"
#include "ember/jit/passes/dead_code.h"
#include "ember/jit/passes/fold_batch_norm.h"
#include "ember/jit/passes/fuse_activation.h"
#include "ember/jit/passes/fuse_pool.h"
#include "ember/jit/passes/identity.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/jit/verify.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

using testing::node;

TEST(DeadCode, DropsUnusedNodesAndConstantsAndRenumbers) {
  Graph g;
  TensorType t{kFloat32, {{3, ""}}};
  const int x = g.add_value(t), used = g.add_value(t), unused = g.add_value(t);
  const int a = g.add_value(t), dead = g.add_value(t), b = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"c.used", used, Constant::Kind::Inline, ones({3})},
                 {"c.unused", unused, Constant::Kind::Inline, zeros({3})}};
  g.nodes = {node("add", {x, used}, {a}), node("exp", {a}, {dead}), node("neg", {a}, {b})};
  g.outputs = {{"y", b}};
  Graph before = g;
  Graph after = eliminate_dead_code(g);
  EXPECT_EQ(after.str(),
            "input x = %0: float32[3]\n"
            "constant c.used = %1: float32[3]\n"
            "%2: float32[3] = add(%0, %1)\n"
            "%3: float32[3] = neg(%2)\n"
            "output y = %3\n");
  EXPECT_EQ(g.str(), before.str()) << "the input graph is not modified";
  Tensor in = tensor<float>({1, 2, 3}, {3});
  EXPECT_TRUE(equal(run(after, {in})[0], run(before, {in})[0]));
  EXPECT_TRUE(equal(run(after, {in})[0], neg(in + 1)));
}

TEST(DeadCode, KeepsUnusedInputsAndOutputsThatAreInputs) {
  Graph g;
  TensorType t{kFloat32, {{2, ""}}};
  const int x = g.add_value(t), z = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}, {"z", z}};
  g.nodes = {node("relu", {z}, {y})};
  g.outputs = {{"x_again", x}};
  Graph after = eliminate_dead_code(g);
  EXPECT_EQ(after.inputs.size(), 2u);
  EXPECT_TRUE(after.nodes.empty());
  ASSERT_EQ(after.outputs.size(), 1u);
  EXPECT_EQ(after.outputs[0].value, after.inputs[0].value);
  Tensor in = randn({2});
  EXPECT_TRUE(equal(run(after, {in, randn({2})})[0], in));
}


using testing::count_kind;

Node view(int in, int out, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset = 0) {
  Node n = node("as_strided", {in}, {out});
  n.attrs = {{"sizes", sizes}, {"strides", strides}, {"offset", offset}};
  return n;
}

// Identity views and copies are dropped; a real view (a transpose) stays, and
// a view of it with the same geometry is an identity too.
TEST(RemoveIdentities, DropsNoOpViewsAndCopies) {
  Graph g;
  TensorType t{kFloat32, {{2, ""}, {3, ""}}}, tt{kFloat32, {{3, ""}, {2, ""}}};
  const int x = g.add_value(t), v1 = g.add_value(t), c1 = g.add_value(t), tr = g.add_value(tt);
  const int tr2 = g.add_value(tt), c2 = g.add_value(tt), y = g.add_value(tt);
  g.inputs = {{"x", x}};
  g.nodes = {view(x, v1, {2, 3}, {3, 1}),      // identity view
             node("copy", {v1}, {c1}),         // copy of a contiguous value
             view(c1, tr, {3, 2}, {1, 3}),     // transpose: kept
             view(tr, tr2, {3, 2}, {1, 3}),    // same geometry as its base: identity
             node("copy", {tr2}, {c2}),        // copy of a transposed view: kept (makes it contiguous)
             node("neg", {c2}, {y})};
  g.outputs = {{"y", y}};
  Graph after = remove_identities(g);
  EXPECT_EQ(after.str(),
            "input x = %0: float32[2, 3]\n"
            "%1: float32[3, 2] = as_strided(%0) {sizes=[3, 2], strides=[1, 3], offset=0}\n"
            "%2: float32[3, 2] = copy(%1)\n"
            "%3: float32[3, 2] = neg(%2)\n"
            "output y = %3\n");
  Tensor in = randn({2, 3});
  EXPECT_TRUE(equal(run(after, {in})[0], run(g, {in})[0]));
  EXPECT_TRUE(equal(run(after, {in})[0], neg(in.t())));
}

TEST(RemoveIdentities, KeepsOffsetViewsAndSymbolicStrides) {
  Graph g;
  TensorType t{kFloat32, {{4, ""}}}, half{kFloat32, {{2, ""}}};
  const int x = g.add_value(t), s = g.add_value(half), y = g.add_value(half);
  g.inputs = {{"x", x}};
  g.nodes = {view(x, s, {2}, {1}, 2), node("neg", {s}, {y})};
  g.outputs = {{"y", y}};
  EXPECT_EQ(remove_identities(g).nodes.size(), 2u) << "a slice is not an identity";
  // [batch, 3] -> [batch, 3] with strides [3, 1]: an identity for every batch;
  // [3, batch] has the symbolic stride batch: not provable, kept.
  Graph d;
  TensorType bt{kFloat32, {{2, "batch"}, {3, ""}}}, tb{kFloat32, {{3, ""}, {2, "batch"}}};
  const int a = d.add_value(bt), va = d.add_value(bt), b = d.add_value(tb), vb = d.add_value(tb);
  d.inputs = {{"a", a}, {"b", b}};
  Node n1 = view(a, va, {2, 3}, {3, 1});
  n1.sym_attrs = {{"sizes", {"batch", "3"}}};
  Node n2 = view(b, vb, {3, 2}, {2, 1});
  n2.sym_attrs = {{"sizes", {"3", "batch"}}, {"strides", {"batch", "1"}}};
  d.nodes = {n1, n2};
  d.outputs = {{"va", va}, {"vb", vb}};
  Graph after = remove_identities(d);
  ASSERT_EQ(after.nodes.size(), 1u);
  EXPECT_EQ(after.outputs[0].value, after.inputs[0].value);
}

TEST(FoldConstants, NodesOfConstantsBecomeConstants) {
  Graph g;
  TensorType t{kFloat32, {{3, ""}}};
  const int x = g.add_value(t), c = g.add_value(t), e = g.add_value(t), e2 = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"c", c, Constant::Kind::Inline, tensor<float>({1, 2, 3}, {3})}};
  g.nodes = {node("exp", {c}, {e}), node("neg", {e}, {e2}), node("mul", {x, e2}, {y})};
  g.outputs = {{"y", y}};
  Graph after = fold_constants(g);
  EXPECT_EQ(after.str(),
            "input x = %0: float32[3]\n"
            "constant folded.2 = %1: float32[3]\n"
            "%2: float32[3] = mul(%0, %1)\n"
            "output y = %2\n");
  ASSERT_EQ(after.constants.size(), 1u);
  EXPECT_TRUE(equal(after.constants[0].data, neg(exp(tensor<float>({1, 2, 3}, {3})))));
  Tensor in = randn({3});
  EXPECT_TRUE(equal(run(after, {in})[0], run(g, {in})[0]));
  EXPECT_NO_THROW(check_graph(after));
}

TEST(FoldConstants, KeepsViewsOfWeights) {
  Graph g;
  TensorType w{kFloat32, {{2, ""}, {3, ""}}}, wt{kFloat32, {{3, ""}, {2, ""}}};
  const int c = g.add_value(w), v = g.add_value(wt);
  g.constants = {{"fc.weight", c, Constant::Kind::Parameter, randn({2, 3})}};
  g.nodes = {view(c, v, {3, 2}, {1, 3})};
  g.outputs = {{"y", v}};
  Graph after = fold_constants(g);
  EXPECT_EQ(after.nodes.size(), 1u);
  EXPECT_EQ(after.constants[0].name, "fc.weight");
}

std::unique_ptr<train::CNN> trained_cnn(int64_t h, std::vector<int64_t> channels) {
  train::CNNOptions o;
  o.in_channels = 1, o.height = h, o.width = h, o.num_classes = 5;
  o.channels = std::move(channels);
  o.hidden = 16;
  auto mp = std::make_unique<train::CNN>(o);
  train::CNN& m = *mp;
  // Non-trivial running statistics and affine parameters, so folding them matters.
  m.train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 3; ++i) m.forward(randn({6, 1, h, h}) * 2 + 0.5);
    for (auto& [name, p] : m.named_parameters())
      if (name.find("1.") == 0 || name.find("5.") == 0) p.copy_(randn(p.sizes().vec()) * 0.5 + 1);
  }
  m.eval();
  return mp;
}

constexpr Tolerance kTol{1e-5, 1e-6};

TEST(FoldBatchNorm, ConvBatchNormBecomesOneConv) {
  manual_seed(11);
  auto mp = trained_cnn(12, {4, 8});
  train::CNN& m = *mp;
  Graph g = trace(m, {randn({2, 1, 12, 12})});
  ASSERT_EQ(count_kind(g, "batch_norm_apply"), 2);
  Graph after = fold_batch_norm(g);
  SCOPED_TRACE(after.str());
  EXPECT_EQ(count_kind(after, "batch_norm_apply"), 0);
  EXPECT_EQ(count_kind(after, "conv2d"), 2);
  EXPECT_EQ(after.nodes.size(), g.nodes.size() - 2);
  // The BN statistics and the old conv weights are gone; the folded ones replace them.
  int folded = 0;
  for (const Constant& c : after.constants) {
    EXPECT_EQ(c.name.find("running_"), std::string::npos) << c.name;
    folded += c.name.find(".bn_folded") != std::string::npos;
  }
  EXPECT_EQ(folded, 4);
  EXPECT_NO_THROW(check_graph(after));
  for (int i = 0; i < 2; ++i) {
    VerifyResult r = verify(m, after, {randn({2, 1, 12, 12})}, kTol);
    EXPECT_TRUE(r.ok) << r.str();
    EXPECT_GT(r.outputs[0].max_abs, 0.0) << "folding rounds differently; a zero difference means nothing was folded";
  }
}

TEST(FoldBatchNorm, NotWhenTheConvOutputHasAnotherUser) {
  Graph g;
  TensorType x{kFloat32, {{1, ""}, {2, ""}, {3, ""}, {3, ""}}}, w{kFloat32, {{2, ""}, {2, ""}, {1, ""}, {1, ""}}};
  TensorType ch{kFloat32, {{2, ""}}};
  const int in = g.add_value(x), wv = g.add_value(w), mean = g.add_value(ch), var = g.add_value(ch);
  const int conv = g.add_value(x), bn = g.add_value(x), y = g.add_value(x);
  g.inputs = {{"x", in}};
  g.constants = {{"w", wv, Constant::Kind::Parameter, randn({2, 2, 1, 1})},
                 {"m", mean, Constant::Kind::Buffer, randn({2})},
                 {"v", var, Constant::Kind::Buffer, rand({2}) + 0.5}};
  Node c = node("conv2d", {in, wv}, {conv});
  c.attrs = {{"stride", std::vector<int64_t>{1, 1}}, {"dilation", std::vector<int64_t>{1, 1}},
             {"padding", std::vector<int64_t>{0, 0, 0, 0}}, {"groups", int64_t{1}}};
  Node b = node("batch_norm_apply", {conv, mean, var}, {bn});
  b.attrs = {{"eps", 1e-5}};
  g.nodes = {c, b, node("add", {bn, conv}, {y})};
  g.outputs = {{"y", y}};
  EXPECT_EQ(count_kind(fold_batch_norm(g), "batch_norm_apply"), 1);
  g.nodes[2] = node("neg", {bn}, {y});  // now the BN is the conv's only user; no gamma/beta, no conv bias
  Graph after = fold_batch_norm(g);
  EXPECT_EQ(after.str().find("batch_norm"), std::string::npos) << after.str();
  Tensor t = randn({1, 2, 3, 3});
  Tensor a = run(after, {t})[0], e = run(g, {t})[0];
  EXPECT_TRUE(allclose(a, e, 1e-5, 1e-6)) << (a - e).abs().max().item<float>();
}

TEST(FuseActivations, ConvAndMatmulAbsorbTheirRelu) {
  manual_seed(12);
  auto mp = trained_cnn(12, {4, 8});
  train::CNN& m = *mp;
  Graph g1 = optimize(trace(m, {randn({2, 1, 12, 12})}), 1).graph;
  ASSERT_EQ(count_kind(g1, "relu"), 3);
  Graph g2 = fuse_activations(g1);
  SCOPED_TRACE(g2.str());
  EXPECT_EQ(count_kind(g2, "relu"), 0);
  EXPECT_EQ(g2.nodes.size(), g1.nodes.size() - 3);
  int fused = 0;
  for (const Node& n : g2.nodes)
    if (const AttrValue* a = n.find("activation")) fused += std::get<std::string>(*a) == "relu";
  EXPECT_EQ(fused, 3);
  for (int i = 0; i < 2; ++i) {
    Tensor x = randn({2, 1, 12, 12});
    EXPECT_TRUE(equal(run(g2, {x})[0], run(g1, {x})[0])) << "the fused activation is the same kernel, in place";
  }
}

TEST(FuseActivations, SiluAndGeluAndNotASharedOutput) {
  Graph g;
  TensorType a{kFloat32, {{2, ""}, {3, ""}}}, b{kFloat32, {{3, ""}, {4, ""}}}, o{kFloat32, {{2, ""}, {4, ""}}};
  const int x = g.add_value(a), w = g.add_value(b), mm = g.add_value(o), s = g.add_value(o);
  const int mm2 = g.add_value(o), ge = g.add_value(o), y = g.add_value(o);
  g.inputs = {{"x", x}};
  g.constants = {{"w", w, Constant::Kind::Parameter, randn({3, 4})}};
  Node m1 = node("matmul", {x, w, kNoValue, kNoValue}, {mm});
  m1.attrs = {{"alpha", Scalar(1.0)}, {"beta", Scalar(0.0)}};
  Node m2 = m1;
  m2.outputs = {mm2};
  g.nodes = {m1, node("silu", {mm}, {s}), m2, node("gelu", {mm2}, {ge}), node("add", {ge, mm2}, {y})};
  g.outputs = {{"s", s}, {"y", y}};
  Graph after = fuse_activations(g);
  EXPECT_EQ(count_kind(after, "silu"), 0);
  EXPECT_EQ(count_kind(after, "gelu"), 1) << "mm2 has another user (the add)";
  Tensor in = randn({2, 3});
  std::vector<Tensor> ra = run(after, {in}), rb = run(g, {in});
  EXPECT_TRUE(equal(ra[0], rb[0]));
  EXPECT_TRUE(equal(ra[1], rb[1]));
}

TEST(FusePooling, ConvReluPoolBecomesOneNode) {
  manual_seed(16);
  auto mp = trained_cnn(12, {4, 8});
  train::CNN& m = *mp;
  Graph g1 = fuse_activations(optimize(trace(m, {randn({3, 1, 12, 12})}), 1).graph);
  ASSERT_EQ(count_kind(g1, "max_pool2d"), 2);
  Graph g2 = fuse_pooling(g1);
  SCOPED_TRACE(g2.str());
  EXPECT_EQ(count_kind(g2, "max_pool2d"), 0);
  EXPECT_EQ(g2.nodes.size(), g1.nodes.size() - 2);
  int pooled = 0;
  for (const Node& n : g2.nodes)
    if (n.kind == "conv2d") {
      ASSERT_NE(n.find("pool"), nullptr);
      EXPECT_EQ(std::get<std::string>(*n.find("pool")), "max");
      EXPECT_EQ(n.attr_ints("pool_kernel_size"), (std::vector<int64_t>{2, 2}));
      EXPECT_EQ(std::get<std::string>(*n.find("activation")), "relu");
      ++pooled;
    }
  EXPECT_EQ(pooled, 2);
  // conv_small_cin (1 input channel) and oneDNN (4 -> 8) both compute each
  // image alone, so chunking leaves the values bitwise unchanged here.
  for (int i = 0; i < 2; ++i) {
    Tensor x = randn({3, 1, 12, 12});
    EXPECT_TRUE(allclose(run(g2, {x})[0], run(g1, {x})[0], 1e-6, 1e-7));
  }
}

TEST(FusePooling, ManyChunksAndAvgPoolAndSharedOutputs) {
  // A conv output of 32 x 64 x 64 floats (512 KiB) per image: 2 images per
  // chunk, so 5 images run as chunks of 2, 2 and 1.
  manual_seed(17);
  nn::Conv2d conv(3, 32, 3, 1, 1);
  conv.eval();
  auto fn = [&](const std::vector<Tensor>& in) {
    Tensor y = relu(conv.forward(in[0]));
    return std::vector<Tensor>{avg_pool2d(y, {3, 3}, {2, 2}, {1, 1})};
  };
  Graph g = optimize(trace(conv, fn, {randn({5, 3, 64, 64})}), 2).graph;
  ASSERT_EQ(count_kind(g, "avg_pool2d"), 0) << g.str();
  Tensor x = randn({5, 3, 64, 64});
  NoGradGuard ng;
  EXPECT_TRUE(allclose(run(g, {x})[0], fn({x})[0], 1e-5, 1e-6));
  // A conv output that something else also reads keeps its pool separate.
  auto two = [&](const std::vector<Tensor>& in) {
    Tensor y = conv.forward(in[0]);
    return std::vector<Tensor>{max_pool2d(y, {2, 2}), y.sum()};
  };
  Graph g2 = optimize(trace(conv, two, {randn({2, 3, 8, 8})}), 2).graph;
  EXPECT_EQ(count_kind(g2, "max_pool2d"), 1) << g2.str();
}

TEST(Optimize, LevelsAndRecords) {
  manual_seed(13);
  auto mp = trained_cnn(12, {4, 8});
  train::CNN& m = *mp;
  Graph g = trace(m, {randn({2, 1, 12, 12})});
  EXPECT_TRUE(optimize(g, 0).passes.empty());
  EXPECT_EQ(optimize(g, 0).graph.str(), g.str());
  OptimizeResult r1 = optimize(g, 1), r2 = optimize(g, 2);
  EXPECT_EQ(r1.passes.size(), 4u);
  EXPECT_EQ(r2.passes.size(), 11u);
  EXPECT_EQ(r2.passes[7].pass, "fuse_pooling");
  EXPECT_EQ(r2.passes[9].pass, "select_kernels");
  EXPECT_EQ(r2.passes.back().pass, "propagate_layouts");
  EXPECT_EQ(r1.passes.front().nodes_before, static_cast<int64_t>(g.nodes.size()));
  EXPECT_EQ(r2.passes.back().nodes_after, static_cast<int64_t>(r2.graph.nodes.size()));
  EXPECT_LT(r1.graph.nodes.size(), g.nodes.size());
  EXPECT_LT(r2.graph.nodes.size(), r1.graph.nodes.size());
  // The flatten [2, 8, 3, 3] -> [2, 72] and the two weight transposes stay; the 4 no-op views go.
  EXPECT_EQ(count_kind(g, "as_strided"), 7);
  EXPECT_EQ(count_kind(r2.graph, "as_strided"), 3) << r2.graph.str();
  EXPECT_NE(r1.str().find("fold_batch_norm: "), std::string::npos) << r1.str();
  EXPECT_THROW(optimize(g, 3), Error);
  EXPECT_THROW(optimize(g, -1), Error);
}

// Every zoo model: optimised graphs agree with eager within fp32 tolerance.
void check_levels(nn::Module& m, const std::vector<Tensor>& example, const std::vector<Tensor>& other) {
  auto fn = [&m](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
  Graph g = trace(m, fn, example);
  for (int level = 1; level <= kMaxOptimizeLevel; ++level) {
    SCOPED_TRACE(level);
    OptimizeResult r = optimize(g, level);
    EXPECT_LE(r.graph.nodes.size(), g.nodes.size());
    for (const auto& in : {example, other}) {
      VerifyResult v = verify(m, fn, r.graph, in, kTol);
      EXPECT_TRUE(v.ok) << v.str() << r.str();
    }
  }
}

TEST(OptimizeNumerics, ZooModelsWithinTolerance) {
  manual_seed(14);
  {
    SCOPED_TRACE("mlp");
    train::MLPOptions o;
    o.in_features = 12, o.hidden = {16, 8}, o.out_features = 3, o.dropout = 0.5;
    train::MLP m(o);
    m.eval();
    check_levels(m, {randn({4, 12})}, {randn({4, 12})});
  }
  {
    SCOPED_TRACE("cnn");
    auto mp = trained_cnn(16, {4, 8});
  train::CNN& m = *mp;
    check_levels(m, {randn({3, 1, 16, 16})}, {randn({3, 1, 16, 16})});
  }
  {
    SCOPED_TRACE("resnet");
    train::ResNetOptions o;
    o.depth = 18, o.in_channels = 3, o.num_classes = 4, o.width = 4;
    train::ResNet m(o);
    m.train();
    {
      NoGradGuard ng;
      m.forward(randn({4, 3, 8, 8}));
    }
    m.eval();
    check_levels(m, {randn({2, 3, 8, 8})}, {randn({2, 3, 8, 8})});
  }
  {
    SCOPED_TRACE("lstm");
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    train::LSTMClassifier m(o);
    check_levels(m, {randint(0, 20, {3, 7})}, {randint(0, 20, {3, 7})});
  }
  {
    SCOPED_TRACE("transformer");
    train::TransformerClassifierOptions o;
    o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
    o.num_classes = 3;
    train::TransformerClassifier m(o);
    check_levels(m, {randint(0, 30, {2, 9})}, {randint(0, 30, {2, 9})});
  }
}

TEST(OptimizeNumerics, DynamicBatchGraphStaysDynamic) {
  manual_seed(15);
  auto mp = trained_cnn(12, {4, 8});
  train::CNN& m = *mp;
  TraceOptions opts;
  opts.dynamic_dims = {{0, 0, "batch"}};
  Graph g = trace(m, {randn({2, 1, 12, 12})}, opts);
  Graph o = optimize(g, 2).graph;
  EXPECT_EQ(count_kind(o, "batch_norm_apply"), 0);
  EXPECT_EQ(count_kind(o, "relu"), 0);
  for (int64_t n : {1, 7}) {
    VerifyResult v = verify(m, o, {randn({n, 1, 12, 12})}, kTol);
    EXPECT_TRUE(v.ok) << n << ": " << v.str();
  }
}

}  // namespace
}  // namespace ember::jit

// The memory plan (Note [memory plan]): blocks, in-place results and views
// on hand-built graphs; then zoo models run from the arena bitwise equal to
// eager, a steady-state Session run that allocates only what it returns, and
// a peak below eager's.
#include <gtest/gtest.h>

#include <thread>

#include "ember/core/allocator.h"
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "graph_test_util.h"
#include "ember/jit/memory_plan.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

using testing::node;

Node view(int in, int out, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  Node n = node("as_strided", {in}, {out});
  n.attrs = {{"sizes", sizes}, {"strides", strides}, {"offset", int64_t{0}}};
  return n;
}

std::vector<std::vector<int64_t>> traced_sizes(const Graph& g) {
  std::vector<std::vector<int64_t>> s;
  for (const Value& v : g.values) s.push_back(v.type.sizes());
  return s;
}

TEST(MemoryPlan, ElementwiseChainRunsInOneBlockInPlace) {
  // y = exp(-relu(x)) * x: relu's result gets a block, neg and exp write over
  // it, and y (returned) stays out of the arena.
  Graph g;
  TensorType t{kFloat32, {{256, ""}}};
  const int x = g.add_value(t), a = g.add_value(t), b = g.add_value(t), c = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}};
  g.nodes = {node("relu", {x}, {a}), node("neg", {a}, {b}), node("exp", {b}, {c}), node("mul", {c, x}, {y})};
  g.outputs = {{"y", y}};
  check_graph(g);
  MemoryPlan p = plan_memory(g, traced_sizes(g));
  EXPECT_EQ(p.planned_values, 3);
  EXPECT_EQ(p.in_place_values, 2);
  ASSERT_EQ(p.blocks.size(), 1u);
  EXPECT_EQ(p.arena_bytes, 1024);
  EXPECT_EQ(p.unshared_bytes, 3 * 1024);
  EXPECT_EQ(p.block_of[static_cast<size_t>(y)], -1);
  EXPECT_EQ(p.blocks[0].first, 0);
  EXPECT_EQ(p.blocks[0].last, 3);

  PreparedGraph prepared(g, {});
  for (int rep = 0; rep < 3; ++rep) {  // reused state: the same answers every time
    Tensor in = randn({256});
    Tensor out = prepared.run({in})[0];
    EXPECT_TRUE(allclose(out, exp(-relu(in)) * in, 1e-6, 1e-7)) << rep;
  }
}

TEST(MemoryPlan, LiveValuesGetDisjointBlocksAndDeadOnesAreReused) {
  // a = relu(x) and b = neg(x) are alive together; c = a * b goes over a;
  // d = sum(c) is small; e = exp(x) is defined after a, b, c died and
  // reuses their space.
  Graph g;
  TensorType t{kFloat32, {{1024, ""}}};
  const int x = g.add_value(t), a = g.add_value(t), b = g.add_value(t), c = g.add_value(t);
  const int d = g.add_value({kFloat32, {{1, ""}}}), e = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}};
  Node sum = node("sum", {c}, {d, kNoValue});
  sum.attrs = {{"outer", int64_t{1}}, {"reduce", int64_t{1024}}, {"inner", int64_t{1}}, {"out_dtype", kFloat32},
               {"scale", 1.0}, {"p", 2.0}, {"correction", 0.0}, {"take_sqrt", false}};
  g.nodes = {node("relu", {x}, {a}), node("neg", {x}, {b}), node("mul", {a, b}, {c}), sum,
             node("exp", {x}, {e}), node("mul", {e, d}, {y})};
  g.outputs = {{"y", y}};
  check_graph(g);
  MemoryPlan p = plan_memory(g, traced_sizes(g));
  const auto blk = [&](int v) { return p.blocks[static_cast<size_t>(p.block_of[static_cast<size_t>(v)])]; };
  EXPECT_NE(blk(a).offset, blk(b).offset);
  EXPECT_EQ(p.block_of[static_cast<size_t>(c)], p.block_of[static_cast<size_t>(a)]);  // in place
  EXPECT_EQ(p.in_place_values, 1);
  // Two 4 KiB blocks at once at most: a/c with b, then d (64 bytes, from the
  // sum at node 3) in b's freed space while e takes a's.
  EXPECT_EQ(p.arena_bytes, 2 * 4096);
  EXPECT_EQ(p.unshared_bytes, 4 * 4096 + 64);
  EXPECT_EQ(blk(e).offset, blk(a).offset);
  EXPECT_EQ(blk(d).offset, blk(b).offset);

  Tensor in = randn({1024});
  Tensor out = PreparedGraph(g, {}).run({in})[0];
  Tensor want = exp(in) * (relu(in) * -in).sum();
  EXPECT_TRUE(allclose(out, want, 1e-5, 1e-5));
}

TEST(MemoryPlan, AViewKeepsItsBaseAlive) {
  // v views a (transposed); b is defined while v is still to be read, so it
  // may not take a's block.
  Graph g;
  TensorType t{kFloat32, {{4, ""}, {8, ""}}}, tt{kFloat32, {{8, ""}, {4, ""}}};
  const int x = g.add_value(t), a = g.add_value(t), v = g.add_value(tt), b = g.add_value(t), c = g.add_value(tt);
  const int y = g.add_value(tt);
  g.inputs = {{"x", x}};
  g.nodes = {node("relu", {x}, {a}), view(a, v, {8, 4}, {1, 8}), node("neg", {x}, {b}), node("exp", {v}, {c}),
             view(b, y, {8, 4}, {1, 8})};
  g.nodes.push_back(node("add", {c, y}, {g.add_value(tt)}));
  g.outputs = {{"out", g.nodes.back().outputs[0]}};
  check_graph(g);
  MemoryPlan p = plan_memory(g, traced_sizes(g));
  const auto blk = [&](int val) { return p.blocks[static_cast<size_t>(p.block_of[static_cast<size_t>(val)])]; };
  EXPECT_EQ(p.block_of[static_cast<size_t>(v)], -1);  // views own no block
  EXPECT_EQ(blk(a).last, 3);                          // exp reads a through v
  EXPECT_EQ(blk(b).last, 5);                          // add reads b through y
  EXPECT_NE(blk(a).offset, blk(b).offset);

  Tensor in = randn({4, 8});
  Tensor out = PreparedGraph(g, {}).run({in})[0];
  EXPECT_TRUE(allclose(out, exp(relu(in).t()) + (-in).t(), 1e-6, 1e-7));
}

train::CNNOptions cnn_options() {
  train::CNNOptions o;
  o.in_channels = 1, o.height = 16, o.width = 16, o.num_classes = 5;
  o.channels = {8, 16};
  o.hidden = 32;
  return o;
}

TEST(MemoryPlan, ZooModelsFromTheArenaAreBitwiseEagerAtEveryLevel) {
  manual_seed(41);
  train::CNN cnn(cnn_options());
  cnn.eval();
  train::ResNetOptions ro;
  ro.depth = 18, ro.in_channels = 3, ro.num_classes = 4, ro.width = 4;
  train::ResNet resnet(ro);
  resnet.eval();
  train::TransformerClassifierOptions to;
  to.vocab_size = 30, to.d_model = 8, to.nhead = 2, to.num_layers = 2, to.dim_feedforward = 16, to.max_len = 16;
  to.num_classes = 3;
  train::TransformerClassifier transformer(to);
  transformer.eval();
  struct Case {
    const char* name;
    nn::Module* m;
    std::function<Tensor()> input;
  } cases[] = {{"cnn", &cnn, [] { return randn({4, 1, 16, 16}); }},
               {"resnet", &resnet, [] { return randn({2, 3, 8, 8}); }},
               {"transformer", &transformer, [] { return randint(0, 30, {2, 9}); }}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    Graph g = trace(*k.m, {k.input()});
    for (int level = 0; level <= kMaxOptimizeLevel; ++level) {
      Graph o = optimize(g, level).graph;
      PreparedGraph prepared(o, {});
      const MemoryPlan& p = prepared.memory_plan();
      EXPECT_GT(p.planned_values, 0) << level;
      EXPECT_LT(p.arena_bytes, p.unshared_bytes) << level;
      for (int rep = 0; rep < 2; ++rep) {
        Tensor x = k.input();
        Tensor got = prepared.run({x})[0];
        NoGradGuard ng;
        Tensor want = k.m->forward(x);
        if (level == 0) EXPECT_TRUE(equal(got, want)) << level << " rep " << rep;
        else EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << level << " rep " << rep;
      }
    }
  }
}

ModelFile cnn_model(train::CNN& m, int level) {
  TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}};
  ModelFile f;
  f.graph = optimize(trace(m, {randn({4, 1, 16, 16})}, o), level).graph;
  return f;
}

TEST(MemoryPlan, SteadyStateSessionRunAllocatesOnlyItsOutput) {
  manual_seed(42);
  train::CNN m(cnn_options());
  m.eval();
  runtime::Session s(cnn_model(m, 2));
  for (int64_t batch : {8, 3}) {
    Tensor x = randn({batch, 1, 16, 16});
    (void)s.run(std::vector<Tensor>{x});  // builds this size's arena
    const uint64_t before = cpu_alloc_calls_on_this_thread();
    const size_t held = cpu_allocator_stats().allocated_bytes;
    for (int rep = 0; rep < 3; ++rep) {
      Tensor y = s.run(std::vector<Tensor>{x})[0];
      EXPECT_EQ(y.size(0), batch);
    }
    // One allocation per run: the logits it returns.
    EXPECT_EQ(cpu_alloc_calls_on_this_thread() - before, 3u) << batch;
    EXPECT_EQ(cpu_allocator_stats().allocated_bytes, held) << batch;
  }
}

TEST(MemoryPlan, SteadyStatePeakIsTheOutputAndThreadsGetTheirOwnArena) {
  manual_seed(43);
  train::CNN m(cnn_options());
  m.eval();
  Tensor x = randn({64, 1, 16, 16});
  Tensor want;
  int64_t eager_peak = 0, plan_peak = 0;
  {
    NoGradGuard ng;
    (void)m.forward(x);
    cpu_reset_peak_allocated_bytes();
    const int64_t base = static_cast<int64_t>(cpu_allocator_stats().allocated_bytes);
    want = m.forward(x);
    eager_peak = static_cast<int64_t>(cpu_allocator_stats().peak_allocated_bytes) - base;
  }
  runtime::Session s(cnn_model(m, 2));
  (void)s.run(std::vector<Tensor>{x});  // the arena and the kernels' scratch, once
  {
    cpu_reset_peak_allocated_bytes();
    const int64_t base = static_cast<int64_t>(cpu_allocator_stats().allocated_bytes);
    Tensor got = s.run(std::vector<Tensor>{x})[0];
    plan_peak = static_cast<int64_t>(cpu_allocator_stats().peak_allocated_bytes) - base;
    EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  }
  // Eager holds two 512 KiB activations at once (conv and BatchNorm outputs);
  // a steady-state run allocates only its [64, 5] float32 logits (1280 bytes;
  // 0 when the thread's cache of small blocks serves them).
  EXPECT_GE(eager_peak, 1 << 20);
  EXPECT_LE(plan_peak, 1280) << "eager " << eager_peak;
  // Two threads at two batch sizes at once: each call borrows its own arena.
  std::vector<Tensor> ins = {randn({5, 1, 16, 16}), randn({64, 1, 16, 16})}, refs;
  {
    NoGradGuard ng;
    for (const Tensor& in : ins) refs.push_back(m.forward(in));
  }
  std::vector<std::thread> threads;
  std::vector<int> bad(2, 0);
  for (size_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep)
        if (!allclose(s.run(std::vector<Tensor>{ins[t]})[0], refs[t], 1e-5, 1e-6)) ++bad[t];
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, (std::vector<int>{0, 0}));
}

}  // namespace
}  // namespace ember::jit

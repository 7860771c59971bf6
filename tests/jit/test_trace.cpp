// jit::trace + the interpreter + verify: every zoo model traces, and its graph
// reproduces the eager forward bit for bit; data-dependent code fails the trace.
#include <gtest/gtest.h>

#include <set>

#include "core/op_registry.h"

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/trace.h"
#include "ember/jit/verify.h"
#include "graph_test_util.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

using testing::count_kind;

bool has_constant(const Graph& g, const std::string& name, Constant::Kind kind) {
  for (const Constant& c : g.constants)
    if (c.name == name) return c.kind == kind;
  return false;
}

// Traces, checks bitwise equality on the example and on a second input of the
// same shape (the graph must not have baked the example's values in).
void trace_and_verify(nn::Module& m, const TraceFn& fn, const std::vector<Tensor>& example,
                      const std::vector<Tensor>& other) {
  Graph g = trace(m, fn, example);
  SCOPED_TRACE(g.str());
  VerifyResult r = verify(m, fn, g, example);
  EXPECT_TRUE(r.ok) << r.str();
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(r.outputs[0].bitwise_equal);
  EXPECT_EQ(r.outputs[0].max_abs, 0.0);
  VerifyResult r2 = verify(m, fn, g, other);
  EXPECT_TRUE(r2.ok) << r2.str();
  EXPECT_TRUE(r2.outputs[0].bitwise_equal);
}

TraceFn forward_of(nn::Module& m) {
  return [&m](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
}

TEST(Trace, MLPGraphHasNamedParametersAndMatmuls) {
  manual_seed(1);
  train::MLPOptions o;
  o.in_features = 12;
  o.hidden = {16, 8};
  o.out_features = 3;
  train::MLP m(o);
  Graph g = trace(m, {randn({4, 12})});
  EXPECT_EQ(count_kind(g, "matmul"), 3);
  EXPECT_EQ(count_kind(g, "relu"), 2);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "input0");
  EXPECT_EQ(g.type(g.inputs[0].value).str(), "float32[4, 12]");
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.type(g.outputs[0].value).str(), "float32[4, 3]");
  for (const auto& [name, p] : m.named_parameters()) EXPECT_TRUE(has_constant(g, name, Constant::Kind::Parameter)) << name;
  EXPECT_NO_THROW(check_graph(g));
  trace_and_verify(m, forward_of(m), {randn({4, 12})}, {randn({4, 12})});
}

TEST(Trace, ModuleModeIsRestoredAndEvalIsTraced) {
  manual_seed(2);
  train::MLPOptions o;
  o.in_features = 6;
  o.hidden = {8};
  o.out_features = 2;
  o.dropout = 0.5;
  train::MLP m(o);
  m.train();
  Graph g = trace(m, {randn({3, 6})});  // dropout in eval mode: no random op, so the trace succeeds
  EXPECT_TRUE(m.is_training());
  VerifyResult r = verify(m, g, {randn({3, 6})});
  EXPECT_TRUE(r.ok) << r.str();
  EXPECT_TRUE(m.is_training());
}

TEST(Trace, CNNWithBatchNormVerifiesBitwise) {
  manual_seed(3);
  train::CNNOptions o;
  o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
  o.channels = {4, 8};
  o.hidden = 16;
  train::CNN m(o);
  // Non-trivial running statistics, so the folded batch norm matters.
  m.train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 3; ++i) m.forward(randn({6, 1, 12, 12}));
  }
  Graph g = trace(m, {randn({2, 1, 12, 12})});
  EXPECT_EQ(count_kind(g, "conv2d"), 2);
  EXPECT_EQ(count_kind(g, "batch_norm_apply"), 2);
  EXPECT_GE(count_kind(g, "max_pool2d"), 2);
  bool has_running_mean = false;
  for (const Constant& c : g.constants) has_running_mean |= c.kind == Constant::Kind::Buffer;
  EXPECT_TRUE(has_running_mean);
  trace_and_verify(m, forward_of(m), {randn({2, 1, 12, 12})}, {randn({2, 1, 12, 12})});
}

TEST(Trace, ResNetVerifiesBitwise) {
  manual_seed(4);
  train::ResNetOptions o;
  o.depth = 18, o.in_channels = 3, o.num_classes = 4, o.width = 4;
  train::ResNet m(o);
  trace_and_verify(m, forward_of(m), {randn({2, 3, 8, 8})}, {randn({2, 3, 8, 8})});
}

TEST(Trace, LSTMClassifierVerifiesBitwise) {
  manual_seed(5);
  for (std::string cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    train::LSTMClassifier m(o);
    Tensor tokens = randint(0, 20, {3, 7});
    trace_and_verify(m, forward_of(m), {tokens}, {randint(0, 20, {3, 7})});
  }
}

TEST(Trace, TransformerClassifierVerifiesBitwise) {
  manual_seed(6);
  train::TransformerClassifierOptions o;
  o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
  o.num_classes = 3;
  train::TransformerClassifier m(o);
  trace_and_verify(m, forward_of(m), {randint(0, 30, {2, 9})}, {randint(0, 30, {2, 9})});
  // With its padding mask: the mask is computed from the lengths input by
  // tensor ops (the lengths' range check is left out while tracing).
  auto with_lengths = [&m](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0], in[1])}; };
  trace_and_verify(m, with_lengths, {randint(0, 30, {2, 9}), tensor<int64_t>({9, 4}, {2})},
                   {randint(0, 30, {2, 9}), tensor<int64_t>({2, 7}, {2})});
}

// A module whose control flow depends on its input's values.
class DataDependent : public nn::Module {
 public:
  DataDependent() : nn::Module("DataDependent") {
    fc = register_module("fc", std::make_shared<nn::Linear>(4, 4));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = fc->forward(x);
    if (h.sum().item<double>() > 0) return relu(h);
    return -h;
  }
  std::shared_ptr<nn::Linear> fc;
};

TEST(Trace, HostReadOfTracedValueRaisesNamingOpAndModule) {
  manual_seed(7);
  DataDependent m;
  try {
    trace(m, {randn({2, 4})});
    FAIL() << "expected TracingError";
  } catch (const TracingError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("item()"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'sum'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("near module 'fc'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("strict=false"), std::string::npos) << msg;
  }
}

TEST(Trace, NonStrictWarnsAndBakesTheBranch) {
  manual_seed(8);
  DataDependent m;
  std::vector<std::string> warnings;
  TraceOptions opts;
  opts.strict = false;
  opts.warn = [&](const std::string& w) { warnings.push_back(w); };
  Tensor x = randn({2, 4});
  Graph g = trace(m, {x}, opts);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("item()"), std::string::npos);
  // On the example itself the baked branch is the taken one.
  EXPECT_TRUE(verify(m, g, {x}).ok);
}

TEST(Trace, HostReadOfConstantIsAllowed) {
  // Reading a parameter on the host does not depend on the input.
  class ReadsWeight : public nn::Module {
   public:
    ReadsWeight() : nn::Module("ReadsWeight") { w = register_parameter("w", ones({1})); }
    Tensor forward(const Tensor& x) override { return x * w.item<double>(); }
    Tensor w;
  } m;
  Graph g = trace(m, {randn({3})});
  EXPECT_TRUE(verify(m, g, {randn({3})}).ok);
}

TEST(Trace, RandomOpFailsWithItsName) {
  class Noisy : public nn::Module {
   public:
    Noisy() : nn::Module("Noisy") {}
    Tensor forward(const Tensor& x) override { return x + randn(x.sizes()); }
  } m;
  try {
    trace(m, {randn({3})});
    FAIL() << "expected TracingError";
  } catch (const TracingError& e) {
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos) << e.what();
  }
}

TEST(Trace, ViewsInPlaceOpsAndConstants) {
  class Mixed : public nn::Module {
   public:
    Mixed() : nn::Module("Mixed") {}
    Tensor forward(const Tensor& x) override {
      Tensor y = x.transpose(0, 1).contiguous();    // view + copy
      y.mul_(2.0);                                  // in place on a traced value
      Tensor z = y.narrow(0, 1, 2) + arange(3, TensorOptions().dtype(kFloat32));  // view + inline constant
      return softmax(flip(z, {1}), 1).sum({0});      // flip view, softmax, reduction
    }
  } m;
  Tensor x = randn({3, 4});
  Graph g = trace(m, {x});
  EXPECT_GE(count_kind(g, "as_strided"), 2);
  EXPECT_EQ(count_kind(g, "softmax"), 1);
  VerifyResult r = verify(m, g, {randn({3, 4})});
  EXPECT_TRUE(r.ok) << r.str() << g.str();
}

TEST(Trace, PartialWriteIntoTracedTensorFails) {
  class Partial : public nn::Module {
   public:
    Partial() : nn::Module("Partial") {}
    Tensor forward(const Tensor& x) override {
      Tensor y = x * 2;
      y.narrow(0, 0, 1).copy_(x.narrow(0, 1, 1));
      return y;
    }
  } m;
  EXPECT_THROW(trace(m, {randn({2, 3})}), TracingError);
}

TEST(Interpreter, ChecksInputSignature) {
  manual_seed(9);
  nn::Linear m(4, 2);
  Graph g = trace(m, {randn({3, 4})});
  EXPECT_EQ(run(g, {randn({3, 4})}).size(), 1u);
  try {
    run(g, {randn({3, 5})});
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("input0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float32[3, 4]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float32[3, 5]"), std::string::npos) << msg;
  }
  EXPECT_THROW(run(g, {randn({3, 4}).to(kFloat64)}), Error);
  EXPECT_THROW(run(g, {}), Error);
}

TEST(Interpreter, RejectsMalformedNodes) {
  manual_seed(10);
  nn::Linear m(4, 2);
  Graph g = trace(m, {randn({3, 4})});
  Graph bad = g;
  // Claim a larger output than the GEMM computes: must fail before the kernel writes.
  for (Node& n : bad.nodes)
    if (n.kind == "matmul") bad.values[static_cast<size_t>(n.outputs[0])].type.shape[0].size = 300;
  EXPECT_THROW(run(bad, {randn({3, 4})}), Error);
  Graph unknown = g;
  unknown.nodes[0].kind = "frobnicate";
  EXPECT_THROW(check_graph(unknown), Error);
  EXPECT_THROW(run(unknown, {randn({3, 4})}), Error);
}

// gather is traced (so are grid_sample and take_along_dim, which gather):
// the graph replays bitwise, at another batch size too; a 0-D gather is refused by name.
TEST(Trace, GatherAndGridSampleReplayBitwise) {
  class Sampler : public nn::Module {
   public:
    Sampler() : nn::Module("Sampler") {}
  } m;
  const TraceFn fn = [](const std::vector<Tensor>& in) {
    Tensor s = grid_sample(in[0], in[1], "bilinear", "border", false);
    Tensor n = grid_sample(in[0], in[1], "nearest", "zeros", true);
    // Indices computed in the graph from the grid, into the 90 values per sample.
    Tensor idx = clamp(floor((in[1].flatten(1) + 1.2) * 37), 0, 89).to(kInt64);
    return std::vector<Tensor>{s, n, take_along_dim(in[0].flatten(1), idx, -1)};
  };
  manual_seed(12);
  const std::vector<Tensor> example{randn({2, 3, 5, 6}), rand({2, 4, 3, 2}) * 2.4 - 1.2};
  TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}, {1, 0, "batch"}};
  const Graph g = trace(m, fn, example, o);
  std::set<std::string> kinds;
  for (const Node& n : g.nodes) kinds.insert(n.kind);
  EXPECT_TRUE(kinds.contains("gather")) << g.str();
  for (const std::vector<Tensor>& in :
       {example, std::vector<Tensor>{randn({3, 3, 5, 6}), rand({3, 4, 3, 2}) * 2.4 - 1.2}}) {
    const std::vector<Tensor> want = fn(in), got = run(g, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(equal(got[i], want[i])) << i;
  }
  const TraceFn scalar = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gather(in[0].sum(), 0, zeros({}, kInt64))};
  };
  try {
    trace(m, scalar, {randn({3})});
    ADD_FAILURE() << "a 0-D gather was traced";
  } catch (const TracingError& e) {
    EXPECT_NE(std::string(e.what()).find("0-D"), std::string::npos) << e.what();
  }
}

// sort and topk are traced: values and indices replay bitwise, with the
// sorted dim symbolic too.
TEST(Trace, SortAndTopkReplayBitwise) {
  class Ranker : public nn::Module {
   public:
    Ranker() : nn::Module("Ranker") {}
  } m;
  const TraceFn fn = [](const std::vector<Tensor>& in) {
    auto [v, i] = sort(in[0], 1, true);
    auto [tv, ti] = topk(in[0], 2, 1, false);
    return std::vector<Tensor>{v, i, argsort(in[0], 0), tv, ti};
  };
  manual_seed(13);
  TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}, {0, 1, "n"}};
  const Graph g = trace(m, fn, {randn({3, 5})}, o);
  EXPECT_EQ(count_kind(g, "sort"), 2);
  EXPECT_EQ(count_kind(g, "topk"), 1);
  for (const Tensor& x : {randn({3, 5}), randn({4, 7})}) {
    const std::vector<Tensor> want = fn({x}), got = run(g, {x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(equal(got[i], want[i])) << i;
  }
}

// scatter and scatter_add are traced (a write over the whole clone becomes a
// new value), so index_put, index_add and index_copy are too.
TEST(Trace, ScatterAndIndexPutReplayBitwise) {
  class Writer : public nn::Module {
   public:
    Writer() : nn::Module("Writer") {}
  } m;
  const Tensor idx = tensor<int64_t>({2, 0, 1, 2, 0, 0}, {2, 3}), rows = tensor<int64_t>({1, 1, 0});
  const TraceFn fn = [&](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &v = in[1];
    return std::vector<Tensor>{scatter(x, 1, idx, v), scatter_add(x, 1, idx, v), index_add(x, 0, rows, v.narrow(0, 0, 1).expand({3, 3}) * 1),
                               index_put(x, {Tensor(), tensor<int64_t>({0, 2})}, v.narrow(1, 0, 2))};
  };
  manual_seed(14);
  const Graph g = trace(m, fn, {randn({2, 3}), randn({2, 3})});
  EXPECT_GE(count_kind(g, "scatter"), 2);
  EXPECT_GE(count_kind(g, "scatter_add"), 2);
  for (int round = 0; round < 2; ++round) {
    const std::vector<Tensor> in{randn({2, 3}), randn({2, 3})};
    const std::vector<Tensor> want = fn(in), got = run(g, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(equal(got[i], want[i])) << i;
  }
}

// Every ops.def row is either replayable or one the tracer refuses by name
// (the hook at its dispatch calls TraceHook::unsupported), or a backward
// kernel a no-grad trace never runs. A new op must be added to one side.
TEST(Interpreter, CoversEveryPrimitiveOrRefusesIt) {
  const std::set<std::string> refused = {"masked_select", "nonzero", "batch_norm_stats", "conv2d_backward_weight"};
  const std::set<std::string> backward_only = {"max_pool2d_backward", "avg_pool2d_backward", "batch_norm_backward",
                                               "adaptive_avg_pool2d_backward", "layer_norm_backward"};
  for (int i = 0; i < kNumOps; ++i) {
    std::string kind(op_name(static_cast<Op>(i)));
    const bool listed = refused.count(kind) || backward_only.count(kind);
    EXPECT_NE(interpreter_supports(kind), listed) << kind;
    EXPECT_TRUE(is_known_kind(kind)) << kind;
  }
  EXPECT_TRUE(interpreter_supports("as_strided"));
  EXPECT_FALSE(interpreter_supports("conv9d"));
}

}  // namespace
}  // namespace ember::jit

// jit::cond and jit::while_loop: eager runs, traced graphs that take the
// branch (iteration count) their inputs select at run time, captures, passes,
// the memory plan, dynamic dims and the .ember file.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/io/safetensors.h"
#include "ember/jit/control_flow.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"

namespace ember::jit {
namespace {

namespace fs = std::filesystem;
using Tensors = std::vector<Tensor>;

const Node* find_node(const Graph& g, const std::string& kind) {
  for (const Node& n : g.nodes)
    if (n.kind == kind) return &n;
  return nullptr;
}

Tensor vec(std::initializer_list<float> v) { return tensor<float>(v, {static_cast<int64_t>(v.size())}); }

void expect_equal(const Tensor& got, const Tensor& want) {
  EXPECT_TRUE(equal(got, want)) << "got " << got.str() << "\nwant " << want.str();
}

class Empty : public nn::Module {
 public:
  Empty() : nn::Module("Empty") {}
};

// h = fc(x) with fc the identity; then: relu(h) + sum(h) (a captured traced
// value); else: -h. Branch on sum(h) > 0.
class Branchy : public nn::Module {
 public:
  Branchy() : nn::Module("Branchy") {
    fc = register_module("fc", std::make_shared<nn::Linear>(4, 4));
    NoGradGuard ng;
    fc->weight.copy_(eye(4));
    fc->bias.zero_();
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = fc->forward(x);
    Tensor s = h.sum();
    return cond(
        gt(s, 0.0), [&](const Tensors& a) { return Tensors{relu(a[0]) + s}; },
        [](const Tensors& a) { return Tensors{-a[0]}; }, {h})[0];
  }
  std::shared_ptr<nn::Linear> fc;
};

TEST(ControlFlow, CondEagerRunsOnlyTheTakenBranch) {
  int then_calls = 0, else_calls = 0;
  auto then_fn = [&](const Tensors& a) { ++then_calls; return Tensors{a[0] * 2.0}; };
  auto else_fn = [&](const Tensors& a) { ++else_calls; return Tensors{a[0] - 1.0}; };
  Tensor x = vec({1, 2});
  expect_equal(cond(scalar_tensor(true), then_fn, else_fn, {x})[0], vec({2, 4}));
  expect_equal(cond(tensor<bool>({false}, {1}), then_fn, else_fn, {x})[0], vec({0, 1}));
  EXPECT_EQ(then_calls, 1);
  EXPECT_EQ(else_calls, 1);
}

TEST(ControlFlow, CondChecksItsArguments) {
  auto id = [](const Tensors& a) { return a; };
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string m = message([&] { cond(vec({1}), id, id, {vec({1})}); });
  EXPECT_NE(m.find("jit::cond: pred must be a bool tensor of one element, got float32[1]"), std::string::npos) << m;
  m = message([&] { cond(tensor<bool>({true, false}, {2}), id, id, {}); });
  EXPECT_NE(m.find("bool[2]"), std::string::npos) << m;
  m = message([&] { cond(scalar_tensor(true), id, id, {Tensor()}); });
  EXPECT_NE(m.find("operand 0 is undefined"), std::string::npos) << m;
  // A branch that writes into its operand would diverge from the graph.
  m = message([&] {
    cond(scalar_tensor(true), [](const Tensors& a) { Tensor t = a[0]; t.mul_(2.0); return a; }, id, {vec({1})});
  });
  EXPECT_NE(m.find("then_fn wrote in place into its argument 0"), std::string::npos) << m;
}

TEST(ControlFlow, TracedCondTakesTheBranchItsInputSelects) {
  Branchy m;
  const Tensor pos = vec({1, -2, 3, 0.5});   // sum 2.5: relu(x) + 2.5
  const Tensor neg = vec({-1, 2, -3, -0.5});  // sum -2.5: -x
  const Tensor pos_out = vec({3.5, 2.5, 5.5, 3});
  const Tensor neg_out = vec({1, -2, 3, 0.5});
  expect_equal(m.forward(pos), pos_out);
  expect_equal(m.forward(neg), neg_out);
  for (const Tensor& example : {pos, neg}) {
    Graph g = trace(m, {example});
    SCOPED_TRACE(g.str());
    const Node* c = find_node(g, "cond");
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->subgraphs.size(), 2u);
    // pred, the operand h, and the captured sum.
    EXPECT_EQ(c->inputs.size(), 3u);
    EXPECT_EQ(c->subgraphs[0]->inputs.size(), 2u);
    EXPECT_EQ(c->subgraphs[1]->inputs.size(), 2u) << "else gets then's capture as an unused input";
    EXPECT_TRUE(c->subgraphs[0]->constants.empty());
    expect_equal(run(g, {pos})[0], pos_out);
    expect_equal(run(g, {neg})[0], neg_out);
  }
}

TEST(ControlFlow, BranchesReadWeightsAsTopLevelConstants) {
  class Gated : public nn::Module {
   public:
    Gated() : nn::Module("Gated") {
      inner = register_module("inner", std::make_shared<nn::Linear>(3, 3));
    }
    Tensor forward(const Tensor& x) override {
      return cond(
          gt(x.sum(), 0.0), [&](const Tensors& a) { return Tensors{inner->forward(a[0])}; },
          [](const Tensors& a) { return Tensors{a[0] * 0.5}; }, {x})[0];
    }
    std::shared_ptr<nn::Linear> inner;
  };
  manual_seed(31);
  Gated m;
  Graph g = trace(m, {randn({2, 3}).abs()});
  const Node* c = find_node(g, "cond");
  ASSERT_NE(c, nullptr);
  int weights = 0;
  for (const Constant& k : g.constants) weights += k.name == "inner.weight" || k.name == "inner.bias";
  EXPECT_EQ(weights, 2) << g.str();
  EXPECT_EQ(c->inputs.size(), 4u) << "pred, x, inner.weight, inner.bias";
  for (const Tensor& x : {randn({2, 3}).abs(), -randn({2, 3}).abs()}) expect_equal(run(g, {x})[0], m.forward(x));
}

TEST(ControlFlow, TracedBranchesMustAgreeOnTypes) {
  Empty m;
  auto fn = [](const Tensors& in) {
    return cond(
        gt(in[0].sum(), 0.0), [](const Tensors& a) { return Tensors{a[0].sum({0})}; },
        [](const Tensors& a) { return Tensors{a[0]}; }, {in[0]});
  };
  try {
    trace(m, fn, {randn({2, 3})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("output 0 is float32[3] from then_fn but float32[2, 3] from else_fn"), std::string::npos)
        << msg;
  }
  // Writing into an operand in a traced branch is refused as it is eagerly.
  auto writes = [](const Tensors& in) {
    return cond(
        gt(in[0].sum(), 0.0), [](const Tensors& a) { Tensor t = a[0]; t.add_(1.0); return Tensors{t}; },
        [](const Tensors& a) { return Tensors{a[0]}; }, {in[0] * 2.0});
  };
  EXPECT_THROW(trace(m, writes, {randn({2})}), TracingError);
}

TEST(ControlFlow, HostReadErrorNamesCondAsTheFix) {
  class ReadsSum : public nn::Module {
   public:
    ReadsSum() : nn::Module("ReadsSum") {}
    Tensor forward(const Tensor& x) override { return x.sum().item<double>() > 0 ? x : -x; }
  } m;
  try {
    trace(m, {randn({3})});
    FAIL() << "expected TracingError";
  } catch (const TracingError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("item()"), std::string::npos) << msg;
    EXPECT_NE(msg.find("jit::cond(pred, then_fn, else_fn, operands)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("jit::while_loop"), std::string::npos) << msg;
  }
  // A host read inside a traced branch is caught too.
  Empty e;
  auto inner_read = [](const Tensors& in) {
    return cond(
        scalar_tensor(true), [](const Tensors& a) { return Tensors{a[0] * a[0].sum().item<float>()}; },
        [](const Tensors& a) { return Tensors{a[0]}; }, {in[0]});
  };
  EXPECT_THROW(trace(e, inner_read, {randn({3})}), TracingError);
}

// Doubles x until its norm reaches `threshold`; counts the doublings.
Tensors double_until(const Tensor& x, double threshold) {
  return while_loop([threshold](const Tensors& c) { return lt((c[0] * c[0]).sum(), threshold * threshold); },
                    [](const Tensors& c) { return Tensors{c[0] * 2.0, c[1] + 1}; },
                    {x, zeros({}, TensorOptions().dtype(kInt64))});
}

TEST(ControlFlow, WhileLoopEagerAndTracedRunDataDependentIterations) {
  // |x| = v * sqrt(3); doublings k: the least k with v * sqrt(3) * 2^k >= 10.
  struct Case {
    float v;
    int64_t k;
  };
  const std::vector<Case> cases = {{1.0f, 3}, {20.0f, 0}, {0.1f, 6}, {2.0f, 2}};
  for (const Case& c : cases) {
    Tensors r = double_until(full({3}, c.v), 10.0);
    EXPECT_EQ(r[1].item<int64_t>(), c.k) << c.v;
    expect_equal(r[0], full({3}, c.v * static_cast<float>(1 << c.k)));
  }
  Empty m;
  auto fn = [](const Tensors& in) { return double_until(in[0], 10.0); };
  Graph g = trace(m, fn, {full({3}, 1.0f)});  // 3 iterations while tracing
  SCOPED_TRACE(g.str());
  const Node* w = find_node(g, "while_loop");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->attr_int("carried"), 2);
  for (const Case& c : cases) {
    Tensors r = run(g, {full({3}, c.v)});
    EXPECT_EQ(r[1].item<int64_t>(), c.k) << c.v;
    expect_equal(r[0], full({3}, c.v * static_cast<float>(1 << c.k)));
  }
}

TEST(ControlFlow, WhileLoopChecksCarriedTypes) {
  auto grows = [](const Tensors& c) { return Tensors{cat({c[0], c[0]}, 0)}; };
  auto once = [](const Tensors& c) { return lt(c[0].sum(), 100.0); };
  EXPECT_THROW(while_loop(once, grows, {ones({2})}), Error);
  Empty m;
  auto fn = [&](const Tensors& in) { return while_loop(once, grows, {in[0]}); };
  try {
    trace(m, fn, {ones({2})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("keeps its dtype and shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW(while_loop([](const Tensors& c) { return c[0].sum(); }, grows, {ones({2})}), Error)
      << "cond_fn must give a bool";
  EXPECT_THROW(while_loop(once, grows, {}), Error);
}

// A cond nested in a while body: count up to 5, adding 1 or 10 by parity.
Tensors nested(const Tensor& start) {
  return while_loop([](const Tensors& c) { return lt(c[1], 5); },
                    [](const Tensors& c) {
                      Tensor odd = eq(remainder(c[1], 2), 1);
                      Tensor v = cond(
                          odd, [](const Tensors& a) { return Tensors{a[0] + 10.0}; },
                          [](const Tensors& a) { return Tensors{a[0] + 1.0}; }, {c[0]})[0];
                      return Tensors{v, c[1] + 1};
                    },
                    {start, zeros({}, TensorOptions().dtype(kInt64))});
}

TEST(ControlFlow, CondNestedInWhileLoop) {
  Empty m;
  // i = 0..4: +1, +10, +1, +10, +1 = 23.
  Tensors eager = nested(vec({0, 1}));
  expect_equal(eager[0], vec({23, 24}));
  Graph g = trace(m, [](const Tensors& in) { return nested(in[0]); }, {vec({0, 1})});
  expect_equal(run(g, {vec({5, -5})})[0], vec({28, 18}));
}

// y = x * 2 in the arena; the cond's then-branch returns it unchanged, so a
// plan that reused y's block after the cond would overwrite the cond's result.
TEST(ControlFlow, OutputsThatAliasAnInputAreCopiedBeforeThePlanReusesIt) {
  Empty m;
  auto fn = [](const Tensors& in) {
    Tensor y = in[0] * 2.0;
    Tensor c = cond(
        gt(y.sum(), 0.0), [](const Tensors& a) { return Tensors{a[0]}; },
        [](const Tensors& a) { return Tensors{-a[0]}; }, {y})[0];
    Tensor z = (c + 1.0) * 3.0;
    return Tensors{z + c};
  };
  Graph g = trace(m, fn, {vec({1, 2, 3})});
  EXPECT_FALSE(writes_into_given_outputs("cond"));
  EXPECT_FALSE(writes_into_given_outputs("while_loop"));
  EXPECT_TRUE(interpreter_supports("cond"));
  EXPECT_TRUE(interpreter_supports("while_loop"));
  PreparedGraph p(g, {});
  for (const Tensor& x : {vec({1, 2, 3}), vec({-1, -2, -3}), vec({4, 0, 1})}) {
    Tensor want = fn({x})[0];
    expect_equal(p.run({x})[0], want);
    expect_equal(p.run({x})[0], want);
  }
}

TEST(ControlFlow, OptimizeKeepsControlFlowAndItsNumerics) {
  class ConvGate : public nn::Module {
   public:
    ConvGate() : nn::Module("ConvGate") {
      conv = register_module("conv", std::make_shared<nn::Conv2d>(1, 2, 3, 1, 1));
      bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(2));
      inner = register_module("inner", std::make_shared<nn::Conv2d>(2, 2, 3, 1, 1));
    }
    Tensor forward(const Tensor& x) override {
      Tensor h = bn->forward(conv->forward(x));
      Tensor out = cond(
          gt(h.mean(), 0.0), [&](const Tensors& a) { return Tensors{relu(inner->forward(a[0]))}; },
          [](const Tensors& a) { return Tensors{a[0] * 0.5}; }, {h})[0];
      // A loop after it: halve until the max is below 1.
      return while_loop([](const Tensors& c) { return ge(amax(c[0]), 1.0); },
                        [](const Tensors& c) { return Tensors{c[0] * 0.5}; }, {out})[0];
    }
    std::shared_ptr<nn::Conv2d> conv, inner;
    std::shared_ptr<nn::BatchNorm2d> bn;
  };
  manual_seed(32);
  ConvGate m;
  m.train();
  {
    NoGradGuard ng;
    for (int i = 0; i < 3; ++i) m.forward(randn({4, 1, 6, 6}) + 0.5);
  }
  m.eval();
  Graph g = trace(m, {randn({2, 1, 6, 6})});
  for (int level : {1, 2}) {
    SCOPED_TRACE(level);
    OptimizeResult r = optimize(g, level);
    EXPECT_NE(find_node(r.graph, "cond"), nullptr);
    EXPECT_NE(find_node(r.graph, "while_loop"), nullptr);
    EXPECT_EQ(find_node(r.graph, "batch_norm_apply"), nullptr) << "folded into the conv outside";
    if (level == 2) {
      const Graph& then_g = *find_node(r.graph, "cond")->subgraphs[0];
      const Node* conv = find_node(then_g, "conv2d");
      ASSERT_NE(conv, nullptr);
      EXPECT_NE(conv->find("activation"), nullptr) << "relu fused inside the branch\n" << then_g.str();
    }
    int branches[2] = {0, 0};
    for (int i = 0; i < 12; ++i) {
      Tensor x = randn({2, 1, 6, 6}) * 3.0 + (i % 2 ? 1.0 : -1.0);
      NoGradGuard ng;
      Tensor h = m.bn->forward(m.conv->forward(x));
      ++branches[h.mean().item<float>() > 0 ? 0 : 1];
      Tensor want = m.forward(x);
      EXPECT_TRUE(allclose(run(r.graph, {x})[0], want, 1e-5, 1e-6));
    }
    EXPECT_GT(branches[0], 0);
    EXPECT_GT(branches[1], 0);
  }
}

TEST(ControlFlow, DynamicBatchReachesIntoTheBranches) {
  Branchy m;
  TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}};
  Graph g = trace(m, {randn({3, 4})}, o);
  const Node* c = find_node(g, "cond");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->subgraphs[1]->type(c->subgraphs[1]->inputs[0].value).str(), "float32[batch=3, 4]") << g.str();
  for (int64_t b : {1, 3, 6})
    for (double sign : {1.0, -1.0}) {
      Tensor x = randn({b, 4}).abs() * sign;
      expect_equal(run(g, {x})[0], m.forward(x));
    }
}

class ControlFlowFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ember_control_flow_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Branchy's cond, then the doubling loop; saved.
  std::string saved(Branchy& m) {
    ModelFile f;
    f.graph = trace(m, [&](const Tensors& in) { return double_until(m.forward(in[0]), 10.0); },
                    {vec({1, -2, 3, 0.5})});
    save_model(f, path("cf.ember"));
    return path("cf.ember");
  }

  // The file with its graph JSON edited.
  void edit(const std::string& file, const std::function<void(nlohmann::ordered_json&)>& f) {
    safetensors::Metadata meta;
    StateDict t = safetensors::load_file(file, &meta);
    auto j = nlohmann::ordered_json::parse(meta.at("ember.graph"));
    f(j);
    meta["ember.graph"] = j.dump(1);
    safetensors::save_file(t, file, meta);
  }

  static nlohmann::ordered_json& node(nlohmann::ordered_json& g, const std::string& op) {
    for (auto& n : g["nodes"])
      if (n["op"] == op) return n;
    throw std::runtime_error("no " + op + " node");
  }

  static void expect_error(const std::string& file, const std::vector<std::string>& parts) {
    try {
      load_model(file);
      FAIL() << "expected an error loading " << file;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(file), std::string::npos) << msg;
      for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
    }
  }

  fs::path dir_;
};

TEST_F(ControlFlowFile, RoundTripKeepsSubGraphsAndTheirCapturedWeights) {
  Branchy m;
  const std::string file = saved(m);
  ModelFile back = load_model(file);
  Graph g = trace(m, [&](const Tensors& in) { return double_until(m.forward(in[0]), 10.0); }, {vec({1, -2, 3, 0.5})});
  EXPECT_EQ(back.graph.str(), g.str());
  ASSERT_NE(find_node(back.graph, "cond"), nullptr);
  ASSERT_NE(find_node(back.graph, "while_loop"), nullptr);
  for (const Tensor& x : {vec({1, -2, 3, 0.5}), vec({-1, 2, -3, -0.5}), vec({0.01f, 0, 0, 0})}) {
    Tensors want = double_until(m.forward(x), 10.0);
    Tensors got = run(back.graph, {x});
    expect_equal(got[0], want[0]);
    EXPECT_EQ(got[1].item<int64_t>(), want[1].item<int64_t>());
  }
}

TEST_F(ControlFlowFile, CorruptSubGraphsFailNamingTheFileAndTheSubGraph) {
  Branchy m;
  const std::string file = saved(m);
  using json = nlohmann::ordered_json;
  edit(file, [](json& g) { node(g, "cond")["subgraphs"][0]["nodes"][0]["inputs"][0] = 999; });
  expect_error(file, {"node", "(cond) sub-graph 0 ('then')", "value id 999 out of range"});

  saved(m);
  edit(file, [](json& g) { node(g, "cond").erase("subgraphs"); });
  expect_error(file, {"(cond)", "expected 2 sub-graphs (then, else), got 0"});

  saved(m);
  edit(file, [](json& g) { node(g, "while_loop")["subgraphs"][1]["values"][0]["dtype"] = "float64"; });
  expect_error(file, {"sub-graph 'body'", "is typed float64"});

  saved(m);
  edit(file, [](json& g) {
    node(g, "cond")["subgraphs"][1]["constants"] = json::array({{{"name", "x"}, {"value", 0}, {"kind", "inline"}}});
  });
  expect_error(file, {"sub-graph 1 ('else')", "holds constants"});

  saved(m);
  edit(file, [](json& g) { node(g, "cond")["subgraphs"][0]["nodes"] = 7; });
  expect_error(file, {"malformed graph JSON"});

  saved(m);
  edit(file, [](json& g) { node(g, "while_loop")["attrs"]["carried"] = json{{"int", 5}}; });
  expect_error(file, {"(while_loop)", "carried = 5"});

  // Sub-graphs nested past the limit.
  saved(m);
  edit(file, [](json& g) {
    json deep = {{"op", "cond"}, {"inputs", json::array()}, {"outputs", json::array()}, {"attrs", json::object()}};
    for (int i = 0; i < 40; ++i) {
      json sub = {{"values", json::array()}, {"inputs", json::array()}, {"outputs", json::array()},
                  {"nodes", json::array({deep})}};
      deep["subgraphs"] = json::array({sub});  // one per level: the file stays small
    }
    node(g, "cond")["subgraphs"] = deep["subgraphs"];
  });
  expect_error(file, {"nested deeper than 32"});
}

}  // namespace
}  // namespace ember::jit

// jit::verify_export: the example, another size per dynamic dim and random
// inputs; every zoo model passes them, and wrong graphs that the example alone
// would pass fail on the case that reaches them.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/trace.h"
#include "ember/jit/verify.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

TraceOptions dynamic(std::vector<DynamicDim> dims) {
  TraceOptions o;
  o.dynamic_dims = std::move(dims);
  return o;
}

std::vector<std::string> case_names(const VerifyReport& r) {
  std::vector<std::string> names;
  for (const VerifyCase& c : r.cases) names.push_back(c.name);
  return names;
}

// Every case ran and matched bit for bit.
void expect_all_bitwise(const VerifyReport& r) {
  EXPECT_TRUE(r.ok) << r.str();
  for (const VerifyCase& c : r.cases) {
    EXPECT_TRUE(c.ok()) << c.name << "\n" << r.str();
    ASSERT_EQ(c.result.outputs.size(), 1u) << c.name;
    EXPECT_TRUE(c.result.outputs[0].bitwise_equal) << c.name;
  }
}

const VerifyCase& find_case(const VerifyReport& r, const std::string& name) {
  for (const VerifyCase& c : r.cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name + " in\n" + r.str());
}

Constant& find_constant(Graph& g, const std::vector<int64_t>& sizes) {
  for (Constant& c : g.constants)
    if (c.data.sizes().vec() == sizes) return c;
  throw std::runtime_error("no constant of that shape in\n" + g.str());
}

TEST(VerifyExport, MLPAndCNNAtAnotherBatchAndOnRandomInputs) {
  manual_seed(31);
  train::MLPOptions mo;
  mo.in_features = 12, mo.hidden = {16, 8}, mo.out_features = 3;
  train::MLP mlp(mo);
  Graph gm = trace(mlp, {randn({4, 12})}, dynamic({{0, 0, "batch"}}));
  VerifyReport rm = verify_export(mlp, gm, {randn({4, 12})});
  EXPECT_EQ(case_names(rm), (std::vector<std::string>{"example", "batch=7", "random"}));
  EXPECT_EQ(find_case(rm, "batch=7").input_sizes, (std::vector<std::vector<int64_t>>{{7, 12}}));
  expect_all_bitwise(rm);

  train::CNNOptions co;
  co.in_channels = 1, co.height = 12, co.width = 12, co.num_classes = 5;
  co.channels = {4, 8};
  co.hidden = 16;
  train::CNN cnn(co);
  cnn.train();
  {
    NoGradGuard ng;  // running statistics that are not the defaults
    for (int i = 0; i < 3; ++i) cnn.forward(randn({6, 1, 12, 12}));
  }
  Graph gc = trace(cnn, {randn({3, 1, 12, 12})}, dynamic({{0, 0, "batch"}}));
  expect_all_bitwise(verify_export(cnn, gc, {randn({3, 1, 12, 12})}));
  // After the passes (BatchNorm folded, ReLU fused): within fp32 rounding on every case.
  Graph opt = optimize(gc, 2).graph;
  VerifyOptions within;
  within.tol = {1e-5, 1e-6};
  VerifyReport ro = verify_export(cnn, opt, {randn({3, 1, 12, 12})}, within);
  EXPECT_TRUE(ro.ok) << ro.str();
  EXPECT_EQ(ro.cases.size(), 3u);

  // A fixed-batch graph has no other size to try.
  Graph fixed = trace(mlp, {randn({4, 12})});
  VerifyReport rf = verify_export(mlp, fixed, {randn({4, 12})});
  EXPECT_EQ(case_names(rf), (std::vector<std::string>{"example", "random"}));
  expect_all_bitwise(rf);
}

TEST(VerifyExport, TransformerAndLSTMOnTokenIds) {
  manual_seed(32);
  train::TransformerClassifierOptions to;
  to.vocab_size = 30, to.d_model = 8, to.nhead = 2, to.num_layers = 2, to.dim_feedforward = 16, to.max_len = 16;
  to.num_classes = 3;
  train::TransformerClassifier tf(to);
  Tensor tokens = randint(0, 30, {3, 9});
  Graph gt = trace(tf, {tokens}, dynamic({{0, 0, "batch"}}));
  VerifyReport rt = verify_export(tf, gt, {tokens});
  EXPECT_EQ(case_names(rt), (std::vector<std::string>{"example", "batch=6", "random"}));
  expect_all_bitwise(rt);

  for (std::string cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    train::LSTMClassifierOptions lo;
    lo.vocab_size = 20, lo.embed_dim = 6, lo.hidden = 5, lo.num_layers = 2, lo.bidirectional = true;
    lo.num_classes = 3, lo.cell = cell;
    train::LSTMClassifier lstm(lo);
    Tensor t = randint(0, 20, {3, 7});
    Graph gl = trace(lstm, {t}, dynamic({{0, 0, "batch"}}));
    expect_all_bitwise(verify_export(lstm, gl, {t}));
  }
}

TEST(VerifyExport, EverySymbolGetsItsOwnSize) {
  manual_seed(33);
  nn::Embedding emb(10, 3);
  Tensor tokens = randint(0, 10, {2, 7});
  Graph g = trace(emb, {tokens}, dynamic({{0, 0, "batch"}, {0, 1, "seq"}}));
  VerifyReport r = verify_export(emb, g, {tokens});
  EXPECT_EQ(case_names(r), (std::vector<std::string>{"example", "batch=5", "seq=10", "random"}));
  EXPECT_EQ(find_case(r, "seq=10").input_sizes, (std::vector<std::vector<int64_t>>{{2, 10}}));
  expect_all_bitwise(r);
  const std::string s = r.str();
  EXPECT_NE(s.find("seq=10 [2, 10]: output0: max abs diff 0, max rel diff 0 (bitwise equal)\n"), std::string::npos)
      << s;
}

TEST(VerifyExport, OtherSizesRepeatTheExamplesAlongEveryDimOfTheSymbol) {
  nn::Linear fc(2, 1);
  TraceFn fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fc.forward(in[0]) * in[1].unsqueeze(1)};
  };
  Graph g = trace(fc, fn, {tensor<float>({1, 2, 3, 4}, {2, 2}), tensor<float>({5, 6})},
                  dynamic({{0, 0, "batch"}, {1, 0, "batch"}}));
  auto cases = other_size_inputs(g, {tensor<float>({1, 2, 3, 4}, {2, 2}), tensor<float>({5, 6})});
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].first, "batch=5");
  // Rows 0, 1, 0, 1, 0 of both inputs: the pairs stay together.
  EXPECT_EQ(cases[0].second[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(cases[0].second[1].to_vector<float>(), (std::vector<float>{5, 6, 5, 6, 5}));
}

TEST(VerifyExport, RandomInputsFollowTheExamplesScaleAndRange) {
  manual_seed(34);
  Tensor floats = add(mul(randn({4000}), Scalar(2.0)), Scalar(3.0));  // mean 3, std 2
  Tensor ids = tensor<int64_t>({2, 7, 7, 2}, {2, 2});
  std::vector<Tensor> r = random_inputs_like({floats, ids, tensor<bool>({true, false})}, 5);
  ASSERT_EQ(r.size(), 3u);
  const std::vector<float> v = r[0].to_vector<float>();
  double mean = 0, var = 0;
  for (float a : v) mean += a;
  mean /= static_cast<double>(v.size());
  for (float a : v) var += (a - mean) * (a - mean);
  EXPECT_NEAR(mean, 3.0, 0.15);
  EXPECT_NEAR(std::sqrt(var / static_cast<double>(v.size())), 2.0, 0.15);
  EXPECT_EQ(r[0].dtype(), kFloat32);
  EXPECT_EQ(r[1].dtype(), kInt64);
  EXPECT_EQ(r[1].sizes().vec(), (std::vector<int64_t>{2, 2}));
  for (int64_t id : r[1].to_vector<int64_t>()) EXPECT_TRUE(id >= 2 && id <= 7) << id;
  EXPECT_EQ(r[2].dtype(), kBool);
  // Seeded: the same inputs again, other ones for another seed.
  EXPECT_TRUE(equal(random_inputs_like({floats}, 5)[0], r[0]));
  EXPECT_FALSE(equal(random_inputs_like({floats}, 6)[0], r[0]));
}

// A wrong weight in an input column the example holds at zero (like MNIST's
// border pixels): the example passes bit for bit, random inputs do not.
TEST(VerifyExport, RandomInputsCatchAWeightTheExampleNeverReads) {
  manual_seed(35);
  train::MLPOptions o;
  o.in_features = 12, o.hidden = {16}, o.out_features = 3;
  train::MLP m(o);
  Tensor mask = ones({12});
  mask.narrow(0, 3, 1).fill_(0.0);
  Tensor example = mul(randn({4, 12}), mask);
  Graph g = trace(m, {example});
  Constant& w = find_constant(g, {16, 12});
  w.data = w.data.clone();  // the module keeps its own weight
  w.data.narrow(1, 3, 1).fill_(5.0);
  VerifyReport r = verify_export(m, g, {example});
  EXPECT_FALSE(r.ok) << r.str();
  EXPECT_TRUE(find_case(r, "example").ok()) << r.str();
  EXPECT_TRUE(find_case(r, "example").result.outputs[0].bitwise_equal);
  const VerifyCase& rnd = find_case(r, "random");
  EXPECT_FALSE(rnd.ok());
  EXPECT_GT(rnd.result.outputs[0].max_abs, 0.1);
  EXPECT_NE(r.str().find("random [4, 12]: output0: max abs diff"), std::string::npos) << r.str();
  EXPECT_NE(r.str().find("OUT OF TOLERANCE"), std::string::npos) << r.str();
}

// Note [verify tolerance]: rtol is relative to the output's largest
// magnitude, so a near-zero element may carry the rounding error of a
// reordered sum; an error beyond rtol of the largest magnitude still fails.
TEST(Verify, ToleranceIsRelativeToTheOutputsLargestMagnitude) {
  auto table = nn::Embedding::from_pretrained(tensor<float>({1000.f, 1e-3f, 5.f, 6.f}, {2, 2}));
  nn::Embedding& emb = *table;
  Tensor tokens = tensor<int64_t>({0}, {1, 1});
  auto with_row0 = [&](float a, float b) {
    Graph g = trace(emb, {tokens});
    Constant& w = find_constant(g, {2, 2});
    w.data = tensor<float>({a, b, 5.f, 6.f}, {2, 2});
    return verify(emb, g, {tokens}, Tolerance{1e-5, 1e-6});
  };
  // 5e-6 off a 1e-3 output: 0.5% of it, but 5e-9 of the largest (1000).
  VerifyResult near_zero = with_row0(1000.f, 1e-3f + 5e-6f);
  EXPECT_TRUE(near_zero.ok) << near_zero.outputs[0].max_rel;
  EXPECT_GT(near_zero.outputs[0].max_rel, 1e-3);
  // 0.1 off: 1e-4 of the largest, ten times rtol.
  EXPECT_FALSE(with_row0(1000.1f, 1e-3f).ok);
}

// A wrong embedding row for a token the example does not contain.
TEST(VerifyExport, RandomTokensCatchAnEmbeddingRowTheExampleNeverReads) {
  manual_seed(36);
  nn::Embedding emb(10, 3);
  Tensor tokens = mul(randint(0, 2, {8, 16}), Scalar(int64_t{9}));  // only ids 0 and 9
  Graph g = trace(emb, {tokens});
  Constant& w = find_constant(g, {10, 3});
  w.data = w.data.clone();
  w.data.narrow(0, 4, 1).fill_(100.0);
  VerifyReport r = verify_export(emb, g, {tokens});
  EXPECT_TRUE(find_case(r, "example").ok()) << r.str();
  EXPECT_FALSE(find_case(r, "random").ok()) << r.str();
  EXPECT_FALSE(r.ok);
}

// What a tracer without symbolic sizes records: the input still binds the
// batch, every size after it is the traced one (PyTorch's baked-size bug).
Graph bake_sizes(Graph g) {
  std::vector<bool> is_input(g.values.size());
  for (const NamedValue& in : g.inputs) is_input[static_cast<size_t>(in.value)] = true;
  for (Node& n : g.nodes) n.sym_attrs.clear();  // attrs keep the traced values
  for (size_t v = 0; v < g.values.size(); ++v)
    if (!is_input[v])
      for (Dim& d : g.values[v].type.shape) d.symbol.clear();
  return g;
}

class RowSum : public nn::Module {
 public:
  RowSum() : nn::Module("RowSum") {}
  Tensor forward(const Tensor& x) override { return sum(x.reshape({x.size(0), -1}), {0}); }
};

TEST(VerifyExport, AnotherBatchSizeCatchesABakedSize) {
  manual_seed(37);
  RowSum m;
  Tensor x = randn({4, 3, 4});
  Graph g = bake_sizes(trace(m, {x}, dynamic({{0, 0, "batch"}})));
  VerifyReport r = verify_export(m, g, {x});
  EXPECT_FALSE(r.ok) << r.str();
  EXPECT_TRUE(find_case(r, "example").ok()) << r.str();
  EXPECT_TRUE(find_case(r, "random").ok()) << r.str();
  // At batch 7 the graph sums the first 4 rows only: a wrong value, same shape.
  const VerifyCase& other = find_case(r, "batch=7");
  ASSERT_EQ(other.result.outputs.size(), 1u) << r.str();
  EXPECT_TRUE(other.result.outputs[0].problem.empty()) << r.str();
  EXPECT_GT(other.result.outputs[0].max_abs, 0.0);
  EXPECT_FALSE(other.ok());

  // The CNN's flatten baked: at batch 6 the graph gives 3 rows, eager 6.
  train::CNNOptions co;
  co.in_channels = 1, co.height = 8, co.width = 8, co.num_classes = 2;
  co.channels = {2, 2};
  co.hidden = 4;
  train::CNN cnn(co);
  Tensor img = randn({3, 1, 8, 8});
  Graph gc = bake_sizes(trace(cnn, {img}, dynamic({{0, 0, "batch"}})));
  VerifyReport rc = verify_export(cnn, gc, {img});
  EXPECT_TRUE(find_case(rc, "example").ok()) << rc.str();
  EXPECT_TRUE(find_case(rc, "random").ok()) << rc.str();
  const VerifyCase& c6 = find_case(rc, "batch=6");
  EXPECT_FALSE(c6.ok());
  const std::string why = c6.error.empty() ? c6.result.outputs.at(0).problem : c6.error;
  EXPECT_FALSE(why.empty()) << rc.str();
}

// A case that cannot run fails with the message; the other cases still run.
class AtMostSix : public nn::Module {
 public:
  AtMostSix() : nn::Module("AtMostSix") {}
  Tensor forward(const Tensor& x) override {
    EMBER_CHECK(x.size(0) <= 6, "AtMostSix: batch {} is over 6", x.size(0));
    return x * 2.0;
  }
};

TEST(VerifyExport, ACaseThatThrowsFailsWithItsMessage) {
  AtMostSix m;
  Graph g = trace(m, {randn({4, 3})}, dynamic({{0, 0, "batch"}}));  // the probes stay at or under 6
  VerifyReport r = verify_export(m, g, {randn({4, 3})});
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_TRUE(find_case(r, "example").ok()) << r.str();
  EXPECT_TRUE(find_case(r, "random").ok()) << r.str();
  EXPECT_NE(find_case(r, "batch=7").error.find("batch 7 is over 6"), std::string::npos) << r.str();
  EXPECT_NE(r.str().find("batch=7 [7, 3]: FAILED: "), std::string::npos) << r.str();
}

}  // namespace
}  // namespace ember::jit

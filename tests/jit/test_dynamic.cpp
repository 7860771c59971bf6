// Dynamic dims: a graph traced at one batch size (sequence length) runs at
// others, bit for bit equal to eager; what cannot be symbolic fails by name.
#include <gtest/gtest.h>

#include <filesystem>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/jit/verify.h"
#include "graph_test_util.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

TraceOptions dynamic(std::vector<DynamicDim> dims) {
  TraceOptions o;
  o.dynamic_dims = std::move(dims);
  return o;
}

void expect_bitwise(nn::Module& m, const Graph& g, const std::vector<Tensor>& inputs) {
  VerifyResult r = verify(m, g, inputs);
  EXPECT_TRUE(r.ok) << r.str() << g.str();
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(r.outputs[0].bitwise_equal);
}

std::string trace_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const TracingError& e) {
    return e.what();
  }
  return "no TracingError";
}

TEST(DynamicDims, SymExprParsesPrintsAndEvaluates) {
  SymExpr e = SymExpr::parse("8*seq*batch + -8*batch + 3");
  EXPECT_EQ(e.str(), "8*batch*seq + -8*batch + 3");
  EXPECT_EQ(e.eval({{"batch", 2}, {"seq", 5}}), 8 * 10 - 16 + 3);
  EXPECT_FALSE(e.is_constant());
  EXPECT_TRUE(SymExpr::parse("12").is_constant());
  EXPECT_THROW(SymExpr::parse(""), Error);
  EXPECT_THROW(SymExpr::parse("2*"), Error);
  EXPECT_THROW(SymExpr::parse("batch 2"), Error);
  EXPECT_THROW(SymExpr::parse("batch*3"), Error) << "a coefficient comes first";
  EXPECT_THROW(e.eval({{"batch", 2}}), Error);
  EXPECT_THROW(SymExpr::parse("4611686018427387904*batch").eval({{"batch", 4}}), Error);
}

TEST(DynamicDims, CNNRunsAtOtherBatchSizes) {
  manual_seed(21);
  train::CNNOptions o;
  o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
  o.channels = {4, 8};
  o.hidden = 16;
  train::CNN m(o);
  Graph g = trace(m, {randn({4, 1, 12, 12})}, dynamic({{0, 0, "batch"}}));
  EXPECT_EQ(g.type(g.inputs[0].value).str(), "float32[batch=4, 1, 12, 12]");
  EXPECT_EQ(g.type(g.outputs[0].value).str(), "float32[batch=4, 5]");
  for (int64_t b : {4, 1, 2, 7, 33}) {
    SCOPED_TRACE(b);
    expect_bitwise(m, g, {randn({b, 1, 12, 12})});
  }
  // Fixed dims still are.
  EXPECT_THROW(run(g, {randn({4, 1, 12, 13})}), Error);
}

TEST(DynamicDims, ResNetAndMLP) {
  manual_seed(22);
  train::ResNetOptions ro;
  ro.depth = 18, ro.in_channels = 3, ro.num_classes = 4, ro.width = 4;
  train::ResNet resnet(ro);
  Graph g = trace(resnet, {randn({3, 3, 8, 8})}, dynamic({{0, 0, "batch"}}));
  expect_bitwise(resnet, g, {randn({5, 3, 8, 8})});
  train::MLPOptions mo;
  mo.in_features = 12, mo.hidden = {8}, mo.out_features = 3;
  train::MLP mlp(mo);
  Graph gm = trace(mlp, {randn({6, 3, 4})}, dynamic({{0, 0, "batch"}}));  // flatten: [batch, 12]
  expect_bitwise(mlp, gm, {randn({11, 3, 4})});
}

using testing::count_kind;

// The transformer's positions arange(seq) become an arange node and its mean
// over seq a reduction whose scale is 1/seq, so batch and seq both stay free.
TEST(DynamicDims, TransformerKeepsBatchAndSequenceDynamic) {
  manual_seed(23);
  train::TransformerClassifierOptions o;
  o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
  o.num_classes = 3;
  train::TransformerClassifier m(o);
  Graph g = trace(m, {randint(0, 30, {3, 9})}, dynamic({{0, 0, "batch"}, {0, 1, "seq"}}));
  bool products = false;  // the heads fold into the batch: [seq, batch * nhead, head_dim]
  for (const Value& v : g.values)
    for (const Dim& d : v.type.shape) products |= d.symbol == "2*batch";
  EXPECT_TRUE(products) << g.str();
  EXPECT_EQ(count_kind(g, "arange"), 1) << g.str();
  bool mean_over_seq = false;
  for (const Node& n : g.nodes)
    for (const Node::SymAttr& sa : n.sym_attrs) mean_over_seq |= sa.name == "scale" && sa.exprs == std::vector<std::string>{"1/seq"};
  EXPECT_TRUE(mean_over_seq) << g.str();
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{3, 9}, {1, 1}, {6, 16}, {2, 4}})
    expect_bitwise(m, g, {randint(0, 30, {b, t})});
  // Through the file: the arange node and the symbolic scale round-trip.
  const std::string path = (std::filesystem::temp_directory_path() / "ember_dyn_seq_transformer.ember").string();
  ModelFile file;
  file.graph = g;
  save_model(file, path);
  ModelFile back = load_model(path);
  std::filesystem::remove(path);
  expect_bitwise(m, back.graph, {randint(0, 30, {2, 5})});
}

// A constant built on the host from the sequence length, not a progression:
// the forward depends on the size beyond what a graph can express.
TEST(DynamicDims, AConstantThatIsNoProgressionFailsByName) {
  class Squares : public nn::Module {
   public:
    Squares() : nn::Module("Squares") {}
    Tensor forward(const Tensor& x) override {
      std::vector<int64_t> sq;
      for (int64_t i = 0; i < x.size(1); ++i) sq.push_back(i * i);
      return x + tensor<int64_t>(sq, {x.size(1)});
    }
  } sq;
  const std::string err = trace_error([&] { trace(sq, {randint(0, 30, {3, 9})}, dynamic({{0, 1, "seq"}})); });
  EXPECT_NE(err.find("int64[seq=9] depends on the dynamic dims"), std::string::npos) << err;
  // A progression with another start and step is an arange node.
  class Odd : public nn::Module {
   public:
    Odd() : nn::Module("Odd") {}
    Tensor forward(const Tensor& x) override { return x * arange(1, 2 * x.size(1) + 1, 2, TensorOptions().dtype(kFloat32)); }
  } odd;
  Graph g = trace(odd, {randn({2, 5})}, dynamic({{0, 1, "seq"}}));
  EXPECT_EQ(count_kind(g, "arange"), 1) << g.str();
  for (int64_t t : {5, 1, 11}) expect_bitwise(odd, g, {randn({2, t})});
}

// The recurrent layers trace as one rnn_layer node per layer and direction,
// so the sequence length is as free as the batch.
TEST(DynamicDims, LSTMAndGRUKeepBatchAndSequenceDynamic) {
  manual_seed(24);
  for (std::string cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    train::LSTMClassifier m(o);
    Graph g = trace(m, {randint(0, 20, {3, 7})}, dynamic({{0, 0, "batch"}, {0, 1, "seq"}}));
    EXPECT_EQ(count_kind(g, "rnn_layer"), 4) << g.str();
    for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {2, 9}, {9, 2}, {1, 1}})
      expect_bitwise(m, g, {randint(0, 20, {b, t})});
  }
}

// A module that reads the batch size once and bakes it into a view.
class BakedBatch : public nn::Module {
 public:
  explicit BakedBatch(int64_t batch) : nn::Module("BakedBatch"), batch_(batch) {}
  Tensor forward(const Tensor& x) override { return x.reshape({batch_, -1}) * 2.0; }
  int64_t batch_;
};

class SizedBatch : public nn::Module {
 public:
  SizedBatch() : nn::Module("SizedBatch") {}
  Tensor forward(const Tensor& x) override { return x.reshape({x.size(0), -1}) * 2.0; }
};

TEST(DynamicDims, BakingATracedSizeIntoAViewIsATracingError) {
  manual_seed(25);
  BakedBatch baked(4);
  // [batch, 12] viewed as [4, 3 * batch]: it runs at the probe sizes, but the 4 is the traced batch.
  std::string err = trace_error([&] { trace(baked, {randn({4, 12})}, dynamic({{0, 0, "batch"}})); });
  EXPECT_NE(err.find("fixes a size to 4, the traced value of dynamic dim 'batch'"), std::string::npos) << err;
  EXPECT_NE(err.find("x.size(0)"), std::string::npos) << err;
  // Where the baked view cannot even run at a probe size, that is the error.
  err = trace_error([&] { trace(baked, {randn({4, 2, 3})}, dynamic({{0, 0, "batch"}})); });
  EXPECT_NE(err.find("the forward fails at batch=3"), std::string::npos) << err;
  EXPECT_NE(err.find("reshape"), std::string::npos) << err;
  // Computing the size from the tensor traces and runs at any batch.
  SizedBatch sized;
  Graph g = trace(sized, {randn({4, 2, 3})}, dynamic({{0, 0, "batch"}}));
  expect_bitwise(sized, g, {randn({8, 2, 3})});
}

// A mean over the dynamic dim keeps its scale as 1/batch; another real
// attribute that follows the dims fails by name.
TEST(DynamicDims, MeanOverTheDynamicDimScalesByOneOverItsSize) {
  class BatchMean : public nn::Module {
   public:
    BatchMean() : nn::Module("BatchMean") {}
    Tensor forward(const Tensor& x) override { return x - mean(x, {0}, true); }
  } m;
  Graph bm = trace(m, {randn({4, 3})}, dynamic({{0, 0, "batch"}}));
  for (int64_t b : {4, 1, 7, 10}) expect_bitwise(m, bm, {randn({b, 3})});
  class ScaledBySize : public nn::Module {
   public:
    ScaledBySize() : nn::Module("ScaledBySize") {}
    Tensor forward(const Tensor& x) override { return x * (0.5 * static_cast<double>(x.size(0))); }
  } sc;
  std::string err = trace_error([&] { trace(sc, {randn({4, 3})}, dynamic({{0, 0, "batch"}})); });
  EXPECT_NE(err.find("a real value that follows the dims"), std::string::npos) << err;
  // Over the other dim it is fine.
  class RowMean : public nn::Module {
   public:
    RowMean() : nn::Module("RowMean") {}
    Tensor forward(const Tensor& x) override { return x - mean(x, {1}, true); }
  } r;
  Graph g = trace(r, {randn({4, 3})}, dynamic({{0, 0, "batch"}}));
  expect_bitwise(r, g, {randn({9, 3})});
}

TEST(DynamicDims, TwoInputsShareASymbolAndTheFileKeepsIt) {
  manual_seed(26);
  nn::Linear fc(3, 2);
  TraceFn fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fc.forward(in[0]) * in[1].unsqueeze(1)};
  };
  TraceOptions o = dynamic({{0, 0, "batch"}, {1, 0, "batch"}});
  Graph g = trace(fc, fn, {randn({4, 3}), randn({4})}, o);
  VerifyResult r = verify(fc, fn, g, {randn({6, 3}), randn({6})});
  EXPECT_TRUE(r.ok) << r.str();
  try {
    run(g, {randn({6, 3}), randn({5})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'batch' = 6 elsewhere, but 5 here"), std::string::npos) << e.what();
  }
  namespace fs = std::filesystem;
  const std::string path = (fs::temp_directory_path() / fmt::format("ember_dyn_{}.ember", ::getpid())).string();
  ModelFile mf;
  mf.graph = g;
  save_model(mf, path);
  ModelFile back = load_model(path);
  fs::remove(path);
  EXPECT_EQ(back.graph.str(), g.str());
  Tensor x = randn({9, 3}), s = randn({9});
  EXPECT_TRUE(equal(run(back.graph, {x, s})[0], fn({x, s})[0]));
}

TEST(DynamicDims, OptionsAreChecked) {
  nn::Linear fc(3, 2);
  EXPECT_THROW(trace(fc, {randn({1, 3})}, dynamic({{0, 0, "batch"}})), Error) << "example size 1";
  EXPECT_THROW(trace(fc, {randn({2, 3})}, dynamic({{1, 0, "batch"}})), Error) << "no input 1";
  EXPECT_THROW(trace(fc, {randn({2, 3})}, dynamic({{0, 2, "batch"}})), Error) << "no dim 2";
  EXPECT_THROW(trace(fc, {randn({2, 3})}, dynamic({{0, 0, "2x"}})), Error) << "not an identifier";
}

}  // namespace
}  // namespace ember::jit

// Variable-length sequences traced: the zoo's LSTM/GRU and transformer
// classifiers with their lengths input (padded to a fixed length), and a GRU
// classifier whose time loop is a jit::while_loop over the valid steps, so
// both batch and sequence length stay dynamic.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/jit/control_flow.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/trace.h"
#include "ember/jit/verify.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

using Tensors = std::vector<Tensor>;

TraceOptions dynamic(std::vector<DynamicDim> dims) {
  TraceOptions o;
  o.dynamic_dims = std::move(dims);
  return o;
}

Tensor lengths_of(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor<int64_t>(v, {n});
}

TEST(VariableLength, ZooLSTMAndGRUClassifiersTraceWithLengths) {
  manual_seed(41);
  for (std::string cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    train::LSTMClassifier m(o);
    auto fn = [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; };
    Graph g = trace(m, fn, {randint(0, 20, {3, 7}), lengths_of({7, 2, 5})},
                    dynamic({{0, 0, "batch"}, {1, 0, "batch"}}));
    // Padding never changes the result, and the graph follows the lengths it is given.
    for (const Tensors& in : {Tensors{randint(0, 20, {3, 7}), lengths_of({1, 7, 4})},
                              Tensors{randint(0, 20, {5, 7}), lengths_of({3, 3, 7, 6, 1})}}) {
      VerifyResult r = verify(m, fn, g, in);
      EXPECT_TRUE(r.ok) << r.str();
      EXPECT_TRUE(r.outputs[0].bitwise_equal);
    }
  }
}

TEST(VariableLength, ZooTransformerTracesWithItsPaddingMask) {
  manual_seed(42);
  train::TransformerClassifierOptions o;
  o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
  o.num_classes = 3;
  train::TransformerClassifier m(o);
  auto fn = [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; };
  // (An example batch of 3, not nhead = 2: a view's fixed head count must not
  // look like the traced batch size.)
  Graph g = trace(m, fn, {randint(0, 30, {3, 9}), lengths_of({9, 4, 6})},
                  dynamic({{0, 0, "batch"}, {1, 0, "batch"}}));
  for (const Tensors& in : {Tensors{randint(0, 30, {2, 9}), lengths_of({3, 9})},
                            Tensors{randint(0, 30, {4, 9}), lengths_of({1, 2, 8, 9})}}) {
    VerifyResult r = verify(m, fn, g, in);
    EXPECT_TRUE(r.ok) << r.str();
    EXPECT_TRUE(r.outputs[0].bitwise_equal);
  }
}

// With both dims dynamic, one export serves any padded length: the zoo's
// text classifiers with their lengths, at sequence lengths never traced.
TEST(VariableLength, ZooTextClassifiersKeepBatchAndSequenceDynamicWithLengths) {
  manual_seed(44);
  const TraceOptions dims = dynamic({{0, 0, "batch"}, {1, 0, "batch"}, {0, 1, "seq"}});
  auto check = [&](nn::Module& m, const TraceFn& fn, int64_t vocab) {
    // Example lengths within the probe sizes of seq (9 - 2).
    Graph g = trace(m, fn, {randint(0, vocab, {3, 9}), lengths_of({7, 2, 5})}, dims);
    for (const Tensors& in : {Tensors{randint(0, vocab, {2, 12}), lengths_of({12, 5})},
                              Tensors{randint(0, vocab, {4, 3}), lengths_of({1, 3, 2, 3})},
                              Tensors{randint(0, vocab, {1, 1}), lengths_of({1})}}) {
      VerifyResult r = verify(m, fn, g, in);
      EXPECT_TRUE(r.ok) << r.str();
      EXPECT_TRUE(r.outputs[0].bitwise_equal);
    }
    return g;
  };
  for (std::string cell : {"lstm", "gru"}) {
    SCOPED_TRACE(cell);
    train::LSTMClassifierOptions o;
    o.vocab_size = 20, o.embed_dim = 6, o.hidden = 5, o.num_layers = 2, o.bidirectional = true, o.num_classes = 3;
    o.cell = cell;
    train::LSTMClassifier m(o);
    Graph g = check(m, [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; }, 20);
    // The lengths reach every layer's loop as a graph input.
    for (const Node& n : g.nodes)
      if (n.kind == "rnn_layer") {
        EXPECT_EQ(n.inputs[1], g.inputs[1].value);
      }
    // A length past the padded one is refused when the graph runs, by name.
    try {
      run(g, {randint(0, 20, {2, 4}), lengths_of({4, 5})});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expected lengths in [1, 4] (the padded length), got 5 at 1"),
                std::string::npos)
          << e.what();
    }
  }
  train::TransformerClassifierOptions o;
  o.vocab_size = 30, o.d_model = 8, o.nhead = 2, o.num_layers = 2, o.dim_feedforward = 16, o.max_len = 16;
  o.num_classes = 3;
  train::TransformerClassifier m(o);
  check(m, [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; }, 30);
}

// A GRU classifier over embedded sequences x [B, T, F] with lengths [B]:
// the cell runs for t < max(lengths) (a jit::while_loop), a sequence's state
// stops at its own length (a mask), and fc reads the final state. The
// while_loop replaces the unrolled time loop, which fixes T in a trace.
class LoopGRU : public nn::Module {
 public:
  LoopGRU(int64_t features, int64_t hidden, int64_t classes) : nn::Module("LoopGRU"), hidden_(hidden) {
    gru = register_module("gru", std::make_shared<nn::GRU>(features, hidden, nn::RNNOptions{.batch_first = true}));
    fc = register_module("fc", std::make_shared<nn::Linear>(hidden, classes));
  }

  using nn::Module::forward;  // this one takes the lengths too
  Tensor forward(const Tensor& x, const Tensor& lengths) {
    Tensor h0 = zeros({x.size(0), hidden_});
    Tensor t0 = zeros({}, TensorOptions().dtype(kInt64));
    Tensor steps = max(lengths);
    Tensors out = while_loop([&](const Tensors& c) { return lt(c[0], steps); },
                             [&](const Tensors& c) { return step(x, lengths, c[0], c[1]); }, {t0, h0});
    return fc->forward(out[1]);
  }

  // The reference: nn::GRU over the padded batch with lengths.
  Tensor reference(const Tensor& x, const Tensor& lengths) {
    return fc->forward(gru->forward(x, lengths, Tensor()).second.select(0, 0));
  }

  std::shared_ptr<nn::GRU> gru;
  std::shared_ptr<nn::Linear> fc;

 private:
  // torch.nn.GRU's cell (gates r, z, n) at step t; sequences past their length keep h.
  Tensors step(const Tensor& x, const Tensor& lengths, const Tensor& t, const Tensor& h) {
    const int64_t H = hidden_;
    Tensor xt = index_select(x, 1, t.reshape({1})).squeeze(1);
    Tensor gi = linear(xt, gru->weight_ih(0), gru->bias_ih(0));
    Tensor gh = linear(h, gru->weight_hh(0), gru->bias_hh(0));
    Tensor r = sigmoid(gi.narrow(1, 0, H) + gh.narrow(1, 0, H));
    Tensor z = sigmoid(gi.narrow(1, H, H) + gh.narrow(1, H, H));
    Tensor n = tanh(gi.narrow(1, 2 * H, H) + r * gh.narrow(1, 2 * H, H));
    Tensor h_new = (1.0 - z) * n + z * h;
    return {t + 1, where(gt(lengths, t).unsqueeze(1), h_new, h)};
  }

  int64_t hidden_;
};

TEST(VariableLength, WhileLoopGRUKeepsBatchAndSequenceDynamic) {
  manual_seed(43);
  LoopGRU m(4, 5, 3);
  m.eval();
  auto fn = [&m](const Tensors& in) { return Tensors{m.forward(in[0], in[1])}; };
  {
    NoGradGuard ng;
    Tensor x = randn({3, 6, 4});
    Tensor lengths = lengths_of({6, 2, 4});
    EXPECT_TRUE(allclose(m.forward(x, lengths), m.reference(x, lengths), 1e-5, 1e-6));
  }
  // Example lengths within the probe sizes of seq (7 - 2): the probes run the loop.
  Graph g = trace(m, fn, {randn({3, 7, 4}), lengths_of({5, 2, 4})},
                  dynamic({{0, 0, "batch"}, {1, 0, "batch"}, {0, 1, "seq"}}));
  SCOPED_TRACE(g.str());
  int64_t loops = 0;
  for (const Node& n : g.nodes) loops += n.kind == "while_loop";
  EXPECT_EQ(loops, 1);
  struct Case {
    int64_t batch, seq;
    std::vector<int64_t> lengths;
  };
  for (const Case& c : std::vector<Case>{{3, 7, {7, 1, 3}}, {2, 12, {12, 5}}, {4, 3, {1, 3, 2, 3}}, {1, 1, {1}}}) {
    SCOPED_TRACE(c.seq);
    Tensor x = randn({c.batch, c.seq, 4});
    Tensor lengths = lengths_of(c.lengths);
    NoGradGuard ng;
    Tensor want = m.reference(x, lengths);
    Tensor got = run(g, {x, lengths})[0];
    EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << got.str() << want.str();
    EXPECT_TRUE(equal(got, m.forward(x, lengths))) << "the graph replays the eager loop";
  }
}

}  // namespace
}  // namespace ember::jit

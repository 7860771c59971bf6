// Dynamic int8: the oneDNN int8 GEMM against its reference loop (exact
// integers), quant::linear_dynamic against the reference path (bitwise) and
// against float within the quantization error bound, PyTorch's
// quantize_dynamic on the same weights, and the eager module swap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/quantize_dynamic.h"
#include "ember/jit/trace.h"
#include "ember/quant/quantize_dynamic.h"
#include "kernels/cpu/vec_f32.h"
#include "kernels/qgemm.h"
#include "quant/quant_reference.h"

namespace ember {
namespace {

using testing::qmeta;
using testing::qref;

struct Shape {
  int64_t m, n, k;
};

TEST(QGemm, OneDnnEqualsTheReferenceLoopExactly) {
  manual_seed(7);
  for (Shape s : {Shape{1, 1, 1}, Shape{1, 13, 31}, Shape{7, 128, 256}, Shape{64, 10, 784}, Shape{33, 65, 17}}) {
    Tensor a = randint(0, 256, {s.m, s.k}, kUInt8);
    Tensor b = randint(-128, 128, {s.n, s.k}, kInt8);
    // The extremes, where AVX2's int16 pairs would saturate.
    a.data_ptr<uint8_t>()[0] = 255;
    b.data_ptr<int8_t>()[0] = -128;
    Tensor want = empty({s.m, s.n}, kInt32), got = full({s.m, s.n}, -1, kInt32);
    QGemmArgs g{a.data_ptr<uint8_t>(), s.k, b.data_ptr<int8_t>(), s.k, want.data_ptr<int32_t>(), s.n, s.m, s.n, s.k};
    qgemm_u8s8s32_ref(g);
    g.c = got.data_ptr<int32_t>();
    ASSERT_TRUE(qgemm_u8s8s32_dnnl(g)) << "oneDNN has no int8 matmul for " << s.m << "x" << s.n << "x" << s.k;
    EXPECT_TRUE(equal(got, want)) << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(QGemm, ReferenceLoopMatchesAClosedForm) {
  // [[1, 2], [255, 0]] @ [[3, -128], [-1, 1]]^T
  std::vector<uint8_t> a{1, 2, 255, 0};
  std::vector<int8_t> b{3, -128, -1, 1};
  std::vector<int32_t> c(4);
  qgemm_u8s8s32_ref({a.data(), 2, b.data(), 2, c.data(), 2, 2, 2, 2});
  EXPECT_EQ(c, (std::vector<int32_t>{3 - 256, -1 + 2, 765, -255}));
}

// |y_int8 - y_float| per element: each x and w is off by at most half its
// step, so |err| <= sum_k (|x_k| sw/2 + |w_k| sx/2 + sx sw/4), plus float
// rounding (a relative 1e-5 of the magnitudes).
double error_bound(const Tensor& x, const Tensor& w, const quant::PackedLinear& p, int64_t row, int64_t col,
                   double sx) {
  const double sw = p.scale.to_vector<double>()[static_cast<size_t>(col)];
  std::vector<double> xs = x[row].to_vector<double>(), ws = w[col].to_vector<double>();
  double bound = 0, mag = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    bound += std::fabs(xs[k]) * sw / 2 + std::fabs(ws[k]) * sx / 2 + sx * sw / 4;
    mag += std::fabs(xs[k] * ws[k]);
  }
  return bound + 1e-5 * mag + 1e-6;
}

double activation_scale(const Tensor& x, bool reduce_range) {
  return quant::choose_qparams(x.min().item<float>(), x.max().item<float>(), 0, reduce_range ? 127 : 255).scale;
}

// The epilogue (dequantize_row, Highway) against its formula in scalar code,
// every tail length (a 256 -> 10 layer's rows are all tail): the wrapping
// subtraction, one fused multiply-add with a bias, the fused ReLU.
TEST(DequantizeRow, EqualsTheScalarFormulaInEveryTail) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int32_t> acc_dist(-2000000, 2000000);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  for (int64_t n = 1; n <= 40; ++n)
    for (bool with_bias : {false, true})
      for (bool relu : {false, true}) {
        std::vector<int32_t> acc(static_cast<size_t>(n));
        std::vector<uint32_t> offset(static_cast<size_t>(n));
        std::vector<float> scale(static_cast<size_t>(n)), bias(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 1, 42.0f);
        for (int64_t j = 0; j < n; ++j) {
          acc[j] = acc_dist(gen), offset[j] = static_cast<uint32_t>(acc_dist(gen)) * 3u;
          scale[j] = std::fabs(real(gen)) * 1e-3f, bias[j] = real(gen);
        }
        dequantize_row(acc.data(), offset.data(), scale.data(), with_bias ? bias.data() : nullptr, y.data(), n, relu);
        for (int64_t j = 0; j < n; ++j) {
          const auto centred = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(acc[j]) - offset[j]));
          float want = with_bias ? std::fma(centred, scale[j], bias[j]) : centred * scale[j];
          if (relu) want = std::max(0.0f, want);
          ASSERT_EQ(y[j], want) << "n " << n << " column " << j << " bias " << with_bias << " relu " << relu;
        }
        EXPECT_EQ(y[static_cast<size_t>(n)], 42.0f) << "wrote past the row, n " << n;
      }
}

// The activation range (vec::minmax_f32, four chains) against a plain loop,
// every length around the chains' stride, with and without a NaN.
TEST(MinMaxF32, EqualsAPlainLoop) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t n : {1, 2, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 1000, 25088}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(gen);
    float lo = 0, hi = 0;
    vec::minmax_f32(x.data(), n, &lo, &hi);
    EXPECT_EQ(lo, *std::min_element(x.begin(), x.end())) << n;
    EXPECT_EQ(hi, *std::max_element(x.begin(), x.end())) << n;
    for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
      std::vector<float> with_nan = x;
      with_nan[static_cast<size_t>(at)] = std::numeric_limits<float>::quiet_NaN();
      vec::minmax_f32(with_nan.data(), n, &lo, &hi);
      EXPECT_TRUE(std::isnan(lo) && std::isnan(hi)) << "NaN at " << at << " of " << n;
    }
  }
}

// The pool of packed products a PackedLinear keeps between calls: a product
// comes back for the same rows, the oldest is dropped beyond 16, and big
// ones beyond 32 MiB (the last two kept whatever their size).
TEST(PackedQGemmPool, ReusesByRowsAndBoundsWhatItKeeps) {
  Tensor w = randint(-127, 128, {64, 32}, kInt8);
  const int8_t* wp = w.data_ptr<int8_t>();
  PackedQGemmPool pool;
  std::unique_ptr<PackedQGemm> a = pool.take(8, 64, 32, wp);
  if (!a) GTEST_SKIP() << "oneDNN has no JIT int8 matmul on this CPU (the plain kernels run)";
  const PackedQGemm* first = a.get();
  pool.give(8, std::move(a));
  std::unique_ptr<PackedQGemm> b = pool.take(16, 64, 32, wp);
  EXPECT_NE(b.get(), first) << "another row count makes its own";
  std::unique_ptr<PackedQGemm> c = pool.take(8, 64, 32, wp);
  EXPECT_EQ(c.get(), first) << "the same rows get the kept product back";
  // Its integers are the reference loop's.
  Tensor x = randint(0, 256, {8, 32}, kUInt8), got = empty({8, 64}, kInt32), want = empty({8, 64}, kInt32);
  c->run(x.data_ptr<uint8_t>(), got.data_ptr<int32_t>());
  qgemm_u8s8s32_ref({x.data_ptr<uint8_t>(), 32, wp, 32, want.data_ptr<int32_t>(), 64, 8, 64, 32});
  EXPECT_TRUE(equal(got, want));
  pool.give(8, std::move(c));
  EXPECT_EQ(pool.kept(), 1u);
  for (int64_t m = 1; m <= 20; ++m) pool.give(100 + m, pool.take(100 + m, 64, 32, wp));
  EXPECT_EQ(pool.kept(), 16u) << "the oldest beyond 16 were dropped";
  // 4096 x 2048 int8: 8 MiB of packed weights each, so no more than four fit in 32 MiB.
  Tensor big = randint(-127, 128, {4096, 2048}, kInt8);
  PackedQGemmPool bounded;
  for (int64_t m = 1; m <= 5; ++m) {
    std::unique_ptr<PackedQGemm> p = bounded.take(m, 4096, 2048, big.data_ptr<int8_t>());
    ASSERT_TRUE(p);
    EXPECT_GE(p->bytes(), size_t{4096} * 2048);
    bounded.give(m, std::move(p));
  }
  EXPECT_GE(bounded.kept(), 2u);
  EXPECT_LE(bounded.kept(), 4u);
  EXPECT_LE(bounded.bytes_kept(), size_t{32} << 20);
  // A product bigger than the whole budget: the last two stay anyway.
  Tensor huge = randint(-127, 128, {8192, 4608}, kInt8);  // 36 MiB
  PackedQGemmPool over;
  for (int64_t m = 1; m <= 3; ++m) over.give(m, over.take(m, 8192, 4608, huge.data_ptr<int8_t>()));
  EXPECT_EQ(over.kept(), 2u);
}

TEST(LinearDynamic, FastPathEqualsReferenceBitwiseAndFloatWithinTheBound) {
  manual_seed(3);
  for (bool reduce : {false, true}) {
    Tensor x = randn({9, 40}) * 3;
    Tensor w = randn({24, 40}) * 0.2, b = randn({24});
    quant::PackedLinear p = quant::PackedLinear::pack(w, b);
    p.reduce_range = reduce;
    Tensor y = quant::linear_dynamic(x, p);
    Tensor yr = quant::linear_dynamic(x, p, /*reference=*/true);
    EXPECT_TRUE(equal(y, yr));
    Tensor yf = linear(x, w, b);
    const double sx = activation_scale(x, reduce);
    for (int64_t i = 0; i < 9; ++i)
      for (int64_t j = 0; j < 24; ++j)
        ASSERT_LE(std::fabs(y[i][j].item<double>() - yf[i][j].item<double>()), error_bound(x, w, p, i, j, sx))
            << i << "," << j << " reduce_range=" << reduce;
  }
}

TEST(LinearDynamic, LeadingDimsAndNoBias) {
  manual_seed(4);
  Tensor x = randn({2, 3, 8}), w = randn({5, 8});
  quant::PackedLinear p = quant::PackedLinear::pack(w, Tensor());
  Tensor y = quant::linear_dynamic(x, p);
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_TRUE(equal(y.reshape({6, 5}), quant::linear_dynamic(x.reshape({6, 8}), p)));
  testing::expect_error([&] { quant::linear_dynamic(randn({2, 7}), p); }, {"in_features = 8"});
}

std::shared_ptr<nn::Sequential> reference_mlp() {
  auto mlp = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(16, 32), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 4)});
  StateDict d;
  for (const char* k : {"0.weight", "0.bias", "2.weight", "2.bias"}) d.insert(k, qref(std::string("mlp.p.") + k).to(kFloat32));
  mlp->load_state_dict(d, true);
  mlp->eval();
  return mlp;
}

TEST(QuantizeDynamic, SwapsLinearsReprAsPyTorchOutputsNearPyTorch) {
  auto mlp = reference_mlp();
  Tensor x = qref("mlp.x").to(kFloat32);
  Tensor yf = mlp->forward(x);
  quant::QuantizeReport report;
  nn::ModulePtr q = quant::quantize_dynamic(mlp, {"Linear"}, kQInt8, &report);
  EXPECT_EQ(q->repr(), qmeta("mlp.repr"));
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"0", "2"}));
  EXPECT_TRUE(report.kept_float.empty());
  // The float model is untouched (quantize_dynamic rebuilt the Sequential).
  EXPECT_TRUE(equal(mlp->forward(x), yf));
  Tensor y = q->forward(x);
  Tensor torch_int8 = qref("mlp.int8").to(kFloat32), torch_float = qref("mlp.float").to(kFloat32);
  // Both int8 models are within the quantization error of the float one;
  // PyTorch (onednn engine) picks its own activation range, so the stated
  // tolerance is 2% of the output's largest magnitude.
  const double tol = 0.02 * torch_float.abs().max().item<double>();
  EXPECT_LE((y - torch_int8).abs().max().item<double>(), tol);
  EXPECT_LE((y - yf).abs().max().item<double>(), tol);
  EXPECT_GT((y - yf).abs().max().item<double>(), 0.0);  // it really ran in int8
}

// A user's own module named like PyTorch's LSTM, without Ember's time loop.
class OwnLstm : public nn::Module {
 public:
  OwnLstm() : nn::Module("LSTM") {}
  Tensor forward(const Tensor& x) override { return x; }
};

TEST(QuantizeDynamic, ListsWhatStaysFloatAndWhy) {
  auto model = std::make_shared<nn::Sequential>(
      std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Linear>(4, 4), std::make_shared<nn::Tanh>()});
  auto outer = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{model});
  outer->push_back("rnn", std::make_shared<OwnLstm>());
  quant::QuantizeReport r;
  quant::quantize_dynamic(outer, {"Linear", "LSTM"}, kQInt8, &r);
  EXPECT_EQ(r.quantized, (std::vector<std::string>{"0.0"}));
  ASSERT_EQ(r.kept_float.size(), 1u);
  EXPECT_EQ(r.kept_float[0].first, "rnn");
  EXPECT_NE(r.kept_float[0].second.find("not an ember::nn::RNNBase"), std::string::npos) << r.str();
  EXPECT_NE(r.str().find("kept in float (1)"), std::string::npos);
}

// LSTM and GRU are quantized in place, so a parent calling them through a
// typed member runs int8 too: the eager int8 LSTM is PyTorch's quantize_dynamic
// LSTM within 0.02 (tests/data/gen_quant.py, lstm.int8; PyTorch's weights are
// per tensor, Ember's per channel) and the graph pass's rnn_layer_dynamic_int8 bitwise.
class Tagger : public nn::Module {
 public:
  Tagger() : nn::Module("Tagger") { rnn = register_module("rnn", std::make_shared<nn::LSTM>(8, 12)); }
  Tensor forward(const Tensor& x) override { return rnn->forward(x).first; }
  std::shared_ptr<nn::LSTM> rnn;
};

TEST(QuantizeDynamic, LstmIsQuantizedInPlaceNearPyTorch) {
  auto m = std::make_shared<Tagger>();
  StateDict d;
  for (const char* k : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"})
    d.insert(std::string("rnn.") + k, qref(std::string("lstm.p.") + k).to(kFloat32));
  m->load_state_dict(d, true);
  m->eval();
  Tensor x = qref("lstm.x").to(kFloat32);
  jit::Graph float_graph = jit::trace(*m, {x});
  Tensor yf = m->forward(x);
  quant::QuantizeReport r;
  nn::ModulePtr q = quant::quantize_dynamic(m, {"LSTM"}, kQInt8, &r);
  EXPECT_EQ(q, m) << "in place";
  EXPECT_EQ(r.quantized, (std::vector<std::string>{"rnn"})) << r.str();
  EXPECT_TRUE(m->rnn->is_dynamic_int8());
  EXPECT_NE(m->rnn->extra_repr().find("dtype=qint8"), std::string::npos) << m->rnn->extra_repr();
  Tensor y = m->forward(x);
  EXPECT_LE((y - qref("lstm.int8").to(kFloat32)).abs().max().item<double>(), 0.02);
  EXPECT_LE((y - yf).abs().max().item<double>(), 0.02);
  EXPECT_GT((y - yf).abs().max().item<double>(), 0.0) << "it ran in int8";
  EXPECT_TRUE(equal(y, jit::run(jit::quantize_dynamic(float_graph).graph, {x})[0]));
  testing::expect_error([&] { jit::trace(*m, {x}); }, {"dynamic int8 LSTM cannot be traced", "quantize the graph"});
}

TEST(QuantizeDynamic, BidirectionalTwoLayerGruWithLengths) {
  manual_seed(23);
  nn::RNNOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  nn::GRU gru(5, 7, o);
  gru.eval();
  Tensor x = randn({6, 3, 5}), lengths = tensor<int64_t>({6, 3, 1}, {3});
  auto [yf, hf] = gru.forward(x, lengths, Tensor());
  gru.quantize_dynamic_int8();
  auto [y, h] = gru.forward(x, lengths, Tensor());
  EXPECT_EQ(y.sizes().vec(), yf.sizes().vec());
  EXPECT_LE((y - yf).abs().max().item<double>(), 0.05);
  EXPECT_LE((h - hf).abs().max().item<double>(), 0.05);
  EXPECT_GT((y - yf).abs().max().item<double>(), 0.0);
  EXPECT_EQ(y.narrow(0, 1, 5).narrow(1, 2, 1).abs().max().item<float>(), 0.f) << "past its length: zeros";
}

// A parent that calls its child through a typed member: swapping the registry
// slot would change nothing, so the Linear is listed as float instead.
class Typed : public nn::Module {
 public:
  Typed() : nn::Module("Typed") { fc = register_module("fc", std::make_shared<nn::Linear>(3, 2)); }
  Tensor forward(const Tensor& x) override { return fc->forward(x); }
  std::shared_ptr<nn::Linear> fc;
};

TEST(QuantizeDynamic, TypedMemberIsNotSwappedSilently) {
  auto m = std::make_shared<Typed>();
  quant::QuantizeReport r;
  nn::ModulePtr q = quant::quantize_dynamic(m, {"Linear"}, kQInt8, &r);
  EXPECT_TRUE(r.quantized.empty());
  ASSERT_EQ(r.kept_float.size(), 1u);
  EXPECT_EQ(r.kept_float[0].first, "fc");
  EXPECT_NE(r.kept_float[0].second.find("through its own member"), std::string::npos);
  EXPECT_EQ(q->get_submodule("fc")->type_name(), "Linear");
  testing::expect_error([&] { quant::quantize_dynamic(m, {"Conv2d"}); }, {"unknown module type 'Conv2d'"});
}

// Note [dynamic int8 rows]: a product big enough is cut into one block of
// rows per thread, each finding its rows' range before the team meets. The
// numbers equal the whole product on one thread bitwise, NaN rows included,
// eagerly and on packed weights; relu in the kernel equals relu after it.
TEST(LinearDynamic, RowBlocksOnTwoThreadsEqualOneThreadBitwise) {
  const int threads_before = get_num_threads();
  set_num_threads(std::max(2, threads_before));  // two blocks even where the suite runs on one thread
  const int64_t m = 64, k = 4096, n = 1024;  // 268M MACs: far more than a fork costs anywhere
  ASSERT_EQ(qlinear_dynamic_row_blocks(m, k, n, 2).size(), 2u) << "region cost " << parallel_region_cost_us() << " us";
  EXPECT_EQ(qlinear_dynamic_row_blocks(1, k, n, 2).size(), 1u);   // one row: oneDNN's split
  EXPECT_EQ(qlinear_dynamic_row_blocks(32, 8, 8, 2).size(), 1u);  // far less work than a fork
  manual_seed(5);
  Tensor x = randn({m, k}) * 2;
  x[40][3].fill_(std::nan(""));  // in the second block only
  x[50][7].fill_(-9.0);          // the second block holds the minimum
  Tensor w = randn({n, k}) * 0.05, b = randn({n});
  quant::PackedLinear p = quant::PackedLinear::pack(w, b);
  QLinearDynamicArgs a;
  a.x = x.data_ptr<float>(), a.m = m, a.k = k, a.n = n;
  a.w = p.weight.data_ptr<int8_t>(), a.colsum = p.col_sum.data_ptr<int32_t>(), a.w_scale = p.scale.data_ptr<float>();
  a.bias = b.data_ptr<float>();
  auto run = [&](bool relu, int threads, bool packed) {
    Tensor y = empty({m, n});
    QLinearDynamicArgs c = a;
    c.relu = relu, c.y = y.data_ptr<float>();
    const ThreadLimitGuard limit(threads);
    if (!packed) qlinear_dynamic_f32(c);
    else if (auto prepared = PreparedQLinearDynamic::make(m, n, k, c.w, false)) prepared->run(c);
    else qlinear_dynamic_f32(c);  // no VNNI: the exact loop, as the runtime does
    return y;
  };
  const Tensor one = run(false, 1, false);
  EXPECT_FALSE(one.isnan().any().item<bool>());
  EXPECT_TRUE(equal(run(false, 2, false), one));
  EXPECT_TRUE(equal(run(false, 2, true), one));
  EXPECT_TRUE(equal(run(true, 2, true), relu(one)));
  EXPECT_TRUE(equal(run(true, 1, false), relu(one)));
  set_num_threads(threads_before);
}

}  // namespace
}  // namespace ember

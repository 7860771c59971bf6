// Static int8 (issue 15): the observers against closed forms; the int8
// conv/linear reference loops against float convolution of the dequantized
// operands; the oneDNN kernels against the reference loops; the graph pass
// on a traced CNN and MLP (node kinds, uint8 between int8 layers, outputs
// close to float, a saved file that loads and runs bitwise alike).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/quantize_static.h"
#include "ember/jit/trace.h"
#include "ember/quant/observer.h"
#include "ember/runtime/session.h"
#include "kernels/qgemm.h"
#include "kernels/qstatic.h"
#include "test_util.h"
#include "jit/graph_test_util.h"

namespace ember {
namespace {

// ---- observers ----

TEST(Observer, MinMaxKeepsTheExtremes) {
  quant::Observer o;
  o.observe(tensor<float>({0.5f, -2.f, 1.f}, {3}));
  o.observe(tensor<float>({3.f, NAN, 0.f}, {3}));
  EXPECT_EQ(o.min(), -2.f);
  EXPECT_EQ(o.max(), 3.f);
  EXPECT_TRUE(o.is_signed());
  EXPECT_EQ(o.bound(), 3.f);
  EXPECT_EQ(o.count(), 5);
  EXPECT_EQ(o.batches(), 2);
}

TEST(Observer, MovingAverageFollowsPyTorchsUpdate) {
  quant::ObserverConfig c;
  c.kind = quant::ObserverKind::MovingAverageMinMax;
  c.averaging_constant = 0.25;
  quant::Observer o(c);
  o.observe(tensor<float>({0.f, 4.f}, {2}));
  o.observe(tensor<float>({0.f, 8.f}, {2}));  // 4 + 0.25 * (8 - 4)
  o.observe(tensor<float>({0.f, 1.f}, {2}));  // 5 + 0.25 * (1 - 5)
  EXPECT_FLOAT_EQ(o.max(), 4.f);
  EXPECT_FALSE(o.is_signed());
  EXPECT_FLOAT_EQ(o.bound(), 4.f);
}

TEST(Observer, HistogramClipsAtThePercentile) {
  quant::ObserverConfig c;
  c.kind = quant::ObserverKind::Histogram;
  c.percentile = 99.0;
  c.bins = 1000;
  quant::Observer o(c);
  // 1..999 in one batch and 1000 alone in another: the range grows (bins merge)
  // and 99% of 1000 values lie at or below 990.
  std::vector<float> v;
  for (int i = 1; i < 1000; ++i) v.push_back(static_cast<float>(i));
  o.observe(tensor<float>(v, {999}));
  o.observe(tensor<float>({1000.f}, {1}));
  EXPECT_EQ(o.max(), 1000.f);
  const float bin = 2 * 999.f / 1000;  // the top doubled once
  EXPECT_GE(o.bound(), 990.f);
  EXPECT_LE(o.bound(), 990.f + 2 * bin);
  c.percentile = 100;
  quant::Observer all(c);
  all.observe(tensor<float>(v, {999}));
  EXPECT_EQ(all.bound(), 999.f) << "never past the largest value";
}

TEST(Observer, ErrorsNameTheProblem) {
  quant::Observer o;
  testing::expect_error([&] { (void)o.bound(); }, {"no values observed"});
  testing::expect_error([] { quant::observer_from_name("median"); }, {"median", "minmax", "moving_average", "histogram"});
  quant::ObserverConfig c;
  c.percentile = 0;
  testing::expect_error([&] { quant::Observer bad(c); }, {"percentile"});
}

// ---- kernels ----

struct ConvCase {
  int64_t n, c_in, c_out, h, w, k, stride, pad, groups;
  ScalarType src;
  ScalarType dst;
  bool relu, bias, pool;
};

Tensor random_q(IntArrayRef sizes, ScalarType t) {
  return t == kUInt8 ? randint(0, 256, sizes).to(kUInt8) : randint(-127, 128, sizes).to(kInt8);
}

Tensor dequant(const Tensor& q, const Tensor& scale_per_row) {
  Tensor f = q.to(kFloat32);
  std::vector<int64_t> shape(static_cast<size_t>(q.dim()), 1);
  shape[0] = -1;
  return f * scale_per_row.reshape(shape);
}

QConvSpec spec_of(const ConvCase& c) {
  QConvSpec s;
  ConvParams& p = s.p;
  p.n = c.n, p.c_in = c.c_in, p.c_out = c.c_out, p.groups = c.groups, p.ih = c.h, p.iw = c.w, p.kh = p.kw = c.k;
  p.sh = p.sw = c.stride, p.pt = p.pb = p.pl = p.pr = c.pad;
  p.oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, p.ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  s.src = {c.src, 0.02f};
  s.out.relu = c.relu;
  s.out.dst_dtype = c.dst;
  s.out.dst_scale = 0.05f;
  if (c.pool) {
    PoolParams q;
    q.n = p.n, q.c = p.c_out, q.ih = p.oh, q.iw = p.ow, q.kh = q.kw = 2, q.sh = q.sw = 2, q.oh = p.oh / 2, q.ow = p.ow / 2;
    s.pool = FusedPool{q, true};
  }
  return s;
}

const ConvCase kConvCases[] = {
    {2, 8, 16, 9, 9, 3, 1, 1, 1, kUInt8, kFloat32, false, true, false},
    {3, 8, 16, 8, 8, 3, 1, 1, 1, kUInt8, kUInt8, true, true, true},
    {2, 3, 8, 11, 7, 3, 2, 0, 1, kInt8, kFloat32, true, true, false},
    {2, 1, 32, 28, 28, 3, 1, 1, 1, kInt8, kUInt8, true, true, true},  // W1's first conv
    {2, 8, 8, 6, 6, 1, 1, 0, 2, kInt8, kUInt8, false, false, false},
};

// With VNNI (or AMX) oneDNN's int32 products are exact, so the outputs match
// the reference up to float rounding (one step for a uint8 output). Without
// it oneDNN halves the weights (its guard against vpmaddubsw saturation),
// losing a bit of each: then within 5% of the output range.
double loose_or(double exact_tol, const Tensor& want) {
  return cpu_has_vnni() ? exact_tol : 0.05 * want.to(kFloat32).abs().max().item<float>() + exact_tol;
}

TEST(QStaticKernels, ConvReferenceIsTheFloatConvOfDequantizedOperands) {
  manual_seed(3);
  for (const ConvCase& c : kConvCases) {
    if (c.dst != kFloat32) continue;  // exact float comparison only for float outputs
    const QConvSpec s = spec_of(c);
    Tensor x = random_q({c.n, c.c_in, c.h, c.w}, c.src), w = random_q({c.c_out, c.c_in / c.groups, c.k, c.k}, kInt8);
    Tensor ws = rand({c.c_out}) * 0.01f + 0.001f, b = randn({c.c_out});
    Tensor got = empty({c.n, c.c_out, s.p.oh, s.p.ow});
    qconv2d_ref(s, x.data_ptr(), w.data_ptr<int8_t>(), ws.data_ptr<float>(), c.bias ? b.data_ptr<float>() : nullptr,
                got.data_ptr());
    Tensor want = conv2d(x.to(kFloat32) * s.src.scale, dequant(w, ws), c.bias ? std::optional<Tensor>(b) : std::nullopt,
                         {c.stride, c.stride}, {c.pad, c.pad}, {1, 1}, c.groups);
    if (c.relu) want = relu(want);
    EXPECT_TRUE(allclose(got, want, 1e-4, 1e-4)) << (got - want).abs().max().item<float>();
  }
}

TEST(QStaticKernels, OneDnnConvMatchesTheReference) {
  manual_seed(4);
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(::testing::Message() << "c_in " << c.c_in << " c_out " << c.c_out << " groups " << c.groups
                                      << " pool " << c.pool << " dst " << to_string(c.dst));
    const QConvSpec s = spec_of(c);
    Tensor x = random_q({c.n, c.c_in, c.h, c.w}, c.src), w = random_q({c.c_out, c.c_in / c.groups, c.k, c.k}, kInt8);
    Tensor ws = rand({c.c_out}) * 0.01f + 0.001f, b = randn({c.c_out});
    const float* bias = c.bias ? b.data_ptr<float>() : nullptr;
    const int64_t oh = c.pool ? s.p.oh / 2 : s.p.oh, ow = c.pool ? s.p.ow / 2 : s.p.ow;
    Tensor want = empty({c.n, c.c_out, oh, ow}, TensorOptions(c.dst)), got = empty({c.n, c.c_out, oh, ow}, TensorOptions(c.dst));
    qconv2d_ref(s, x.data_ptr(), w.data_ptr<int8_t>(), ws.data_ptr<float>(), bias, want.data_ptr());
    auto k = PreparedQConv::make(s, w.data_ptr<int8_t>(), ws.data_ptr<float>(), bias);
    ASSERT_TRUE(k) << "oneDNN has an int8 convolution for this geometry";
    k->run(x.data_ptr(), got.data_ptr());
    const double err = (got.to(kFloat32) - want.to(kFloat32)).abs().max().item<float>();
    const double scale = want.to(kFloat32).abs().max().item<float>();
    EXPECT_LE(err, loose_or(c.dst == kFloat32 ? 1e-5 * scale + 1e-4 : 1.0, want)) << k->impl();
  }
}

TEST(QStaticKernels, OneDnnLinearMatchesTheReference) {
  manual_seed(5);
  for (ScalarType src : {kUInt8, kInt8})
    for (ScalarType dst : {kFloat32, kUInt8}) {
      QLinearSpec s;
      s.m = 7, s.n = 13, s.k = 100;
      s.src = {src, 0.03f};
      s.out = {dst == kUInt8, dst, 0.1f};
      Tensor x = random_q({s.m, s.k}, src), w = random_q({s.n, s.k}, kInt8);
      Tensor ws = rand({s.n}) * 0.01f + 0.001f, b = randn({s.n});
      Tensor want = empty({s.m, s.n}, TensorOptions(dst)), got = empty({s.m, s.n}, TensorOptions(dst));
      qlinear_ref(s, x.data_ptr(), w.data_ptr<int8_t>(), ws.data_ptr<float>(), b.data_ptr<float>(), want.data_ptr());
      if (dst == kFloat32) {
        Tensor f = matmul(x.to(kFloat32) * s.src.scale, dequant(w, ws).t()) + b;
        EXPECT_TRUE(allclose(want, f, 1e-4, 1e-4)) << "the reference is the float product of the dequantized operands";
      }
      auto k = PreparedQLinear::make(s, w.data_ptr<int8_t>(), ws.data_ptr<float>(), b.data_ptr<float>());
      ASSERT_TRUE(k);
      k->run(x.data_ptr(), got.data_ptr());
      const double err = (got.to(kFloat32) - want.to(kFloat32)).abs().max().item<float>();
      EXPECT_LE(err, loose_or(dst == kFloat32 ? 1e-3 : 1.0, want)) << k->impl();
    }
}

TEST(QStaticKernels, QuantizeActivationRoundsHalfToEvenAndSaturates) {
  Tensor x = tensor<float>({0.f, 0.25f, 0.75f, 1.25f, -0.25f, 1000.f, -1000.f, NAN, 63.75f}, {9});
  Tensor u = empty({9}, TensorOptions(kUInt8)), s = empty({9}, TensorOptions(kInt8));
  quantize_activation(x.data_ptr<float>(), u.data_ptr(), 9, {kUInt8, 0.5f});
  quantize_activation(x.data_ptr<float>(), s.data_ptr(), 9, {kInt8, 0.5f});
  EXPECT_TRUE(equal(u, tensor<uint8_t>({0, 0, 2, 2, 0, 255, 0, 0, 128}, {9})));
  EXPECT_TRUE(equal(s, tensor<int8_t>({0, 0, 2, 2, 0, 127, -127, 0, 127}, {9})));
}

// ---- the graph pass ----

using jit::testing::count_kind;

std::shared_ptr<nn::Sequential> small_cnn() {
  manual_seed(21);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Conv2d>(1, 8, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(8, 16, 3, 1, 1), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(16 * 4 * 4, 32),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 10)});
  m->eval();
  return m;
}

TEST(GraphQuantizeStatic, CnnBecomesInt8WithUint8BetweenLayers) {
  auto m = small_cnn();
  Tensor x = randn({8, 1, 16, 16});
  jit::Graph g = jit::optimize(jit::trace(*m, {x}), 2).graph;
  jit::StaticCalibration cal = quant::prepare(g);
  for (int i = 0; i < 4; ++i) cal.observe({randn({8, 1, 16, 16})});
  EXPECT_EQ(cal.batches(), 4);
  jit::StaticQuantizeResult r = quant::convert(cal);
  EXPECT_EQ(count_kind(r.graph, "conv2d_int8"), 2) << r.graph.str();
  EXPECT_EQ(count_kind(r.graph, "linear_int8"), 2);
  EXPECT_EQ(count_kind(r.graph, "quantize_static"), 1);
  EXPECT_EQ(count_kind(r.graph, "conv2d") + count_kind(r.graph, "matmul"), 0);
  EXPECT_EQ(r.quantized.size(), 4u);
  EXPECT_TRUE(r.kept_float.empty()) << r.str();
  // The input is signed (int8); every later activation is a ReLU's (uint8); the logits are float.
  int64_t u8 = 0;
  for (const jit::Value& v : r.graph.values) u8 += v.type.dtype == kUInt8;
  EXPECT_EQ(u8, 4) << "two conv outputs, the flattened view, the hidden linear's output";
  for (const jit::Node& n : r.graph.nodes) {
    if (n.kind == "quantize_static") {
      EXPECT_EQ(r.graph.type(n.outputs[0]).dtype, kInt8);
    }
  }
  // Close to float on fresh data: within a tenth of the logits' range, mostly the same class.
  int64_t same = 0;
  for (int i = 0; i < 8; ++i) {
    Tensor t = randn({8, 1, 16, 16});
    Tensor want = m->forward(t), got = jit::run(r.graph, {t})[0];
    EXPECT_LT((got - want).abs().max().item<float>(), 0.1f * want.abs().max().item<float>());
    same += got.argmax(1).eq(want.argmax(1)).sum().item<int64_t>();
  }
  EXPECT_GE(same, 56) << "of 64";
}

TEST(GraphQuantizeStatic, SavedFileLoadsAndRunsAlike) {
  auto m = small_cnn();
  Tensor x = randn({4, 1, 16, 16});
  jit::TraceOptions opts;
  opts.dynamic_dims.push_back({0, 0, "batch"});
  jit::Graph g = jit::optimize(jit::trace(*m, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m->forward(in[0])}; },
                                          {x}, opts),
                               2)
                     .graph;
  jit::StaticQuantConfig config;
  config.observer.kind = quant::ObserverKind::Histogram;
  jit::StaticCalibration cal(g, config);
  cal.observe({randn({16, 1, 16, 16})});
  jit::ModelFile f;
  f.graph = cal.convert().graph;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("qstatic" + std::to_string(::getpid()) + ".ember")).string();
  jit::save_model(f, path);
  jit::ModelFile back = jit::load_model(path);
  EXPECT_EQ(back.format_version, 3);
  EXPECT_EQ(back.graph.str(), f.graph.str());
  runtime::Session session(path);
  for (int64_t batch : {1, 5}) {
    Tensor t = randn({batch, 1, 16, 16});
    EXPECT_TRUE(equal(session.run(std::vector<Tensor>{t})[0], jit::run(f.graph, {t})[0])) << batch;
  }
  std::filesystem::remove(path);
}

TEST(GraphQuantizeStatic, PrepareTracesAModuleWithADynamicBatch) {
  auto m = small_cnn();
  jit::StaticCalibration cal = quant::prepare(*m, {randn({2, 1, 16, 16})});
  cal.observe({randn({32, 1, 16, 16})});
  jit::StaticQuantizeResult r = quant::convert(cal);
  EXPECT_EQ(count_kind(r.graph, "conv2d_int8"), 2) << r.graph.str();
  EXPECT_EQ(count_kind(r.graph, "linear_int8"), 2);
  for (int64_t batch : {1, 7}) {
    Tensor t = randn({batch, 1, 16, 16});
    Tensor want = m->forward(t), got = jit::run(r.graph, {t})[0];
    EXPECT_EQ(got.sizes().vec(), (std::vector<int64_t>{batch, 10}));
    EXPECT_LT((got - want).abs().max().item<float>(), 0.1f * want.abs().max().item<float>());
  }
}

TEST(GraphQuantizeStatic, KeptFloatLayersAreListedWithTheReason) {
  auto m = small_cnn();
  Tensor x = randn({2, 1, 16, 16});
  jit::Graph g = jit::optimize(jit::trace(*m, {x}), 2).graph;
  jit::StaticQuantConfig config;
  config.keep_float = {"0"};
  jit::StaticCalibration cal(g, config);
  testing::expect_error([&] { (void)cal.convert(); }, {"at least one calibration batch"});
  cal.observe({x});
  jit::StaticQuantizeResult r = cal.convert();
  EXPECT_EQ(count_kind(r.graph, "conv2d"), 1);
  EXPECT_EQ(count_kind(r.graph, "conv2d_int8"), 1);
  ASSERT_EQ(r.kept_float.size(), 1u);
  EXPECT_EQ(r.kept_float[0].first, "0");
  EXPECT_NE(r.str().find("kept float as asked"), std::string::npos) << r.str();
  // The float conv's ReLU output is unsigned: it enters the second conv as uint8.
  Tensor want = m->forward(x), got = jit::run(r.graph, {x})[0];
  EXPECT_LT((got - want).abs().max().item<float>(), 0.1f * want.abs().max().item<float>());
}

TEST(GraphQuantizeStatic, AVersionTwoFileWithStaticInt8IsRefused) {
  auto m = small_cnn();
  Tensor x = randn({2, 1, 16, 16});
  jit::StaticCalibration cal(jit::optimize(jit::trace(*m, {x}), 2).graph);
  cal.observe({x});
  jit::ModelFile f;
  f.graph = cal.convert().graph;
  f.format_version = 2;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("qstatic_v2" + std::to_string(::getpid()) + ".ember")).string();
  jit::save_model(f, path);
  testing::expect_error([&] { jit::load_model(path); }, {"needs format version 3"});
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ember

// Dynamic int8 (issue 15) against float, both as traced graphs run by
// runtime::Session (dynamic batch, optimize level 2):
//   Mlp/{0 float,1 int8}/batch   W2 shapes 784-256-256-10, batch 1/32/64
//   Lstm/{0,1}/batch             LSTM 32 -> 64 over 50 steps + Linear 64 -> 2
//                                (the reviews LSTM classifier's recurrent core)
//   Cnn/{0,1}/batch              W1/W9 CNN: only its Linear layers are int8 in
//                                dynamic mode (convs stay float), batch 1/256
//   QGemm/{ref 0, onednn 1}/m    the int8 GEMM alone, [m, 784] x [256, 784]^T
// Items/s are samples/s. The machine is shared: quote medians
// (--benchmark_repetitions=5 --benchmark_report_aggregates_only=true).
#include <benchmark/benchmark.h>

#include "ember/ember.h"
#include "ember/jit/passes/optimize.h"
#include "ember/jit/passes/quantize_dynamic.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"
#include "kernels/qgemm.h"

using namespace ember;

namespace {

runtime::Session session(nn::Module& m, const jit::TraceFn& fn, const Tensor& example, bool int8) {
  jit::TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}};
  jit::ModelFile f;
  f.graph = jit::optimize(jit::trace(m, fn, {example}, o), 2).graph;
  if (int8) f.graph = jit::quantize_dynamic(f.graph).graph;
  return runtime::Session(std::move(f));
}

void run(benchmark::State& state, runtime::Session& s, const Tensor& x) {
  std::vector<Tensor> in{x};
  for (int i = 0; i < 3; ++i) benchmark::DoNotOptimize(s.run(in));
  for (auto _ : state) benchmark::DoNotOptimize(s.run(in));
  state.SetItemsProcessed(state.iterations() * x.size(0));
}

void BM_Mlp(benchmark::State& state) {
  manual_seed(0);
  train::MLPOptions o;
  o.in_features = 784;
  o.out_features = 10;
  train::MLP m(o);
  m.eval();
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
  runtime::Session s = session(m, fn, randn({4, 784}), state.range(0) == 1);
  run(state, s, randn({state.range(1), 784}));
}
BENCHMARK(BM_Mlp)->ArgsProduct({{0, 1}, {1, 32, 64}})->UseRealTime();

// The recurrent core of the reviews classifier: the last step's h through a Linear.
class LstmCore : public nn::Module {
 public:
  LstmCore() : nn::Module("LstmCore") {
    lstm = register_module("lstm", std::make_shared<nn::LSTM>(32, 64, nn::RNNOptions{.batch_first = true}));
    fc = register_module("fc", std::make_shared<nn::Linear>(64, 2));
  }
  Tensor forward(const Tensor& x) override { return fc->forward(lstm->forward(x).second.first[0]); }
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> fc;
};

void BM_Lstm(benchmark::State& state) {
  manual_seed(0);
  LstmCore m;
  m.eval();
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
  runtime::Session s = session(m, fn, randn({4, 50, 32}), state.range(0) == 1);
  run(state, s, randn({state.range(1), 50, 32}));
}
BENCHMARK(BM_Lstm)->ArgsProduct({{0, 1}, {1, 32, 64}})->UseRealTime();

void BM_Cnn(benchmark::State& state) {
  manual_seed(0);
  train::CNN m(train::CNNOptions{});
  m.eval();
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; };
  runtime::Session s = session(m, fn, randn({4, 1, 28, 28}), state.range(0) == 1);
  run(state, s, randn({state.range(1), 1, 28, 28}));
}
BENCHMARK(BM_Cnn)->ArgsProduct({{0, 1}, {1, 256}})->UseRealTime();

void BM_QGemm(benchmark::State& state) {
  const int64_t m = state.range(1), n = 256, k = 784;
  Tensor a = randint(0, 256, {m, k}, kUInt8), b = randint(-128, 128, {n, k}, kInt8), c = empty({m, n}, kInt32);
  QGemmArgs g{a.data_ptr<uint8_t>(), k, b.data_ptr<int8_t>(), k, c.data_ptr<int32_t>(), n, m, n, k};
  for (auto _ : state) {
    if (state.range(0) == 0) qgemm_u8s8s32_ref(g);
    else qgemm_u8s8s32(g);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * m);
}
BENCHMARK(BM_QGemm)->ArgsProduct({{0, 1}, {1, 64}})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

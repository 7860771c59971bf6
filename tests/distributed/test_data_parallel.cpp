// DistributedDataParallel: N ranks with per-rank batch B against one process
// with batch N*B (issue 18's correctness criterion), buckets, no_sync, unused
// parameters, determinism. ctest runs it under mpirun -np 2 and alone.
#include <cstring>

#include "dist_util.h"
#include "ember/distributed/data_parallel.h"
#include "ember/distributed/sync_batch_norm.h"
#include "ember/nn/loss.h"
#include "ember/optim/sgd.h"
#include "ember/train/models.h"
#include "test_util.h"

namespace ember {
namespace {

using ember_test::world;
using nn::DistributedDataParallel;

float max_abs_diff(const nn::Module& a, const nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  EXPECT_EQ(pa.size(), pb.size());
  float worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, (pa[i].second - pb[i].second).abs().max().item<float>());
  return worst;
}

bool bitwise_equal(const nn::Module& a, const nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    Tensor x = pa[i].second.contiguous(), y = pb[i].second.contiguous();
    if (std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0) return false;
  }
  return true;
}

std::shared_ptr<train::MLP> make_mlp(uint64_t seed) {
  manual_seed(seed);
  train::MLPOptions o;
  o.in_features = 12;
  o.hidden = {32, 16};
  o.out_features = 5;
  return std::make_shared<train::MLP>(o);
}

std::shared_ptr<train::LSTMClassifier> make_lstm(uint64_t seed) {
  manual_seed(seed);
  train::LSTMClassifierOptions o;
  o.vocab_size = 30;
  o.embed_dim = 8;
  o.hidden = 12;
  o.num_classes = 3;
  return std::make_shared<train::LSTMClassifier>(o);
}

// Trains `ref` on the global batch and `ddp` on this rank's slice for
// `steps` SGD steps; the global batch of step s is the same on every rank.
// forward(model, batch rows [begin, begin + count)) returns logits.
template <typename Forward, typename Labels>
void train_both(nn::Module& ref, DistributedDataParallel& ddp, int64_t B, int steps, Forward forward, Labels labels) {
  const auto& pg = world();
  const int64_t n = pg->size(), r = pg->rank();
  optim::SGD opt_ref(ref.parameters(), {.lr = 0.5});
  optim::SGD opt(ddp.parameters(), {.lr = 0.5});
  for (int s = 0; s < steps; ++s) {
    Tensor y = labels(s, n * B);
    opt_ref.zero_grad();
    nn::functional::cross_entropy(forward(ref, s, 0, n * B, nullptr), y).backward();
    opt_ref.step();
    opt.zero_grad();
    nn::functional::cross_entropy(forward(*ddp.module(), s, r * B, B, &ddp), y.narrow(0, r * B, B)).backward();
    opt.step();
  }
}

TEST(DistributedDataParallel, RanksWithBatchBMatchOneProcessWithGlobalBatchMLP) {
  const auto& pg = world();
  const int64_t B = 4;
  auto ref = make_mlp(7);
  // Other ranks start from other weights: construction broadcasts rank 0's.
  auto ddp = std::make_shared<DistributedDataParallel>(make_mlp(7 + pg->rank()), pg);
  EXPECT_EQ(max_abs_diff(*ref, *ddp->module()), 0.0f);
  auto forward = [](nn::Module& m, int s, int64_t begin, int64_t count, DistributedDataParallel* d) {
    Generator gen(100 + static_cast<uint64_t>(s));
    Tensor x = randn({world()->size() * 4, 12}, {}, &gen).narrow(0, begin, count);
    return d ? d->forward(x) : m.forward(x);
  };
  auto labels = [](int s, int64_t rows) {
    Generator gen(900 + static_cast<uint64_t>(s));
    return randint(0, 5, {rows}, kInt64, &gen);
  };
  train_both(*ref, *ddp, B, 6, forward, labels);
  float diff = max_abs_diff(*ref, *ddp->module());
  EXPECT_LE(diff, 1e-6f) << "world size " << pg->size();
  // The run actually moved the weights (a test that cannot pass vacuously).
  EXPECT_GT(max_abs_diff(*ref, *make_mlp(7)), 1e-2f);
}

TEST(DistributedDataParallel, RanksWithBatchBMatchOneProcessWithGlobalBatchLSTM) {
  const auto& pg = world();
  const int64_t B = 3, T = 6;
  auto ref = make_lstm(11);
  auto ddp = std::make_shared<DistributedDataParallel>(make_lstm(11 + pg->rank()), pg);
  auto forward = [](nn::Module& m, int s, int64_t begin, int64_t count, DistributedDataParallel* d) {
    Generator gen(300 + static_cast<uint64_t>(s));
    const int64_t rows = world()->size() * 3;
    Tensor tokens = randint(1, 30, {rows, T}, kInt64, &gen).narrow(0, begin, count).contiguous();
    Tensor lengths = randint(2, T + 1, {rows}, kInt64, &gen).narrow(0, begin, count).contiguous();
    if (d) d->prepare_forward();
    return static_cast<train::LSTMClassifier&>(m).forward(tokens, lengths);
  };
  auto labels = [](int s, int64_t rows) {
    Generator gen(700 + static_cast<uint64_t>(s));
    return randint(0, 3, {rows}, kInt64, &gen);
  };
  train_both(*ref, *ddp, B, 5, forward, labels);
  EXPECT_LE(max_abs_diff(*ref, *ddp->module()), 1e-6f) << "world size " << pg->size();
  EXPECT_GT(max_abs_diff(*ref, *make_lstm(11)), 1e-3f);
}

std::shared_ptr<train::CNN> make_cnn(uint64_t seed) {
  manual_seed(seed);
  train::CNNOptions o;
  o.height = o.width = 8;
  o.channels = {4, 8};
  o.hidden = 16;
  o.dropout = 0;  // dropout masks would differ between the batch split and the whole batch
  return std::make_shared<train::CNN>(o);
}

// The W1 CNN (Conv-BN-ReLU-Pool blocks): BatchNorm sees the global batch only
// through SyncBatchNorm, so the ranks convert theirs; the reference is the
// plain model on the whole batch.
TEST(DistributedDataParallel, RanksWithBatchBMatchOneProcessWithGlobalBatchCNN) {
  const auto& pg = world();
  const int64_t B = 3;
  auto ref = make_cnn(13);
  auto ddp = std::make_shared<DistributedDataParallel>(nn::convert_sync_batchnorm(make_cnn(13 + pg->rank()), pg), pg);
  EXPECT_EQ(ddp->module()->get_submodule("1")->type_name(), "SyncBatchNorm");
  auto forward = [](nn::Module& m, int s, int64_t begin, int64_t count, DistributedDataParallel* d) {
    Generator gen(500 + static_cast<uint64_t>(s));
    Tensor x = randn({world()->size() * 3, 1, 8, 8}, {}, &gen).narrow(0, begin, count).contiguous();
    return d ? d->forward(x) : m.forward(x);
  };
  auto labels = [](int s, int64_t rows) {
    Generator gen(800 + static_cast<uint64_t>(s));
    return randint(0, 10, {rows}, kInt64, &gen);
  };
  train_both(*ref, *ddp, B, 4, forward, labels);
  EXPECT_LE(max_abs_diff(*ref, *ddp->module()), 1e-6f) << "world size " << pg->size();
  EXPECT_GT(max_abs_diff(*ref, *make_cnn(13)), 1e-3f);
  // Running statistics are the global batch's too.
  auto rb = ref->named_buffers(), db = ddp->module()->named_buffers();
  ASSERT_EQ(rb.size(), db.size());
  for (size_t i = 0; i < rb.size(); ++i)
    EXPECT_LE((rb[i].second.to(kFloat64) - db[i].second.to(kFloat64)).abs().max().item<double>(), 1e-6) << rb[i].first;
}

// Two runs with the same seed and world size end bitwise equal.
TEST(DistributedDataParallel, RunsAreBitwiseRepeatable) {
  const auto& pg = world();
  auto run = [&] {
    auto ddp = std::make_shared<DistributedDataParallel>(make_mlp(21), pg);
    optim::SGD opt(ddp->parameters(), {.lr = 0.3, .momentum = 0.9});
    for (int s = 0; s < 4; ++s) {
      Generator gen(50 + static_cast<uint64_t>(s) * 7 + static_cast<uint64_t>(pg->rank()));
      Tensor x = randn({5, 12}, {}, &gen);
      Tensor y = randint(0, 5, {5}, kInt64, &gen);
      opt.zero_grad();
      nn::functional::cross_entropy(ddp->forward(x), y).backward();
      opt.step();
    }
    return ddp->module();
  };
  auto a = run(), b = run();
  EXPECT_TRUE(bitwise_equal(*a, *b));
}

// Buckets: reverse parameter order, the first capped at first_bucket_cap_mb.
TEST(DistributedDataParallel, BucketsFollowReverseOrderAndCaps) {
  const auto& pg = world();
  auto model = make_mlp(3);  // layers.0 (12x32), layers.2 (32x16), layers.4 (16x5)
  nn::DistributedDataParallelOptions o;
  o.first_bucket_cap_mb = 340.0 / (1024 * 1024);   // 85 floats: layers.4.bias (5) + layers.4.weight (80)
  o.bucket_cap_mb = 2100.0 / (1024 * 1024);        // 525 floats: closes after layers.2 (528)
  DistributedDataParallel ddp(model, pg, o);
  using V = std::vector<std::string>;
  std::vector<V> expected = {V{"layers.4.bias", "layers.4.weight"},
                             V{"layers.2.bias", "layers.2.weight"},
                             V{"layers.0.bias", "layers.0.weight"}};
  EXPECT_EQ(ddp.bucket_parameter_names(), expected);
  DistributedDataParallel one(make_mlp(3), pg);  // defaults: everything fits in the first 1 MiB
  ASSERT_EQ(one.bucket_parameter_names().size(), 1u);
  EXPECT_EQ(one.bucket_parameter_names()[0].front(), "layers.4.bias");
}

// no_sync: gradients of k micro-batches accumulate locally; the synchronized
// backward that follows averages their sum over ranks, which equals one
// process accumulating every rank's micro-batches.
TEST(DistributedDataParallel, NoSyncAccumulatesThenSynchronizes) {
  const auto& pg = world();
  const int64_t n = pg->size(), r = pg->rank();
  auto ref = make_mlp(5);
  auto ddp = std::make_shared<DistributedDataParallel>(make_mlp(5), pg);
  auto batch = [](int k, int64_t rank) {
    Generator gen(40 + static_cast<uint64_t>(k) * 13 + static_cast<uint64_t>(rank));
    Tensor x = randn({4, 12}, {}, &gen);
    return std::make_pair(x, randint(0, 5, {4}, kInt64, &gen));
  };
  for (int k = 0; k < 3; ++k)
    for (int64_t rank = 0; rank < n; ++rank) {
      auto [x, y] = batch(k, rank);
      (nn::functional::cross_entropy(ref->forward(x), y) / static_cast<double>(n)).backward();
    }
  {
    auto guard = ddp->no_sync();
    for (int k = 0; k < 2; ++k) {
      auto [x, y] = batch(k, r);
      nn::functional::cross_entropy(ddp->forward(x), y).backward();
    }
  }
  auto [x, y] = batch(2, r);
  nn::functional::cross_entropy(ddp->forward(x), y).backward();
  auto pr = ref->named_parameters(), pd = ddp->module()->named_parameters();
  for (size_t i = 0; i < pr.size(); ++i)
    EXPECT_LE((pr[i].second.grad() - pd[i].second.grad()).abs().max().item<float>(), 1e-6f) << pr[i].first;
}

// A parameter without a gradient is named on every rank (no rank hangs);
// find_unused_parameters allows it.
class TwoHeads : public nn::Module {
 public:
  TwoHeads() : Module("TwoHeads") {
    manual_seed(9);
    a = register_module("a", std::make_shared<nn::Linear>(4, 3));
    b = register_module("b", std::make_shared<nn::Linear>(4, 3));
  }
  Tensor forward(const Tensor& x) override { return use_b ? a->forward(x) + b->forward(x) : a->forward(x); }
  std::shared_ptr<nn::Linear> a, b;
  bool use_b = true;
};

TEST(DistributedDataParallel, UnusedParameterIsNamedOnEveryRank) {
  const auto& pg = world();
  auto model = std::make_shared<TwoHeads>();
  DistributedDataParallel ddp(model, pg);
  // Rank 0 skips head b; the other ranks use it.
  model->use_b = pg->rank() != 0;
  Tensor x = ones({2, 4});
  testing::expect_error([&] { ddp.forward(x).sum().backward(); },
                        {"received no gradient", "b.weight (used on", "find_unused_parameters"});
  // The group is still in step: a normal iteration works afterwards.
  model->use_b = true;
  ddp.zero_grad();
  ddp.forward(x).sum().backward();
  EXPECT_TRUE(model->b->weight.grad().defined());
}

TEST(DistributedDataParallel, FindUnusedParametersAveragesWithZeros) {
  const auto& pg = world();
  const int n = pg->size();
  auto model = std::make_shared<TwoHeads>();
  nn::DistributedDataParallelOptions o;
  o.find_unused_parameters = true;
  DistributedDataParallel ddp(model, pg, o);
  model->use_b = pg->rank() != 0;
  Tensor x = ones({2, 4});
  ddp.forward(x).sum().backward();
  // d(sum)/d(b.bias) = 2 (batch of 2) on the ranks that use b, 0 on rank 0.
  float expected = 2.0f * static_cast<float>(n - 1) / static_cast<float>(n);
  if (n == 1) {
    EXPECT_FALSE(model->b->bias.grad().defined()) << "no rank used it: grad stays undefined";
  } else {
    testing::expect_values(model->b->bias.grad(), {3}, {expected, expected, expected}, 1e-6, 0);
  }
  testing::expect_values(model->a->bias.grad(), {3}, {2, 2, 2}, 1e-6, 0);
}

TEST(DistributedDataParallel, OverlapStatsAreRecorded) {
  const auto& pg = world();
  auto ddp = std::make_shared<DistributedDataParallel>(make_mlp(1), pg);
  ddp->forward(ones({3, 12})).sum().backward();
  const auto& st = ddp->last_stats();
  EXPECT_EQ(st.buckets, 1);
  EXPECT_GE(st.exposed_s, 0.0);
  EXPECT_GE(st.hidden_fraction(), 0.0);
  EXPECT_LE(st.hidden_fraction(), 1.0);
}

}  // namespace
}  // namespace ember

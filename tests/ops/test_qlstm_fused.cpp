// The fused dynamic int8 LSTM layer (Note [fused dynamic int8 LSTM],
// kernels/cpu/qlstm_dynamic.cpp) against the op-by-op loop it replaces:
// rnn_layer_with with linear_dynamic as both products, the loop the int8
// LSTM ran before and GRU still runs. The two must agree bitwise, for every
// thread count, with and without lengths, in both directions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/ember.h"
#include "ember/quant/qrnn.h"
#include "kernels/qlstm.h"

namespace ember {
namespace {

struct Layer {
  quant::PackedLinear ih, hh;
};

Layer make_layer(int64_t in, int64_t hidden, bool bias, bool reduce_range) {
  manual_seed(11);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  Tensor w_ih = rand({4 * hidden, in}) * (2 * bound) - bound, w_hh = rand({4 * hidden, hidden}) * (2 * bound) - bound;
  Tensor b_ih = bias ? rand({4 * hidden}) * 0.2 - 0.1 : Tensor(), b_hh = bias ? rand({4 * hidden}) * 0.2 - 0.1 : Tensor();
  Layer l{quant::PackedLinear::pack(w_ih, b_ih), quant::PackedLinear::pack(w_hh, b_hh)};
  l.ih.reduce_range = l.hh.reduce_range = reduce_range;
  return l;
}

RnnLayerResult op_by_op(const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0, const Layer& l,
                        bool reverse) {
  const RnnProducts products{[&](const Tensor& a) { return quant::linear_dynamic(a, l.ih); },
                             [&](const Tensor& a) { return quant::linear_dynamic(a, l.hh); }};
  return rnn_layer_with(RnnCell::lstm, x, lengths, h0, c0, l.hh.in_features(), products, reverse);
}

void expect_bitwise(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  EXPECT_TRUE(equal(got, want)) << what << ": largest difference "
                                << (got - want).abs().max().item<double>();
}

enum class Layout { time_major, batch_first, strided };

struct Case {
  int64_t steps, batch, in, hidden;
  bool lengths, reverse, bias, reduce_range;
  Layout layout = Layout::time_major;
};

// x [steps, batch, in] as the kernel may meet it: contiguous, transposed from
// batch_first (nn::LSTM's view), or a slice whose rows are apart.
Tensor input(const Case& k) {
  switch (k.layout) {
    case Layout::time_major: return randn({k.steps, k.batch, k.in}) * 2.0;
    case Layout::batch_first: return (randn({k.batch, k.steps, k.in}) * 2.0).transpose(0, 1);
    case Layout::strided: return (randn({k.steps, k.batch, k.in + 3}) * 2.0).narrow(2, 1, k.in);
  }
  return {};
}

void check_case(const Case& k) {
  const std::string name =
      fmt::format("steps {} batch {} in {} hidden {} lengths {} reverse {} bias {} reduce {} layout {}", k.steps,
                  k.batch, k.in, k.hidden, k.lengths, k.reverse, k.bias, k.reduce_range, static_cast<int>(k.layout));
  const Layer l = make_layer(k.in, k.hidden, k.bias, k.reduce_range);
  manual_seed(5);
  Tensor x = input(k);
  Tensor h0 = randn({k.batch, k.hidden}) * 0.5, c0 = randn({k.batch, k.hidden});
  Tensor lengths;
  if (k.lengths) {  // every length from 1 to steps, the full one included
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < k.batch; ++b) lens.push_back(1 + (b * 7) % k.steps);
    lens.back() = k.steps;
    lengths = tensor(lens);
  }
  const RnnLayerResult want = op_by_op(x, lengths, h0, c0, l, k.reverse);
  for (int threads : {1, 2, 3}) {
    const int saved = get_num_threads();
    set_num_threads(threads);
    const RnnLayerResult got = quant::rnn_layer_dynamic_int8(RnnCell::lstm, x, lengths, h0, c0, l.ih, l.hh, k.reverse);
    set_num_threads(saved);
    const std::string at = fmt::format("{}, {} threads", name, threads);
    expect_bitwise(got.output, want.output, "output, " + at);
    expect_bitwise(got.h, want.h, "h, " + at);
    expect_bitwise(got.c, want.c, "c, " + at);
  }
}

TEST(QLstmFused, EqualsTheOpByOpLoopBitwise) {
  check_case({5, 1, 3, 4, false, false, true, false});
  check_case({7, 3, 5, 20, true, false, true, false});    // hidden not a vector multiple, rows ending early
  check_case({7, 3, 5, 20, true, true, false, true});     // reverse, no bias, 7-bit activations
  check_case({12, 64, 32, 64, false, false, true, false});  // the benchmark's shape: the rows split over a team
  check_case({12, 64, 32, 64, true, true, true, false});
  check_case({9, 33, 6, 17, true, false, true, true});
  check_case({12, 64, 32, 64, true, false, true, false, Layout::batch_first});
  check_case({7, 3, 5, 20, false, true, true, false, Layout::batch_first});
  check_case({7, 13, 5, 20, true, false, true, false, Layout::strided});
  // Big enough to split on any machine (a region's cost is capped at 50 us),
  // so the team path runs even where regions are slow (under TSan).
  ASSERT_EQ(qlstm_layer_threads(3, 256, 16, 128, 2), 2);
  check_case({3, 256, 16, 128, true, true, true, false});
}

TEST(QLstmFused, SplitsTheBatchOnlyWhereItPays) {
  EXPECT_EQ(qlstm_layer_threads(50, 1, 32, 64, 2), 1) << "one row cannot be split";
  EXPECT_EQ(qlstm_layer_threads(50, 7, 32, 64, 2), 1) << "at least 4 rows a thread";
  EXPECT_EQ(qlstm_layer_threads(50, 64, 32, 64, 1), 1);
  // 1024 rows of a 256-unit LSTM: ~1.9 ms a step on one thread, against a
  // barrier of at most 17 us (parallel.h caps a region's cost at 50 us).
  EXPECT_EQ(qlstm_layer_threads(50, 1024, 256, 256, 2), 2);
  EXPECT_EQ(qlstm_layer_threads(50, 1024, 256, 256, 8), 8);
  // The benchmark's 64 rows of 64 units (~20 us a step) split where a region costs what it does on our VMs.
  if (parallel_region_cost_us() < 10.0) {
    EXPECT_EQ(qlstm_layer_threads(50, 64, 32, 64, 2), 2);
  }
  EXPECT_EQ(qlstm_layer_threads(50, 64, 256, 256, 32), 16) << "rows / 4";
}

// A NaN in the input stays in its own row's gates, as in the op-by-op loop:
// the activation range leaves it out, quantization maps it to 0.
TEST(QLstmFused, NanInputMatchesTheOpByOpLoop) {
  const Layer l = make_layer(4, 8, true, false);
  manual_seed(3);
  Tensor x = randn({6, 8, 4});
  x.data_ptr<float>()[(2 * 8 + 3) * 4 + 1] = std::numeric_limits<float>::quiet_NaN();
  Tensor h0 = zeros({8, 8}), c0 = zeros({8, 8});
  const RnnLayerResult want = op_by_op(x, Tensor(), h0, c0, l, false);
  const RnnLayerResult got = quant::rnn_layer_dynamic_int8(RnnCell::lstm, x, Tensor(), h0, c0, l.ih, l.hh, false);
  EXPECT_TRUE(equal(isnan(got.output), isnan(want.output)));
  EXPECT_TRUE(equal(nan_to_num(got.output, 7.0), nan_to_num(want.output, 7.0)));
}

TEST(QLstmFused, BadStateNamesTheOperand) {
  const Layer l = make_layer(4, 8, true, false);
  Tensor x = randn({6, 2, 4});
  try {
    quant::rnn_layer_dynamic_int8(RnnCell::lstm, x, Tensor(), zeros({2, 8}), zeros({3, 8}), l.ih, l.hh, false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c0"), std::string::npos) << e.what();
  }
  try {
    quant::rnn_layer_dynamic_int8(RnnCell::lstm, x, tensor(std::vector<int64_t>{3, 7}), zeros({2, 8}), zeros({2, 8}),
                                  l.ih, l.hh, false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lengths"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember

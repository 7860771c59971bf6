#include "ember/quant/qrnn.h"

#include "ember/core/error.h"

namespace ember::quant {

RnnLayerResult rnn_layer_dynamic_int8(RnnCell cell, const Tensor& x, const Tensor& lengths, const Tensor& h0,
                                      const Tensor& c0, const PackedLinear& ih, const PackedLinear& hh, bool reverse) {
  const int64_t gates = cell == RnnCell::lstm ? 4 : cell == RnnCell::gru ? 3 : 1;
  const int64_t hidden = hh.in_features();
  EMBER_CHECK(hh.out_features() == gates * hidden && ih.out_features() == gates * hidden,
              "rnn_layer_dynamic_int8: expected weights of {} rows ({} gates x {} hidden), got w_ih [{}, {}] and "
              "w_hh [{}, {}]",
              gates * hidden, gates, hidden, ih.out_features(), ih.in_features(), hh.out_features(), hh.in_features());
  EMBER_CHECK(x.defined() && x.dim() == 3 && x.size(2) == ih.in_features(),
              "rnn_layer_dynamic_int8: expected an input [seq, batch, {}], got {}-D", ih.in_features(), x.dim());
  const RnnProducts products{[&](const Tensor& a) { return linear_dynamic(a, ih); },
                             [&](const Tensor& a) { return linear_dynamic(a, hh); }};
  return rnn_layer_with(cell, x, lengths, h0, c0, hidden, products, reverse);
}

}  // namespace ember::quant

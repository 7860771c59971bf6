#include "ember/quant/qrnn.h"

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "kernels/qlstm.h"

namespace ember::quant {
namespace {

// The state's gradient would flow through the gates of the op-by-op loop
// (the products are int8 and carry none); the fused kernel keeps none.
bool state_wants_grad(const Tensor& h0, const Tensor& c0) {
  return GradMode::is_enabled() && (h0.requires_grad() || c0.requires_grad());
}

QLstmProjection projection(const PackedLinear& p) {
  return {p.weight.data_ptr<int8_t>(), p.col_sum.data_ptr<int32_t>(), p.scale.data_ptr<float>(),
          p.bias.defined() ? p.bias.data_ptr<float>() : nullptr, p.reduce_range, p.products.get()};
}

// Note [fused dynamic int8 LSTM] (kernels/cpu/qlstm_dynamic.cpp).
RnnLayerResult lstm_layer_fused(const Tensor& x, const Tensor& lengths, const Tensor& h0, const Tensor& c0,
                                const PackedLinear& ih, const PackedLinear& hh, bool reverse) {
  const int64_t steps = x.size(0), batch = x.size(1), hidden = hh.in_features();
  // The kernel reads x through its step and row strides (a batch_first
  // input arrives transposed); only the features need to be contiguous.
  Tensor xs = x.detach();
  if (xs.stride(2) != 1) xs = xs.contiguous();
  Tensor h = h0.detach().contiguous().clone(), c = c0.detach().contiguous().clone();
  Tensor out = empty({steps, batch, hidden}, kFloat32);
  Tensor lens = lengths.defined() ? lengths.contiguous() : Tensor();
  QLstmDynamicArgs a;
  a.x = xs.data_ptr<float>();
  a.x_step = xs.stride(0), a.x_row = xs.stride(1);
  a.steps = steps, a.batch = batch, a.input = x.size(2), a.hidden = hidden;
  a.ih = projection(ih), a.hh = projection(hh);
  a.lengths = lens.defined() ? lens.data_ptr<int64_t>() : nullptr;
  a.reverse = reverse;
  a.h = h.data_ptr<float>(), a.c = c.data_ptr<float>(), a.out = out.data_ptr<float>();
  qlstm_layer_dynamic_f32(a);
  return {out, h, c};
}

}  // namespace

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
  if (cell == RnnCell::lstm && x.dtype() == kFloat32 && x.device().is_cpu() && !state_wants_grad(h0, c0)) {
    check_rnn_layer_state(cell, x, lengths, h0, c0, hidden);
    return lstm_layer_fused(x, lengths, h0, c0, ih, hh, reverse);
  }
  const RnnProducts products{[&](const Tensor& a) { return linear_dynamic(a, ih); },
                             [&](const Tensor& a) { return linear_dynamic(a, hh); }};
  return rnn_layer_with(cell, x, lengths, h0, c0, hidden, products, reverse);
}

}  // namespace ember::quant

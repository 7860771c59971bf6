// A dynamic int8 LSTM layer's time loop in one kernel (Note [fused dynamic
// int8 LSTM] in kernels/cpu/qlstm_dynamic.cpp): per step, the step's input
// and the hidden state are quantized, multiplied by the int8 W_ih and W_hh and
// dequantized, and the gates run, with the numbers of quant::linear_dynamic
// (the input's range taken over the whole sequence) and vec::lstm_cell_f32.
#pragma once

#include <cstdint>

namespace ember {

class PackedQGemmPool;

// A packed int8 projection (quant::PackedLinear's parts): w [4 * hidden, in]
// with one scale per row and zero point 0.
struct QLstmProjection {
  const int8_t* w = nullptr;
  const int32_t* colsum = nullptr;  // [4 * hidden]: the row sums of w
  const float* scale = nullptr;     // [4 * hidden]
  const float* bias = nullptr;      // [4 * hidden] or null
  bool reduce_range = false;        // activations in [0, 127] (kernels/qgemm.h)
  PackedQGemmPool* products = nullptr;  // where the packed products are kept between calls, or null
};

struct QLstmDynamicArgs {
  // x[t, r, :] starts at x + t * x_step + r * x_row; its `input` features are contiguous.
  const float* x = nullptr;
  int64_t x_step = 0, x_row = 0;
  int64_t steps = 0, batch = 0, input = 0, hidden = 0;
  QLstmProjection ih, hh;            // ih: w [4 * hidden, input]; hh: w [4 * hidden, hidden]
  const int64_t* lengths = nullptr;  // [batch] in [1, steps], or null: row r runs the steps t < lengths[r]
  bool reverse = false;              // steps from last to first
  float* h = nullptr;                // [batch, hidden]: h0 in, the final state out
  float* c = nullptr;                // [batch, hidden]: c0 in, the final state out
  float* out = nullptr;              // [steps, batch, hidden]: h of every step, 0 where a row has ended
  bool reference = false;            // the int8 products through qgemm_u8s8s32_ref (the test oracle)
};

void qlstm_layer_dynamic_f32(const QLstmDynamicArgs& a);

// How many threads qlstm_layer_dynamic_f32 splits the batch over, out of `threads`.
int qlstm_layer_threads(int64_t steps, int64_t batch, int64_t input, int64_t hidden, int threads);

}  // namespace ember

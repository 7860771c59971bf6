// F.unfold (im2col) as strided windows of the padded input, and F.fold
// (col2im) as its adjoint: a scatter_add of every patch value into its
// output position. Both composites, so each differentiates into the other.
#include "ops/op_util.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/view.h"

namespace ember {
namespace {

struct Im2Col {
  int64_t k[2], d[2], p[2], s[2];
};

Im2Col params(const char* op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  Im2Col g{};
  auto fill = [op](int64_t* dst, IntArrayRef v, const char* name, int64_t min) {
    EMBER_CHECK(v.size() == 1 || v.size() == 2, "{}: {} must be an int or a tuple of two ints, got {}", op, name,
                shape_str(v));
    dst[0] = v[0];
    dst[1] = v[v.size() - 1];
    EMBER_CHECK(dst[0] >= min && dst[1] >= min, "{}: {} should be {}, but got {}", op, name,
                min == 0 ? "non-negative" : "greater than zero", shape_str(v));
  };
  fill(g.k, kernel_size, "kernel_size", 1);
  fill(g.d, dilation, "dilation", 1);
  fill(g.p, padding, "padding", 0);
  fill(g.s, stride, "stride", 1);
  return g;
}


// Number of sliding-block positions along one dim.
int64_t blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s) { return (size + 2 * p - d * (k - 1) - 1) / s + 1; }

// [N, C, H, W] -> [N, C * kh * kw, L]
Tensor im2col(const Tensor& x, const Im2Col& g) {
  int64_t n = x.size(0), c = x.size(1);
  Tensor p = pad(x, {g.p[1], g.p[1], g.p[0], g.p[0]}).contiguous();
  int64_t hp = p.size(2), wp = p.size(3);
  int64_t oh = blocks(hp, g.k[0], g.d[0], 0, g.s[0]), ow = blocks(wp, g.k[1], g.d[1], 0, g.s[1]);
  // One strided view [N, C, kH, kW, oH, oW] of the padded input (a single
  // as_strided of a contiguous tensor, so its backward applies).
  Tensor w = p.as_strided({n, c, g.k[0], g.k[1], oh, ow},
                          {c * hp * wp, hp * wp, g.d[0] * wp, g.d[1], g.s[0] * wp, g.s[1]});
  return w.reshape({n, c * g.k[0] * g.k[1], oh * ow});
}

}  // namespace

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const char* op = "unfold";
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4,
              "{}: Input Error: Only 3D or 4D input Tensors are supported (got {}D, shape {})", op, input.dim(),
              shape_str(input.sizes()));
  Im2Col g = params(op, kernel_size, dilation, padding, stride);
  Tensor x = input.dim() == 3 ? input.unsqueeze(0) : input;
  for (int i = 0; i < 2; ++i)
    EMBER_CHECK(blocks(x.size(2 + i), g.k[i], g.d[i], g.p[i], g.s[i]) > 0,
                "{}: Given input with spatial size {}, kernel_size={}, dilation={}, padding={}, calculated shape of "
                "the array of sliding blocks is non-positive",
                op, shape_str(input.sizes()), shape_str(kernel_size), shape_str(dilation), shape_str(padding));
  Tensor out = im2col(x, g);
  return input.dim() == 3 ? out.squeeze(0) : out;
}

Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
            IntArrayRef padding, IntArrayRef stride) {
  const char* op = "fold";
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3,
              "{}: Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {}D)", op,
              input.dim());
  EMBER_CHECK(output_size.size() == 1 || output_size.size() == 2, "{}: output_size must be an int or a pair, got {}",
              op, shape_str(output_size));
  Im2Col g = params(op, kernel_size, dilation, padding, stride);
  int64_t h = output_size[0], w = output_size[output_size.size() - 1];
  Tensor x = input.dim() == 2 ? input.unsqueeze(0) : input;
  int64_t n = x.size(0), ck = x.size(1), kk = g.k[0] * g.k[1];
  EMBER_CHECK(ck % kk == 0,
              "{}: Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
              "input.size(1)={} and kernel_size={}",
              op, ck, shape_str(kernel_size));
  int64_t bh = blocks(h, g.k[0], g.d[0], g.p[0], g.s[0]), bw = blocks(w, g.k[1], g.d[1], g.p[1], g.s[1]);
  EMBER_CHECK(bh > 0 && bw > 0 && x.size(2) == bh * bw,
              "{}: Given output_size={}, kernel_size={}, dilation={}, padding={}, stride={}, expected size of "
              "input's dimension 2 to match the calculated number of sliding blocks {} * {} = {}, but got "
              "input.size(2)={}",
              op, shape_str(output_size), shape_str(kernel_size), shape_str(dilation), shape_str(padding),
              shape_str(stride), bh, bw, bh * bw, x.size(2));
  int64_t c = ck / kk, hp = h + 2 * g.p[0], wp = w + 2 * g.p[1];
  // Where each (kh, kw, l) value lands in the padded output: im2col of the
  // position numbers themselves.
  Tensor pos = arange(hp * wp, TensorOptions(kInt64)).view({1, 1, hp, wp});
  Im2Col unpadded = g;
  unpadded.p[0] = unpadded.p[1] = 0;
  Tensor index = im2col(pos, unpadded).reshape({1, 1, kk * bh * bw}).expand({n, c, kk * bh * bw});
  Tensor out = zeros({n, c, hp * wp}, TensorOptions(x.dtype()));
  out = scatter_add(out, 2, index, x.reshape({n, c, kk * bh * bw}));
  out = out.view({n, c, hp, wp}).narrow(2, g.p[0], h).narrow(3, g.p[1], w);
  return input.dim() == 2 ? out.squeeze(0) : out;
}

}  // namespace ember

// The reference convolution: plain loops straight from Note [conv geometry].
// Production path for float64 and the integer dtypes; the oracle the oneDNN
// path is tested against.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/nn.h"

namespace ember {
namespace {

// Integers accumulate in uint64_t: its wrap-around is the two's-complement
// sum modulo 2^64, so the result cast to T is PyTorch's wrapping integer
// convolution without signed-overflow UB.
template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t,
                                 std::conditional_t<std::is_same_v<T, double>, double, float>>;

template <typename Acc, typename T>
inline Acc to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<Acc>(static_cast<int64_t>(v));
  else return static_cast<Acc>(v);
}

// Output positions o with o*s - p + k*d inside [0, size): [lo, hi).
inline void valid_range(int64_t k, int64_t s, int64_t p, int64_t d, int64_t size, int64_t out, int64_t& lo,
                        int64_t& hi) {
  int64_t off = k * d - p;  // input index = o*s + off
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = size - off <= 0 ? 0 : std::min(out, (size - off - 1) / s + 1);
  if (hi < lo) hi = lo;
}

template <typename T>
void conv_fwd(const ConvParams& p, const T* in, const T* w, const T* bias, T* out) {
  using Acc = acc_t<T>;
  const int64_t cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups, plane = p.oh * p.ow;
  const int64_t work = std::max<int64_t>(1, plane * cin_g * p.kh * p.kw);
  parallel_for(0, p.n * p.c_out, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(plane);
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t n = nc / p.c_out, co = nc % p.c_out, g = co / cout_g;
      std::fill(acc.begin(), acc.end(), bias ? to_acc<Acc>(bias[co]) : Acc(0));
      for (int64_t ci = 0; ci < cin_g; ++ci) {
        const T* x = in + (n * p.c_in + g * cin_g + ci) * p.ih * p.iw;
        for (int64_t kh = 0; kh < p.kh; ++kh) {
          int64_t oh0, oh1;
          valid_range(kh, p.sh, p.pt, p.dh, p.ih, p.oh, oh0, oh1);
          for (int64_t kw = 0; kw < p.kw; ++kw) {
            int64_t ow0, ow1;
            valid_range(kw, p.sw, p.pl, p.dw, p.iw, p.ow, ow0, ow1);
            const Acc wv = to_acc<Acc>(w[((co * cin_g + ci) * p.kh + kh) * p.kw + kw]);
            for (int64_t oh = oh0; oh < oh1; ++oh) {
              const T* row = x + (oh * p.sh - p.pt + kh * p.dh) * p.iw + kw * p.dw - p.pl;
              Acc* a = acc.data() + oh * p.ow;
              for (int64_t ow = ow0; ow < ow1; ++ow) a[ow] += wv * to_acc<Acc>(row[ow * p.sw]);
            }
          }
        }
      }
      T* o = out + nc * plane;
      for (int64_t i = 0; i < plane; ++i) o[i] = static_cast<T>(acc[i]);
    }
  });
}

template <typename T>
void conv_bwd_input(const ConvParams& p, const T* gout, const T* w, T* gin) {
  using Acc = acc_t<T>;
  const int64_t cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups, plane = p.ih * p.iw;
  const int64_t work = std::max<int64_t>(1, p.oh * p.ow * cout_g * p.kh * p.kw);
  parallel_for(0, p.n * p.c_in, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(plane);
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t n = nc / p.c_in, c = nc % p.c_in, g = c / cin_g, ci = c % cin_g;
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t j = 0; j < cout_g; ++j) {
        const int64_t co = g * cout_g + j;
        const T* go = gout + (n * p.c_out + co) * p.oh * p.ow;
        for (int64_t kh = 0; kh < p.kh; ++kh) {
          int64_t oh0, oh1;
          valid_range(kh, p.sh, p.pt, p.dh, p.ih, p.oh, oh0, oh1);
          for (int64_t kw = 0; kw < p.kw; ++kw) {
            int64_t ow0, ow1;
            valid_range(kw, p.sw, p.pl, p.dw, p.iw, p.ow, ow0, ow1);
            const Acc wv = to_acc<Acc>(w[((co * cin_g + ci) * p.kh + kh) * p.kw + kw]);
            for (int64_t oh = oh0; oh < oh1; ++oh) {
              Acc* row = acc.data() + (oh * p.sh - p.pt + kh * p.dh) * p.iw + kw * p.dw - p.pl;
              const T* g_row = go + oh * p.ow;
              for (int64_t ow = ow0; ow < ow1; ++ow) row[ow * p.sw] += wv * to_acc<Acc>(g_row[ow]);
            }
          }
        }
      }
      T* o = gin + nc * plane;
      for (int64_t i = 0; i < plane; ++i) o[i] = static_cast<T>(acc[i]);
    }
  });
}

template <typename T>
void conv_bwd_weight(const ConvParams& p, const T* in, const T* gout, T* gw, T* gb) {
  using Acc = acc_t<T>;
  const int64_t cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups, ksize = p.kh * p.kw;
  const int64_t work = std::max<int64_t>(1, p.n * p.oh * p.ow * ksize);
  // One task per (co, ci) filter slice: no two tasks write the same element.
  parallel_for(0, p.c_out * cin_g, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t co = t / cin_g, ci = t % cin_g, g = co / cout_g;
      for (int64_t kh = 0; kh < p.kh; ++kh) {
        int64_t oh0, oh1;
        valid_range(kh, p.sh, p.pt, p.dh, p.ih, p.oh, oh0, oh1);
        for (int64_t kw = 0; kw < p.kw; ++kw) {
          int64_t ow0, ow1;
          valid_range(kw, p.sw, p.pl, p.dw, p.iw, p.ow, ow0, ow1);
          Acc acc = 0;
          for (int64_t n = 0; n < p.n; ++n) {
            const T* x = in + (n * p.c_in + g * cin_g + ci) * p.ih * p.iw;
            const T* go = gout + (n * p.c_out + co) * p.oh * p.ow;
            for (int64_t oh = oh0; oh < oh1; ++oh) {
              const T* row = x + (oh * p.sh - p.pt + kh * p.dh) * p.iw + kw * p.dw - p.pl;
              const T* g_row = go + oh * p.ow;
              for (int64_t ow = ow0; ow < ow1; ++ow)
                acc += to_acc<Acc>(row[ow * p.sw]) * to_acc<Acc>(g_row[ow]);
            }
          }
          gw[(t * p.kh + kh) * p.kw + kw] = static_cast<T>(acc);
        }
      }
      // The bias gradient rides on the first filter slice of each channel.
      if (gb && ci == 0) {
        Acc acc = 0;
        for (int64_t n = 0; n < p.n; ++n) {
          const T* go = gout + (n * p.c_out + co) * p.oh * p.ow;
          for (int64_t i = 0; i < p.oh * p.ow; ++i) acc += to_acc<Acc>(go[i]);
        }
        gb[co] = static_cast<T>(acc);
      }
    }
  });
}

template <typename F>
void dispatch_conv(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float32: return f(TypeTag<float>{});
    case ScalarType::Float64: return f(TypeTag<double>{});
    case ScalarType::BFloat16: return f(TypeTag<BFloat16>{});
    case ScalarType::Float16: return f(TypeTag<Half>{});
    case ScalarType::UInt8: return f(TypeTag<uint8_t>{});
    case ScalarType::Int8: return f(TypeTag<int8_t>{});
    case ScalarType::Int16: return f(TypeTag<int16_t>{});
    case ScalarType::Int32: return f(TypeTag<int32_t>{});
    case ScalarType::Int64: return f(TypeTag<int64_t>{});
    default: throw_unsupported_dtype("conv2d", t, "a floating-point or integer dtype");
  }
}

}  // namespace

void conv2d_ref(const ConvParams& p, const void* in, const void* w, const void* bias, void* out) {
  dispatch_conv(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    conv_fwd<T>(p, static_cast<const T*>(in), static_cast<const T*>(w), static_cast<const T*>(bias),
                static_cast<T*>(out));
  });
}

void conv2d_backward_input_ref(const ConvParams& p, const void* grad_out, const void* w, void* grad_in) {
  dispatch_conv(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    conv_bwd_input<T>(p, static_cast<const T*>(grad_out), static_cast<const T*>(w), static_cast<T*>(grad_in));
  });
}

void conv2d_backward_weight_ref(const ConvParams& p, const void* in, const void* grad_out, void* grad_w,
                                void* grad_bias) {
  dispatch_conv(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    conv_bwd_weight<T>(p, static_cast<const T*>(in), static_cast<const T*>(grad_out), static_cast<T*>(grad_w),
                       static_cast<T*>(grad_bias));
  });
}

}  // namespace ember

// The pooling loops (Note [pool geometry]), one NCHW plane per task. They
// are the production kernels for every pooling op but float32 avg backward
// (Note [pooling on oneDNN] in pool_dnnl.cpp) and float32 max pooling over
// non-overlapping windows (pool_vec.cpp), and those two's oracle.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/core/parallel.h"
#include "kernels/dispatch.h"
#include "kernels/nn.h"

namespace ember {
namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename F>
void dispatch_pool(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Float32: return f(TypeTag<float>{});
    case ScalarType::Float64: return f(TypeTag<double>{});
    case ScalarType::BFloat16: return f(TypeTag<BFloat16>{});
    case ScalarType::Float16: return f(TypeTag<Half>{});
    default: throw_unsupported_dtype(op, t, "a floating-point dtype");
  }
}

// Runs f(plane) over the n * c planes in parallel.
template <typename F>
void for_planes(const PoolParams& p, int64_t work_per_plane, F&& f) {
  parallel_for(0, p.n * p.c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_plane)),
               [&](int64_t b, int64_t e) {
                 for (int64_t i = b; i < e; ++i) f(i);
               });
}

template <typename T>
void max_pool(const PoolParams& p, const T* in, T* out, int64_t* indices) {
  // Geometry in locals: stores through `indices` (int64) could alias p's fields.
  const int64_t ih = p.ih, iw = p.iw, oh_n = p.oh, ow_n = p.ow, ip = ih * iw, op = oh_n * ow_n;
  const int64_t kh = p.kh, kw = p.kw, sh = p.sh, sw = p.sw, dh = p.dh, dw = p.dw, pt = p.pt, pl = p.pl;
  for_planes(p, op * kh * kw, [=](int64_t plane) {
    const T* x = in + plane * ip;
    T* o = out + plane * op;
    int64_t* idx = indices ? indices + plane * op : nullptr;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      int64_t h0 = oh * sh - pt, h1 = std::min(h0 + (kh - 1) * dh + 1, ih);
      while (h0 < 0) h0 += dh;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        int64_t w0 = ow * sw - pl, w1 = std::min(w0 + (kw - 1) * dw + 1, iw);
        while (w0 < 0) w0 += dw;
        // PyTorch's rule: the first maximum wins, and NaN beats everything.
        int64_t best = h0 * iw + w0;
        acc_t<T> v = -std::numeric_limits<acc_t<T>>::infinity();
        for (int64_t h = h0; h < h1; h += dh)
          for (int64_t w = w0; w < w1; w += dw) {
            acc_t<T> x_hw = static_cast<acc_t<T>>(x[h * iw + w]);
            if (x_hw > v || x_hw != x_hw) {
              v = x_hw;
              best = h * iw + w;
            }
          }
        o[oh * ow_n + ow] = static_cast<T>(v);
        if (idx) idx[oh * ow_n + ow] = best;
      }
    }
  });
}

template <typename T>
void max_pool_backward(const PoolParams& p, const T* gout, const int64_t* indices, T* gin) {
  const int64_t ip = p.ih * p.iw, op = p.oh * p.ow;
  for_planes(p, op + ip, [&](int64_t plane) {
    T* g = gin + plane * ip;
    std::fill_n(g, ip, T(0));
    const T* go = gout + plane * op;
    const int64_t* idx = indices + plane * op;
    for (int64_t o = 0; o < op; ++o) g[idx[o]] = static_cast<T>(static_cast<acc_t<T>>(g[idx[o]]) + static_cast<acc_t<T>>(go[o]));
  });
}

// The window of output (oh, ow) clipped to the input, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

inline AvgWindow avg_window(const PoolParams& p, int64_t oh, int64_t ow) {
  int64_t h0 = oh * p.sh - p.pt, w0 = ow * p.sw - p.pl;
  int64_t h1 = std::min(h0 + p.kh, p.ih + p.pt), w1 = std::min(w0 + p.kw, p.iw + p.pl);
  int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, p.ih);
  w1 = std::min(w1, p.iw);
  return {h0, h1, w0, w1, p.count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

template <typename T>
void avg_pool(const PoolParams& p, const T* in, T* out) {
  const int64_t ip = p.ih * p.iw, op = p.oh * p.ow;
  for_planes(p, op * p.kh * p.kw, [&](int64_t plane) {
    const T* x = in + plane * ip;
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        AvgWindow win = avg_window(p, oh, ow);
        acc_t<T> s = 0;
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w) s += static_cast<acc_t<T>>(x[h * p.iw + w]);
        out[plane * op + oh * p.ow + ow] = win.h0 >= win.h1 || win.w0 >= win.w1 ? T(0) : static_cast<T>(s / win.divisor);
      }
  });
}

template <typename T>
void avg_pool_backward(const PoolParams& p, const T* gout, T* gin) {
  const int64_t ip = p.ih * p.iw, op = p.oh * p.ow;
  for_planes(p, op * p.kh * p.kw + ip, [&](int64_t plane) {
    T* g = gin + plane * ip;
    std::fill_n(g, ip, T(0));
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        AvgWindow win = avg_window(p, oh, ow);
        if (win.h0 >= win.h1 || win.w0 >= win.w1) continue;
        acc_t<T> v = static_cast<acc_t<T>>(gout[plane * op + oh * p.ow + ow]) / win.divisor;
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w)
            g[h * p.iw + w] = static_cast<T>(static_cast<acc_t<T>>(g[h * p.iw + w]) + v);
      }
  });
}

// Adaptive windows: [floor(i * in / out), ceil((i + 1) * in / out)).
inline int64_t adaptive_start(int64_t i, int64_t out, int64_t in) { return (i * in) / out; }
inline int64_t adaptive_end(int64_t i, int64_t out, int64_t in) { return ((i + 1) * in + out - 1) / out; }

template <typename T>
void adaptive_avg_pool(const PoolParams& p, const T* in, T* out) {
  const int64_t ip = p.ih * p.iw, op = p.oh * p.ow;
  for_planes(p, ip + op, [&](int64_t plane) {
    const T* x = in + plane * ip;
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      int64_t h0 = adaptive_start(oh, p.oh, p.ih), h1 = adaptive_end(oh, p.oh, p.ih);
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        int64_t w0 = adaptive_start(ow, p.ow, p.iw), w1 = adaptive_end(ow, p.ow, p.iw);
        acc_t<T> s = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) s += static_cast<acc_t<T>>(x[h * p.iw + w]);
        out[plane * op + oh * p.ow + ow] = static_cast<T>(s / ((h1 - h0) * (w1 - w0)));
      }
    }
  });
}

template <typename T>
void adaptive_avg_pool_backward(const PoolParams& p, const T* gout, T* gin) {
  const int64_t ip = p.ih * p.iw, op = p.oh * p.ow;
  for_planes(p, ip + op, [&](int64_t plane) {
    T* g = gin + plane * ip;
    std::fill_n(g, ip, T(0));
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      int64_t h0 = adaptive_start(oh, p.oh, p.ih), h1 = adaptive_end(oh, p.oh, p.ih);
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        int64_t w0 = adaptive_start(ow, p.ow, p.iw), w1 = adaptive_end(ow, p.ow, p.iw);
        acc_t<T> v = static_cast<acc_t<T>>(gout[plane * op + oh * p.ow + ow]) / ((h1 - h0) * (w1 - w0));
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w)
            g[h * p.iw + w] = static_cast<T>(static_cast<acc_t<T>>(g[h * p.iw + w]) + v);
      }
    }
  });
}

void adaptive_avg_pool2d_cpu(const PoolParams& p, const void* in, void* out) {
  dispatch_pool(p.dtype, "adaptive_avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_avg_pool<T>(p, static_cast<const T*>(in), static_cast<T*>(out));
  });
}

void adaptive_avg_pool2d_backward_cpu(const PoolParams& p, const void* grad_out, void* grad_in) {
  dispatch_pool(p.dtype, "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_avg_pool_backward<T>(p, static_cast<const T*>(grad_out), static_cast<T*>(grad_in));
  });
}

}  // namespace

void max_pool2d_ref(const PoolParams& p, const void* in, void* out, int64_t* indices) {
  dispatch_pool(p.dtype, "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool<T>(p, static_cast<const T*>(in), static_cast<T*>(out), indices);
  });
}

void max_pool2d_backward_ref(const PoolParams& p, const void* grad_out, const int64_t* indices, void* grad_in) {
  dispatch_pool(p.dtype, "max_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_backward<T>(p, static_cast<const T*>(grad_out), indices, static_cast<T*>(grad_in));
  });
}

void avg_pool2d_ref(const PoolParams& p, const void* in, void* out) {
  dispatch_pool(p.dtype, "avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool<T>(p, static_cast<const T*>(in), static_cast<T*>(out));
  });
}

void avg_pool2d_backward_ref(const PoolParams& p, const void* grad_out, void* grad_in) {
  dispatch_pool(p.dtype, "avg_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_backward<T>(p, static_cast<const T*>(grad_out), static_cast<T*>(grad_in));
  });
}

// max_pool2d, max_pool2d_with_indices and max_pool2d_backward: pool_vec.cpp.
EMBER_REGISTER_KERNEL(avg_pool2d, CPU, avg_pool2d_ref);
EMBER_REGISTER_KERNEL(adaptive_avg_pool2d, CPU, adaptive_avg_pool2d_cpu);
EMBER_REGISTER_KERNEL(adaptive_avg_pool2d_backward, CPU, adaptive_avg_pool2d_backward_cpu);

}  // namespace ember

// Kernels bound once to a geometry, their constant weights and a fused
// epilogue, for the inference runtime (Note [prepared kernels] in
// kernels/cpu/prepared.cpp). Not thread-safe: one per prepared graph.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/linalg.h"
#include "kernels/nn.h"

namespace ember {

// The activations a prepared kernel applies as a oneDNN post-op.
enum class FusedActivation { None, Relu, Silu, Gelu, GeluTanh };

// "relu", "silu", "gelu", "gelu_tanh" (jit::fuse_activations' names); nullopt otherwise.
std::optional<FusedActivation> fused_activation_from_name(const std::string& name);

// What runs after conv + bias, in this order:
//   y = post(act(conv(x, w) + b) + residual)
struct Epilogue {
  FusedActivation act = FusedActivation::None;
  bool residual = false;  // add a tensor shaped like the conv output (a oneDNN sum post-op)
  FusedActivation post = FusedActivation::None;
};

// A pooling fused after a conv (jit::fuse_pooling): its windows, over the conv output.
struct FusedPool {
  PoolParams params;
  bool max = true;  // else average
};

// The memory layout of a float32 [n, c, h, w] activation that a prepared
// conv left in the blocked format its oneDNN primitive chose (nChw16c, ...)
// for the next prepared conv to read as is (Note [layout propagation]).
// Images are contiguous and batch-outermost, so n images take n times one
// image's bytes and a chunk of them starts at a multiple of it. Immutable,
// shared between the producing and the reading kernel. Null: plain NCHW.
class BlockedLayout;
using LayoutRef = std::shared_ptr<const BlockedLayout>;

// The same layout (null is plain NCHW).
bool same_layout(const LayoutRef& a, const LayoutRef& b);
// "nChw16c", "nhwc", ...; "nchw" for null.
std::string layout_name(const LayoutRef& l);
// Bytes one image takes in l.
int64_t layout_image_bytes(const BlockedLayout& l);
// The [c, h, w] of an image in l.
std::array<int64_t, 3> layout_image_dims(const BlockedLayout& l);
// Copies n images from layout l at src to plain NCHW at dst (a reader that
// cannot take the blocked layout).
void reorder_to_plain(const BlockedLayout& l, int64_t n, const void* src, void* dst);

// How a prepared conv's activations are laid out (Note [layout propagation]).
struct ConvLayouts {
  LayoutRef src;       // the input's layout; null: NCHW
  LayoutRef residual;  // the residual's (with Epilogue::residual); null: NCHW
  // The output may stay in the layout the primitive writes, when n images
  // of it fit in dst_capacity bytes; else it is reordered to NCHW.
  bool blocked_dst = false;
  int64_t dst_capacity = 0;
};

// A float32 conv2d forward with its weights reordered once into the layout
// the oneDNN primitive prefers, its activation, residual add and pooling
// fused, intermediates kept in that (blocked) layout; NCHW in and out, or
// the blocked layouts `ConvLayouts` allows.
class PreparedConv {
 public:
  ~PreparedConv();
  // nullptr when oneDNN offers no JIT kernel for this geometry, epilogue or
  // pool (the caller keeps the generic kernels). weight [c_out, c_in/g, kh,
  // kw] and bias [c_out] (may be null) are copied. With `pool` the output
  // is the pooled one (p.n images, params.oh x params.ow) and the conv runs
  // `chunk` images at a time (Note [conv + pool in chunks]); else all at once.
  static std::unique_ptr<PreparedConv> make(const ConvParams& p, const void* weight, const void* bias,
                                            const Epilogue& e, const FusedPool* pool, int64_t chunk,
                                            const ConvLayouts& layouts = {});
  // src [n, c_in, ih, iw]; residual (with e.residual) and dst as the output;
  // each in the layout below.
  void run(const void* src, const void* residual, void* dst);
  // The oneDNN implementation of the convolution ("brg:avx512_core", ...).
  std::string impl() const;
  // The layouts it was made for (null: NCHW), and the one its output is in.
  const LayoutRef& src_layout() const;
  const LayoutRef& residual_layout() const;
  const LayoutRef& dst_layout() const;

 private:
  struct Impl;
  explicit PreparedConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// out [m, n] = a [m, k] @ b [k, n] + bias, then the activation: float32, a
// and out row-major, b any strides (copied once into the primitive's layout).
class PreparedMatmul {
 public:
  ~PreparedMatmul();
  // nullptr when oneDNN offers no JIT kernel here.
  static std::unique_ptr<PreparedMatmul> make(int64_t m, int64_t n, int64_t k, const MatrixRef& b, const void* bias,
                                              FusedActivation act);
  void run(const void* a, void* out);

 private:
  struct Impl;
  explicit PreparedMatmul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember

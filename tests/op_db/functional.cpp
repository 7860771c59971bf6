// op_db entries: torch.nn.functional (pooling, convolution, normalization,
// resampling, attention, ...) and the losses. Reference cases:
// tests/data/op_db/gen_functional.py.
#include "op_db.h"

#include "ember/ops/attention.h"
#include "ember/ops/distance.h"
#include "ember/ops/dropout.h"
#include "ember/ops/normalization.h"
#include "ember/ops/resample.h"

namespace ember::op_db {
namespace {

OpInfo functional(std::string op, std::string variant, OpFn fn) {
  OpInfo info;
  info.op = std::move(op);
  info.variant = std::move(variant);
  info.group = "functional";
  info.fn = std::move(fn);
  return info;
}

const std::vector<ScalarType> f32 = {kFloat32};

// The constants gen_functional.py builds inside its lambdas.
Tensor w4() { return tensor<double>({0.5, 1.0, 2.0, 1.5}, {4}, TensorOptions(kFloat64)); }
Tensor stats_mean() { return linspace(-0.5, 0.5, 3, TensorOptions(kFloat64)); }
Tensor stats_var() { return linspace(0.5, 2, 3, TensorOptions(kFloat64)); }

namespace F = nn::functional;

std::vector<OpInfo> entries() {
  std::vector<OpInfo> ops;
  auto add = [&](std::string op, std::string variant, OpFn fn, Impl impl = Impl::composite,
                 std::vector<ScalarType> dtypes = {}) {
    ops.push_back(functional(std::move(op), std::move(variant), std::move(fn)));
    ops.back().impl = impl;
    ops.back().dtypes = std::move(dtypes);
    return &ops.back();
  };
  add("softmax", "dim1", one([](const Tensors& x) { return softmax(x[0], 1); }), Impl::kernel);
  add("mse_loss", "sum", one([](const Tensors& x) { return F::mse_loss(x[0], x[1], "sum"); }));

  // ---- interpolate ----
  auto interp = [](InterpolateOptions o) { return one([o](const Tensors& x) { return interpolate(x[0], o); }); };
  add("interpolate", "nearest_scale2", interp({.scale_factor = {2.0}}), Impl::composite, f32);
  add("interpolate", "nearest_size", interp({.size = {3, 4}}), Impl::composite, f32);
  add("interpolate", "nearest_1d", interp({.size = {8}}), Impl::composite, f32);
  add("interpolate", "nearest_3d", interp({.scale_factor = {1.5, 1, 0.5}}), Impl::composite, f32);
  add("interpolate", "nearest_exact", interp({.size = {8, 3}, .mode = "nearest-exact"}), Impl::composite, f32);
  add("interpolate", "bilinear", interp({.size = {7, 9}, .mode = "bilinear"}), Impl::composite, f32);
  add("interpolate", "bilinear_align", interp({.size = {7, 9}, .mode = "bilinear", .align_corners = true}),
      Impl::composite, f32);
  add("interpolate", "bilinear_scale", interp({.scale_factor = {1.5, 2.5}, .mode = "bilinear"}), Impl::composite,
      f32);
  add("interpolate", "bilinear_recompute",
      interp({.scale_factor = {1.5, 2.5}, .mode = "bilinear", .recompute_scale_factor = true}), Impl::composite, f32);
  add("interpolate", "bilinear_down", interp({.size = {3, 4}, .mode = "bilinear"}), Impl::composite, f32);
  add("interpolate", "linear", interp({.size = {10}, .mode = "linear"}), Impl::composite, f32);
  add("interpolate", "linear_align", interp({.size = {4}, .mode = "linear", .align_corners = true}), Impl::composite,
      f32);
  add("interpolate", "bicubic", interp({.size = {9, 4}, .mode = "bicubic"}), Impl::composite, f32);
  add("interpolate", "bicubic_align", interp({.size = {9, 4}, .mode = "bicubic", .align_corners = true}),
      Impl::composite, f32);
  add("interpolate", "trilinear", interp({.size = {5, 3, 6}, .mode = "trilinear"}), Impl::composite, f32);
  add("interpolate", "area", interp({.size = {3, 4}, .mode = "area"}), Impl::composite, f32);

  // ---- pooling ----
  add("adaptive_avg_pool1d", "out4", one([](const Tensors& x) { return adaptive_avg_pool1d(x[0], {4}); }),
      Impl::composite, f32);
  add("adaptive_avg_pool2d", "out3x4", one([](const Tensors& x) { return adaptive_avg_pool2d(x[0], {3, 4}); }),
      Impl::kernel, f32);
  add("adaptive_avg_pool3d", "out2x3x4", one([](const Tensors& x) { return adaptive_avg_pool3d(x[0], {2, 3, 4}); }),
      Impl::composite, f32);
  add("adaptive_max_pool1d", "indices", [](const Tensors& x) {
    auto [v, i] = adaptive_max_pool1d_with_indices(x[0], {4});
    return Tensors{v, i};
  }, Impl::composite, f32)->calls = {"adaptive_max_pool1d_with_indices"};
  add("adaptive_max_pool2d", "indices", [](const Tensors& x) {
    auto [v, i] = adaptive_max_pool2d_with_indices(x[0], {3, 4});
    return Tensors{v, i};
  }, Impl::composite, f32)->calls = {"adaptive_max_pool2d_with_indices"};
  add("adaptive_max_pool2d", "unbatched", one([](const Tensors& x) { return adaptive_max_pool2d(x[0], {2}); }),
      Impl::composite, f32);
  add("avg_pool1d", "pad", one([](const Tensors& x) { return avg_pool1d(x[0], {3}, {2}, {1}); }), Impl::composite,
      f32);
  add("avg_pool1d", "ceil_exclude_pad",
      one([](const Tensors& x) { return avg_pool1d(x[0], {4}, {3}, {2}, true, false); }), Impl::composite, f32);
  add("avg_pool2d", "pad", one([](const Tensors& x) { return avg_pool2d(x[0], {3, 2}, {2}, {1}); }), Impl::kernel,
      f32);
  add("avg_pool3d", "pad", one([](const Tensors& x) { return avg_pool3d(x[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}); }),
      Impl::composite, f32);
  add("avg_pool3d", "ceil_exclude_pad",
      one([](const Tensors& x) { return avg_pool3d(x[0], {3}, {2}, {1}, true, false); }), Impl::composite, f32);
  add("avg_pool3d", "divisor",
      one([](const Tensors& x) { return avg_pool3d(x[0], {2}, {}, {0}, false, true, 3); }), Impl::composite, f32);
  add("max_pool1d", "pad", one([](const Tensors& x) { return max_pool1d(x[0], {3}, {2}, {1}); }), Impl::kernel, f32);
  add("max_pool2d", "dilation", one([](const Tensors& x) { return max_pool2d(x[0], {3}, {2}, {1}, {2}); }),
      Impl::kernel, f32);
  add("max_pool3d", "pad", one([](const Tensors& x) { return max_pool3d(x[0], {3}, {2}, {1}); }), Impl::composite,
      f32);
  add("max_pool3d", "dilation_ceil",
      one([](const Tensors& x) { return max_pool3d(x[0], {2, 3, 2}, {2, 2, 1}, {0}, {2, 1, 2}, true); }),
      Impl::composite, f32);

  // ---- convolution ----
  add("conv1d", "groups", one([](const Tensors& x) { return conv1d(x[0], x[1], x[2], {2}, {1}, {1}, 2); }),
      Impl::kernel, f32);
  add("conv1d", "same", one([](const Tensors& x) { return conv1d(x[0], x[1], x[2], {1}, kSame, {2}); }),
      Impl::kernel, f32)->calls = {"conv1d_padding_mode"};
  add("conv1d", "valid", one([](const Tensors& x) { return conv1d(x[0], x[1], std::nullopt, {1}, kValid); }),
      Impl::kernel, f32);
  add("conv2d", "stride_pad", one([](const Tensors& x) { return conv2d(x[0], x[1], x[2], {2, 1}, {1, 0}); }),
      Impl::kernel, f32);
  add("conv2d", "same", one([](const Tensors& x) { return conv2d(x[0], x[1], std::nullopt, {1}, kSame); }),
      Impl::kernel, f32)->calls = {"conv2d_padding_mode"};
  add("conv3d", "groups",
      one([](const Tensors& x) { return conv3d(x[0], x[1], x[2], {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 2); }),
      Impl::composite, f32);
  add("conv3d", "same", one([](const Tensors& x) { return conv3d(x[0], x[1], std::nullopt, {1}, kSame); }),
      Impl::composite, f32)->calls = {"conv3d_padding_mode"};
  add("conv3d", "unbatched", one([](const Tensors& x) { return conv3d(x[0], x[1], std::nullopt, {2}); }),
      Impl::composite, f32);
  add("conv_transpose1d", "stride",
      one([](const Tensors& x) { return conv_transpose1d(x[0], x[1], x[2], {2}, {1}, {1}); }), Impl::composite, f32);
  add("conv_transpose1d", "groups_dilation",
      one([](const Tensors& x) { return conv_transpose1d(x[0], x[1], std::nullopt, {1}, {0}, {0}, 2, {2}); }),
      Impl::composite, f32);
  add("conv_transpose2d", "stride",
      one([](const Tensors& x) { return conv_transpose2d(x[0], x[1], x[2], {2}, {1}, {1}); }), Impl::kernel, f32);

  // ---- fold / unfold / shuffles / pad ----
  add("unfold", "params", one([](const Tensors& x) { return unfold(x[0], {2, 3}, {1, 2}, {1}, {2, 1}); }),
      Impl::composite, f32);
  add("fold", "params", one([](const Tensors& x) { return fold(x[0], {7, 8}, {2, 3}, {1, 2}, {1}, {2, 1}); }),
      Impl::composite, f32);
  add("fold", "overlap", one([](const Tensors& x) { return fold(x[0], {4}, {2}); }), Impl::composite, f32);
  add("pixel_shuffle", "r2", one([](const Tensors& x) { return pixel_shuffle(x[0], 2); }), Impl::composite, f32);
  add("pixel_unshuffle", "r2", one([](const Tensors& x) { return pixel_unshuffle(x[0], 2); }), Impl::composite, f32);
  add("pad", "constant", one([](const Tensors& x) { return pad(x[0], {1, 2, 0, 1}, "constant", 0.5); }),
      Impl::composite, f32);
  add("pad", "crop", one([](const Tensors& x) { return pad(x[0], {-1, 2, 1, -1}); }), Impl::composite, f32);
  add("pad", "reflect", one([](const Tensors& x) { return pad(x[0], {2, 1, 3, 1}, "reflect"); }), Impl::composite,
      f32);
  add("pad", "replicate", one([](const Tensors& x) { return pad(x[0], {2, 1, 3, 1}, "replicate"); }),
      Impl::composite, f32);
  add("pad", "circular", one([](const Tensors& x) { return pad(x[0], {2, 1, 3, 1}, "circular"); }), Impl::composite,
      f32);

  // ---- sampling grids ----
  add("grid_sample", "bilinear_zeros",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "bilinear", "zeros", false); }), Impl::composite, f32);
  add("grid_sample", "bilinear_border_align",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "bilinear", "border", true); }), Impl::composite, f32);
  add("grid_sample", "bilinear_reflection",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "bilinear", "reflection", false); }), Impl::composite,
      f32);
  add("grid_sample", "nearest",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "nearest", "zeros", false); }), Impl::composite, f32);
  add("grid_sample", "nearest_3d_zeros",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "nearest", "zeros", false); }), Impl::composite, f32);
  add("grid_sample", "nearest_3d_border_align",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "nearest", "border", true); }), Impl::composite, f32);
  add("grid_sample", "nearest_3d_reflection",
      one([](const Tensors& x) { return grid_sample(x[0], x[1], "nearest", "reflection", false); }), Impl::composite,
      f32);
  add("affine_grid", "2d", one([](const Tensors& x) { return affine_grid(x[0], {2, 3, 4, 5}, false); }),
      Impl::composite, f32);
  add("affine_grid", "2d_align", one([](const Tensors& x) { return affine_grid(x[0], {2, 3, 4, 5}, true); }),
      Impl::composite, f32);
  add("affine_grid", "3d", one([](const Tensors& x) { return affine_grid(x[0], {1, 1, 2, 3, 4}, false); }),
      Impl::composite, f32);

  // ---- normalization ----
  add("instance_norm", "affine",
      one([](const Tensors& x) { return instance_norm(x[0], Tensor(), Tensor(), x[1], x[2]); }), Impl::composite, f32);
  // The updated running stats are outputs without a graph (as in PyTorch), so
  // finite differences of them would disagree with their zero gradient.
  add("instance_norm", "running", [](const Tensors& x) {
    Tensor rm = zeros({3}, TensorOptions(x[0].dtype())), rv = ones({3}, TensorOptions(x[0].dtype()));
    Tensor y = instance_norm(x[0], rm, rv, Tensor(), Tensor(), true, 0.2);
    return Tensors{y, rm, rv};
  })->gradcheck = false;
  add("instance_norm", "eval", one([](const Tensors& x) {
    return instance_norm(x[0], stats_mean(), stats_var(), Tensor(), Tensor(), false);
  }));
  add("batch_norm", "train", [](const Tensors& x) {
    Tensor rm = zeros({3}, TensorOptions(x[0].dtype())), rv = ones({3}, TensorOptions(x[0].dtype()));
    Tensor y = batch_norm(x[0], rm, rv, x[1], x[2], true, 0.3);
    return Tensors{y, rm, rv};
  }, Impl::kernel)->gradcheck = false;  // running stats: see instance_norm.running
  add("batch_norm", "eval", one([](const Tensors& x) {
    return batch_norm(x[0], stats_mean(), stats_var(), x[1], x[2], false, 0.1, 1e-3);
  }), Impl::kernel);
  add("layer_norm", "affine", one([](const Tensors& x) { return layer_norm(x[0], {3, 4}, x[1], x[2]); }),
      Impl::kernel, f32);
  add("layer_norm", "plain", one([](const Tensors& x) { return layer_norm(x[0], {6}, Tensor(), Tensor(), 1e-3); }),
      Impl::kernel, f32);
  add("group_norm", "affine", one([](const Tensors& x) { return group_norm(x[0], 3, x[1], x[2]); }), Impl::composite,
      f32);
  add("rms_norm", "weight", one([](const Tensors& x) { return rms_norm(x[0], {4}, x[1]); }));
  add("rms_norm", "two_dims", one([](const Tensors& x) { return rms_norm(x[0], {3, 4}, Tensor(), 1e-5); }),
      Impl::composite, f32);
  add("local_response_norm", "4d", one([](const Tensors& x) { return local_response_norm(x[0], 3); }),
      Impl::composite, f32);
  add("local_response_norm", "3d", one([](const Tensors& x) { return local_response_norm(x[0], 2, 0.1, 0.5, 2.0); }),
      Impl::composite, f32);
  add("normalize", "p2", one([](const Tensors& x) { return normalize(x[0]); }), Impl::composite, f32);
  add("normalize", "p1_last", one([](const Tensors& x) { return normalize(x[0], 1.0, -1); }), Impl::composite, f32);

  // ---- distances ----
  add("cosine_similarity", "dim1", one([](const Tensors& x) { return cosine_similarity(x[0], x[1]); }),
      Impl::composite, f32);
  add("cosine_similarity", "broadcast", one([](const Tensors& x) { return cosine_similarity(x[0], x[1], -1); }),
      Impl::composite, f32);
  add("pairwise_distance", "p2", one([](const Tensors& x) { return pairwise_distance(x[0], x[1]); }),
      Impl::composite, f32);
  add("pairwise_distance", "p1_keepdim",
      one([](const Tensors& x) { return pairwise_distance(x[0], x[1], 1.0, 1e-6, true); }), Impl::composite, f32);
  add("pdist", "p2", one([](const Tensors& x) { return pdist(x[0]); }), Impl::composite, f32);
  add("pdist", "p3", one([](const Tensors& x) { return pdist(x[0], 3); }), Impl::composite, f32);
  add("cdist", "p2", one([](const Tensors& x) { return cdist(x[0], x[1]); }), Impl::composite, f32);
  add("cdist", "p1", one([](const Tensors& x) { return cdist(x[0], x[1], 1); }), Impl::composite, f32);

  // ---- attention ----
  auto sdpa = [](bool causal) {
    return one([causal](const Tensors& x) {
      return scaled_dot_product_attention(x[0], x[1], x[2], x.size() > 3 ? x[3] : Tensor(), 0.0, causal);
    });
  };
  add("scaled_dot_product_attention", "plain", sdpa(false), Impl::composite, f32);
  add("scaled_dot_product_attention", "float_mask", sdpa(false), Impl::composite, f32);
  add("scaled_dot_product_attention", "bool_mask", sdpa(false), Impl::composite, f32);
  add("scaled_dot_product_attention", "causal", sdpa(true), Impl::composite, f32);

  // ---- dropout (deterministic settings; the random draws: tests/ops/test_functional_nn.cpp) ----
  add("dropout", "eval", one([](const Tensors& x) { return dropout(x[0], 0.5, false); }), Impl::composite, f32);
  add("dropout1d", "p0", one([](const Tensors& x) { return dropout1d(x[0], 0.0); }), Impl::composite, f32);
  add("dropout2d", "eval", one([](const Tensors& x) { return dropout2d(x[0], 0.5, false); }), Impl::composite, f32);
  add("dropout3d", "eval", one([](const Tensors& x) { return dropout3d(x[0], 0.5, false); }), Impl::composite, f32);
  add("alpha_dropout", "eval", one([](const Tensors& x) { return alpha_dropout(x[0], 0.5); }), Impl::composite, f32);

  // ---- embeddings, linear maps ----
  add("embedding", "plain", one([](const Tensors& x) { return embedding(x[0], x[1]); }), Impl::composite, f32);
  // The padding_idx row gets no gradient by design (PyTorch's rule), which finite differences cannot know.
  add("embedding", "padding_idx", one([](const Tensors& x) { return embedding(x[0], x[1], 3); }), Impl::composite,
      f32)->gradcheck = false;
  auto bag = [](EmbeddingBagOptions o, bool weights = false) {
    return one([o, weights](const Tensors& x) {
      EmbeddingBagOptions opt = o;
      if (weights) opt.per_sample_weights = x[2];
      return embedding_bag(x[0], x[1], opt);
    });
  };
  auto ids = [](std::vector<int64_t> v) {
    return tensor<int64_t>(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64));
  };
  add("embedding_bag", "sum_offsets", bag({.offsets = ids({0, 3, 3, 6}), .mode = "sum"}), Impl::composite, f32);
  add("embedding_bag", "mean_2d", bag({}), Impl::composite, f32);
  add("embedding_bag", "max_offsets", bag({.offsets = ids({0, 2, 2, 7}), .mode = "max"}), Impl::composite, f32);
  add("embedding_bag", "per_sample_weights", bag({.offsets = ids({0, 5}), .mode = "sum"}, true), Impl::composite,
      f32);
  add("embedding_bag", "padding_idx_last_offset",
      bag({.offsets = ids({0, 3, 8}), .include_last_offset = true, .padding_idx = 4}), Impl::composite, f32);
  add("one_hot", "inferred", one([](const Tensors& x) { return one_hot(x[0]); }))->differentiable = false;
  add("one_hot", "classes", one([](const Tensors& x) { return one_hot(x[0], 6); }))->differentiable = false;
  add("linear", "bias", one([](const Tensors& x) { return linear(x[0], x[1], x[2]); }), Impl::kernel, f32);
  add("linear", "no_bias", one([](const Tensors& x) { return linear(x[0], x[1]); }), Impl::kernel, f32);
  add("bilinear", "bias", one([](const Tensors& x) { return bilinear(x[0], x[1], x[2], x[3]); }), Impl::composite,
      f32);
  add("bilinear", "batch_dims", one([](const Tensors& x) { return bilinear(x[0], x[1], x[2]); }), Impl::composite,
      f32);

  // ---- existing losses ----
  add("cross_entropy", "index", one([](const Tensors& x) { return F::cross_entropy(x[0], x[1]); }), Impl::composite,
      f32);
  add("cross_entropy", "weight_ignore_smooth", one([](const Tensors& x) {
    return F::cross_entropy(x[0], x[1], {.weight = w4(), .ignore_index = -100, .label_smoothing = 0.2});
  }));
  add("cross_entropy", "ignore_index",
      one([](const Tensors& x) { return F::cross_entropy(x[0], x[1], {.ignore_index = 3}); }), Impl::composite, f32);
  add("cross_entropy", "probs_none",
      one([](const Tensors& x) { return F::cross_entropy(x[0], x[1], {.reduction = "none"}); }), Impl::composite,
      f32);
  add("nll_loss", "weight", one([](const Tensors& x) { return F::nll_loss(x[0], x[1], {.weight = w4()}); }));
  add("nll_loss", "ignore_none", one([](const Tensors& x) {
    return F::nll_loss(x[0], x[1], {.ignore_index = 2, .reduction = "none"});
  }), Impl::composite, f32);
  add("binary_cross_entropy", "weight",
      one([](const Tensors& x) { return F::binary_cross_entropy(x[0], x[1], {.weight = w4().to(x[0].dtype())}); }));
  add("binary_cross_entropy_with_logits", "pos_weight", one([](const Tensors& x) {
    return F::binary_cross_entropy_with_logits(x[0], x[1], {.pos_weight = w4().to(x[0].dtype()), .reduction = "sum"});
  }));
  add("kl_div", "batchmean", one([](const Tensors& x) { return F::kl_div(x[0], x[1], {.reduction = "batchmean"}); }),
      Impl::composite, f32);
  add("kl_div", "log_target", one([](const Tensors& x) {
    return F::kl_div(x[0], x[1], {.reduction = "none", .log_target = true});
  }), Impl::composite, f32);
  add("huber_loss", "delta", one([](const Tensors& x) { return F::huber_loss(x[0], x[1], "mean", 0.7); }),
      Impl::composite, f32);
  add("smooth_l1_loss", "beta", one([](const Tensors& x) { return F::smooth_l1_loss(x[0], x[1], "none", 0.5); }),
      Impl::composite, f32);
  add("l1_loss", "mean", one([](const Tensors& x) { return F::l1_loss(x[0], x[1]); }), Impl::composite, f32);
  add("mse_loss", "none", one([](const Tensors& x) { return F::mse_loss(x[0], x[1], "none"); }), Impl::composite,
      f32);

  // ---- new losses ----
  add("cosine_embedding_loss", "margin",
      one([](const Tensors& x) { return F::cosine_embedding_loss(x[0], x[1], x[2], 0.1); }), Impl::composite, f32);
  add("cosine_embedding_loss", "unbatched_none",
      one([](const Tensors& x) { return F::cosine_embedding_loss(x[0], x[1], x[2], -0.5, "none"); }),
      Impl::composite, f32);
  add("hinge_embedding_loss", "margin",
      one([](const Tensors& x) { return F::hinge_embedding_loss(x[0], x[1], 0.5); }), Impl::composite, f32);
  add("margin_ranking_loss", "margin",
      one([](const Tensors& x) { return F::margin_ranking_loss(x[0], x[1], x[2], 0.2, "sum"); }), Impl::composite,
      f32);
  add("multi_margin_loss", "p1", one([](const Tensors& x) { return F::multi_margin_loss(x[0], x[1]); }),
      Impl::composite, f32);
  add("multi_margin_loss", "p2_weight", one([](const Tensors& x) {
    return F::multi_margin_loss(x[0], x[1], {.p = 2, .margin = 0.7, .weight = w4(), .reduction = "none"});
  }));
  add("multilabel_margin_loss", "mean", one([](const Tensors& x) { return F::multilabel_margin_loss(x[0], x[1]); }),
      Impl::composite, f32);
  add("multilabel_margin_loss", "unbatched_none",
      one([](const Tensors& x) { return F::multilabel_margin_loss(x[0], x[1], "none"); }), Impl::composite, f32);
  add("multilabel_soft_margin_loss", "weight",
      one([](const Tensors& x) { return F::multilabel_soft_margin_loss(x[0], x[1], {.weight = w4().to(x[0].dtype())}); }));
  add("soft_margin_loss", "mean",
      one([](const Tensors& x) { return F::soft_margin_loss(x[0], x[1].to(x[0].dtype())); }), Impl::composite, f32);
  add("triplet_margin_loss", "p2",
      one([](const Tensors& x) { return F::triplet_margin_loss(x[0], x[1], x[2], {.margin = 2.0}); }),
      Impl::composite, f32);
  add("triplet_margin_loss", "p1_swap", one([](const Tensors& x) {
    return F::triplet_margin_loss(x[0], x[1], x[2], {.margin = 1.5, .p = 1, .swap = true, .reduction = "none"});
  }), Impl::composite, f32);
  add("poisson_nll_loss", "log_input", one([](const Tensors& x) { return F::poisson_nll_loss(x[0], x[1]); }),
      Impl::composite, f32);
  add("poisson_nll_loss", "full", one([](const Tensors& x) {
    return F::poisson_nll_loss(x[0], x[1], {.log_input = false, .full = true, .reduction = "sum"});
  }), Impl::composite, f32);
  add("gaussian_nll_loss", "hetero", one([](const Tensors& x) { return F::gaussian_nll_loss(x[0], x[1], x[2]); }),
      Impl::composite, f32);
  add("gaussian_nll_loss", "homo_full", one([](const Tensors& x) {
    return F::gaussian_nll_loss(x[0], x[1], x[2], {.full = true, .reduction = "none"});
  }), Impl::composite, f32);
  // PyTorch's ctc_loss gradient assumes log_softmax inputs (see loss_likelihood.cpp), so the case feeds logits
  // through log_softmax on both sides.
  add("ctc_loss", "mean", one([](const Tensors& x) {
    return F::ctc_loss(log_softmax(x[0], 2), x[1], x[2], x[3]);
  }), Impl::composite, f32);
  add("ctc_loss", "concat_sum", one([](const Tensors& x) {
    return F::ctc_loss(log_softmax(x[0], 2), x[1], x[2], x[3], {.blank = 0, .reduction = "sum"});
  }), Impl::composite, f32);
  add("ctc_loss", "none_blank", one([](const Tensors& x) {
    return F::ctc_loss(log_softmax(x[0], 2), x[1], x[2], x[3], {.blank = 3, .reduction = "none"});
  }), Impl::composite, f32);
  return ops;
}

const Registrar reg(entries());

}  // namespace
}  // namespace ember::op_db

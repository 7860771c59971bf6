#!/usr/bin/python3
"""Reference cases of tests/op_db/functional.cpp (see ref.py for the layout).

torch.nn.functional and the losses, PyTorch 1.13. Ops PyTorch 1.13 lacks
(scaled_dot_product_attention, rms_norm) are written out here with PyTorch
2's documented math. Running statistics are created inside the lambdas and
returned as extra outputs, so no stored input is ever updated in place.
"""
import math

import torch
import torch.nn.functional as F

from ref import RefFile, randn, uniform

r = RefFile("functional", int_variants=True)
I64 = torch.int64


def ints(*values):
    return torch.tensor(values, dtype=I64)


# ---- existing cases ----
r.case("softmax", "dim1", [randn(3, 4, 2)], lambda x: F.softmax(x, 1))
r.case("mse_loss", "sum", [randn(3, 4), randn(3, 4)], lambda x, y: F.mse_loss(x, y, reduction="sum"))

# ---- interpolate ----
r.case("interpolate", "nearest_scale2", [randn(2, 3, 4, 5)], lambda x: F.interpolate(x, scale_factor=2))
r.case("interpolate", "nearest_size", [randn(2, 3, 5, 7)], lambda x: F.interpolate(x, size=(3, 4)))
r.case("interpolate", "nearest_1d", [randn(2, 3, 5)], lambda x: F.interpolate(x, size=8))
r.case("interpolate", "nearest_3d", [randn(1, 2, 3, 4, 5)], lambda x: F.interpolate(x, scale_factor=(1.5, 1, 0.5)))
r.case("interpolate", "nearest_exact", [randn(1, 2, 5, 7)],
       lambda x: F.interpolate(x, size=(8, 3), mode="nearest-exact"))
r.case("interpolate", "bilinear", [randn(2, 3, 4, 5)], lambda x: F.interpolate(x, size=(7, 9), mode="bilinear"))
r.case("interpolate", "bilinear_align", [randn(2, 3, 4, 5)],
       lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True))
r.case("interpolate", "bilinear_scale", [randn(1, 2, 4, 5)],
       lambda x: F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear"))
r.case("interpolate", "bilinear_recompute", [randn(1, 2, 4, 5)],
       lambda x: F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear", recompute_scale_factor=True))
r.case("interpolate", "bilinear_down", [randn(1, 2, 8, 9)], lambda x: F.interpolate(x, size=(3, 4), mode="bilinear"))
r.case("interpolate", "linear", [randn(2, 3, 6)], lambda x: F.interpolate(x, size=10, mode="linear"))
r.case("interpolate", "linear_align", [randn(2, 3, 6)],
       lambda x: F.interpolate(x, size=4, mode="linear", align_corners=True))
r.case("interpolate", "bicubic", [randn(1, 2, 5, 6)], lambda x: F.interpolate(x, size=(9, 4), mode="bicubic"))
r.case("interpolate", "bicubic_align", [randn(1, 2, 5, 6)],
       lambda x: F.interpolate(x, size=(9, 4), mode="bicubic", align_corners=True))
r.case("interpolate", "trilinear", [randn(1, 2, 3, 4, 5)],
       lambda x: F.interpolate(x, size=(5, 3, 6), mode="trilinear"))
r.case("interpolate", "area", [randn(2, 3, 7, 9)], lambda x: F.interpolate(x, size=(3, 4), mode="area"))

# ---- pooling ----
r.case("adaptive_avg_pool1d", "out4", [randn(2, 3, 10)], lambda x: F.adaptive_avg_pool1d(x, 4))
r.case("adaptive_avg_pool2d", "out3x4", [randn(2, 3, 7, 9)], lambda x: F.adaptive_avg_pool2d(x, (3, 4)))
r.case("adaptive_max_pool1d", "indices", [randn(2, 3, 10)], lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True))
r.case("adaptive_max_pool2d", "indices", [randn(2, 3, 7, 9)],
       lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True))
r.case("adaptive_max_pool2d", "unbatched", [randn(3, 6, 5)], lambda x: F.adaptive_max_pool2d(x, 2))
r.case("avg_pool1d", "pad", [randn(2, 3, 11)], lambda x: F.avg_pool1d(x, 3, stride=2, padding=1))
r.case("avg_pool1d", "ceil_exclude_pad", [randn(2, 3, 10)],
       lambda x: F.avg_pool1d(x, 4, stride=3, padding=2, ceil_mode=True, count_include_pad=False))
r.case("avg_pool2d", "pad", [randn(2, 3, 7, 8)], lambda x: F.avg_pool2d(x, (3, 2), stride=2, padding=1))
r.case("avg_pool3d", "pad", [randn(1, 2, 5, 6, 7)],
       lambda x: F.avg_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)))
r.case("avg_pool3d", "ceil_exclude_pad", [randn(2, 2, 5, 5, 6)],
       lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))
r.case("avg_pool3d", "divisor", [randn(1, 2, 4, 4, 4)], lambda x: F.avg_pool3d(x, 2, divisor_override=3))
r.case("max_pool1d", "pad", [randn(2, 3, 11)], lambda x: F.max_pool1d(x, 3, stride=2, padding=1))
r.case("max_pool2d", "dilation", [randn(2, 3, 9, 8)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=2))
r.case("max_pool3d", "pad", [randn(1, 2, 5, 6, 7)], lambda x: F.max_pool3d(x, 3, stride=2, padding=1))
r.case("max_pool3d", "dilation_ceil", [randn(2, 2, 6, 7, 5)],
       lambda x: F.max_pool3d(x, (2, 3, 2), stride=(2, 2, 1), dilation=(2, 1, 2), ceil_mode=True))

# ---- convolution ----
r.case("conv1d", "groups", [randn(2, 4, 9), randn(6, 2, 3), randn(6)],
       lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2))
r.case("conv1d", "same", [randn(2, 3, 9), randn(4, 3, 4), randn(4)],
       lambda x, w, b: F.conv1d(x, w, b, padding="same", dilation=2))
r.case("conv1d", "valid", [randn(2, 3, 9), randn(4, 3, 4)], lambda x, w: F.conv1d(x, w, padding="valid"))
r.case("conv2d", "stride_pad", [randn(2, 3, 7, 6), randn(4, 3, 3, 2), randn(4)],
       lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)))
r.case("conv2d", "same", [randn(1, 2, 6, 5), randn(3, 2, 2, 3)], lambda x, w: F.conv2d(x, w, padding="same"))
r.case("conv3d", "groups", [randn(2, 4, 5, 6, 5), randn(6, 2, 3, 2, 3), randn(6)],
       lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2))
r.case("conv3d", "same", [randn(1, 2, 4, 5, 4), randn(3, 2, 2, 3, 2)], lambda x, w: F.conv3d(x, w, padding="same"))
r.case("conv3d", "unbatched", [randn(2, 4, 4, 4), randn(3, 2, 2, 2, 2)], lambda x, w: F.conv3d(x, w, stride=2))
r.case("conv_transpose1d", "stride", [randn(2, 4, 7), randn(4, 3, 3), randn(3)],
       lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1))
r.case("conv_transpose1d", "groups_dilation", [randn(2, 4, 5), randn(4, 2, 3)],
       lambda x, w: F.conv_transpose1d(x, w, groups=2, dilation=2))
r.case("conv_transpose2d", "stride", [randn(2, 4, 5, 6), randn(4, 3, 3, 2), randn(3)],
       lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1))

# ---- fold / unfold / shuffles / pad ----
r.case("unfold", "params", [randn(2, 3, 7, 8)],
       lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))
r.case("fold", "params", [randn(2, 18, 24)],
       lambda x: F.fold(x, (7, 8), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))
r.case("fold", "overlap", [randn(1, 8, 9)], lambda x: F.fold(x, 4, 2))
r.case("pixel_shuffle", "r2", [randn(2, 8, 3, 4)], lambda x: F.pixel_shuffle(x, 2))
r.case("pixel_unshuffle", "r2", [randn(2, 2, 6, 4)], lambda x: F.pixel_unshuffle(x, 2))
r.case("pad", "constant", [randn(2, 3, 4)], lambda x: F.pad(x, (1, 2, 0, 1), value=0.5))
r.case("pad", "crop", [randn(2, 3, 4)], lambda x: F.pad(x, (-1, 2, 1, -1)))
r.case("pad", "reflect", [randn(1, 2, 4, 5)], lambda x: F.pad(x, (2, 1, 3, 1), mode="reflect"))
r.case("pad", "replicate", [randn(1, 2, 4, 5)], lambda x: F.pad(x, (2, 1, 3, 1), mode="replicate"))
r.case("pad", "circular", [randn(1, 2, 4, 5)], lambda x: F.pad(x, (2, 1, 3, 1), mode="circular"))

# ---- sampling grids ----
grid = uniform(-1.2, 1.2, 2, 4, 3, 2)
r.case("grid_sample", "bilinear_zeros", [randn(2, 3, 5, 6), grid],
       lambda x, g: F.grid_sample(x, g, align_corners=False))
r.case("grid_sample", "bilinear_border_align", [randn(2, 3, 5, 6), grid],
       lambda x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True))
r.case("grid_sample", "bilinear_reflection", [randn(2, 3, 5, 6), uniform(-2.5, 2.5, 2, 4, 3, 2)],
       lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False))
r.case("grid_sample", "nearest", [randn(2, 3, 5, 6), grid],
       lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=False))
r.case("affine_grid", "2d", [randn(2, 2, 3)], lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False))
r.case("affine_grid", "2d_align", [randn(2, 2, 3)], lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=True))
r.case("affine_grid", "3d", [randn(1, 3, 4)], lambda t: F.affine_grid(t, (1, 1, 2, 3, 4), align_corners=False))

# ---- normalization ----
def instance_norm_running(x):
    rm, rv = torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype)
    return F.instance_norm(x, rm, rv, momentum=0.2), rm, rv


r.case("instance_norm", "affine", [randn(2, 3, 4, 5), randn(3), randn(3)],
       lambda x, w, b: F.instance_norm(x, weight=w, bias=b))
r.case("instance_norm", "running", [randn(2, 3, 6)], instance_norm_running)
# Stored running statistics as constants (a stored input would get a gradient check).
def stats():
    return torch.linspace(-0.5, 0.5, 3, dtype=torch.float64), torch.linspace(0.5, 2, 3, dtype=torch.float64)


r.case("instance_norm", "eval", [randn(2, 3, 4, 2)], lambda x: F.instance_norm(x, *stats(), use_input_stats=False))


def batch_norm_train(x, w, b):
    rm, rv = torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype)
    return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3), rm, rv


r.case("batch_norm", "train", [randn(4, 3, 5), randn(3), randn(3)], batch_norm_train)
r.case("batch_norm", "eval", [randn(4, 3, 2, 2), randn(3), randn(3)],
       lambda x, w, b: F.batch_norm(x, *stats(), w, b, training=False, eps=1e-3))
r.case("layer_norm", "affine", [randn(2, 3, 4), randn(3, 4), randn(3, 4)],
       lambda x, w, b: F.layer_norm(x, (3, 4), w, b))
r.case("layer_norm", "plain", [randn(5, 6)], lambda x: F.layer_norm(x, (6,), eps=1e-3))
r.case("group_norm", "affine", [randn(2, 6, 3, 2), randn(6), randn(6)], lambda x, w, b: F.group_norm(x, 3, w, b))
r.case("rms_norm", "weight", [randn(2, 3, 4), randn(4)],
       lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(x.dtype).eps) * w)
r.case("rms_norm", "two_dims", [randn(2, 3, 4)],
       lambda x: x * torch.rsqrt(x.pow(2).mean((-2, -1), keepdim=True) + 1e-5))
r.case("local_response_norm", "4d", [randn(2, 6, 4, 5)], lambda x: F.local_response_norm(x, 3))
r.case("local_response_norm", "3d", [randn(2, 5, 7)],
       lambda x: F.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0))
r.case("normalize", "p2", [randn(3, 4, 5)], lambda x: F.normalize(x))
r.case("normalize", "p1_last", [randn(3, 4, 5)], lambda x: F.normalize(x, p=1.0, dim=-1))

# ---- distances ----
r.case("cosine_similarity", "dim1", [randn(4, 5), randn(4, 5)], lambda a, b: F.cosine_similarity(a, b))
r.case("cosine_similarity", "broadcast", [randn(3, 1, 5), randn(4, 5)], lambda a, b: F.cosine_similarity(a, b, dim=-1))
r.case("pairwise_distance", "p2", [randn(4, 5), randn(4, 5)], lambda a, b: F.pairwise_distance(a, b))
r.case("pairwise_distance", "p1_keepdim", [randn(4, 5), randn(5)],
       lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True))
r.case("pdist", "p2", [randn(5, 4)], lambda x: F.pdist(x))
r.case("pdist", "p3", [randn(4, 3)], lambda x: F.pdist(x, p=3))
r.case("cdist", "p2", [randn(2, 3, 4), randn(2, 5, 4)], lambda a, b: torch.cdist(a, b))
r.case("cdist", "p1", [randn(3, 4), randn(6, 4)], lambda a, b: torch.cdist(a, b, p=1))

# ---- attention (PyTorch 2's math; 1.13 has no F.scaled_dot_product_attention) ----
def sdpa(q, k, v, mask=None, causal=False):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        s = s.masked_fill(~torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril(), float("-inf"))
    elif mask is not None and mask.dtype == torch.bool:
        s = s.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        s = s + mask
    return torch.softmax(s, -1) @ v


bool_mask = torch.rand(4, 5) > 0.4
bool_mask[:, 0] = True
r.case("scaled_dot_product_attention", "plain", [randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6)], sdpa)
r.case("scaled_dot_product_attention", "float_mask",
       [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 6), randn(4, 5)], sdpa)
r.case("scaled_dot_product_attention", "bool_mask", [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 6), bool_mask], sdpa)
r.case("scaled_dot_product_attention", "causal", [randn(2, 5, 8), randn(2, 5, 8), randn(2, 5, 3)],
       lambda q, k, v: sdpa(q, k, v, causal=True))

# ---- dropout (deterministic settings; statistics: tests/ops/test_functional_extra.cpp) ----
r.case("dropout", "eval", [randn(3, 4)], lambda x: F.dropout(x, 0.5, training=False))
r.case("dropout1d", "p0", [randn(2, 3, 4)], lambda x: F.dropout1d(x, 0.0))
r.case("dropout2d", "eval", [randn(2, 3, 4, 2)], lambda x: F.dropout2d(x, 0.5, training=False))
r.case("dropout3d", "eval", [randn(2, 3, 2, 2, 2)], lambda x: F.dropout3d(x, 0.5, training=False))
r.case("alpha_dropout", "eval", [randn(3, 4)], lambda x: F.alpha_dropout(x, 0.5))

# ---- embeddings, linear maps ----
r.case("embedding", "plain", [ints(3, 0, 9, 3, 5, 1).view(2, 3), randn(10, 4)], lambda i, w: F.embedding(i, w))
r.case("embedding", "padding_idx", [ints(3, 0, 9, 3, 5, 1).view(2, 3), randn(10, 4)],
       lambda i, w: F.embedding(i, w, padding_idx=3))
bag_idx = ints(1, 2, 4, 5, 4, 3, 2, 9)
r.case("embedding_bag", "sum_offsets", [bag_idx, randn(10, 4)],
       lambda i, w: F.embedding_bag(i, w, ints(0, 3, 3, 6), mode="sum"))
r.case("embedding_bag", "mean_2d", [bag_idx.view(2, 4), randn(10, 4)], lambda i, w: F.embedding_bag(i, w))
r.case("embedding_bag", "max_offsets", [bag_idx, randn(10, 4)],
       lambda i, w: F.embedding_bag(i, w, ints(0, 2, 2, 7), mode="max"))
r.case("embedding_bag", "per_sample_weights", [bag_idx, randn(10, 4), randn(8)],
       lambda i, w, p: F.embedding_bag(i, w, ints(0, 5), mode="sum", per_sample_weights=p))
r.case("embedding_bag", "padding_idx_last_offset", [bag_idx, randn(10, 4)],
       lambda i, w: F.embedding_bag(i, w, ints(0, 3, 8), include_last_offset=True, padding_idx=4))
r.case("one_hot", "inferred", [ints(3, 0, 2, 3)], lambda i: F.one_hot(i), grad=False)
r.case("one_hot", "classes", [ints(1, 0, 4).view(3, 1)], lambda i: F.one_hot(i, 6), grad=False)
r.case("linear", "bias", [randn(2, 3, 4), randn(5, 4), randn(5)], lambda x, w, b: F.linear(x, w, b))
r.case("linear", "no_bias", [randn(3, 4), randn(5, 4)], lambda x, w: F.linear(x, w))
r.case("bilinear", "bias", [randn(3, 4), randn(3, 5), randn(6, 4, 5), randn(6)],
       lambda a, b, w, c: F.bilinear(a, b, w, c))
r.case("bilinear", "batch_dims", [randn(2, 3, 4), randn(2, 3, 2), randn(3, 4, 2)],
       lambda a, b, w: F.bilinear(a, b, w))

# ---- existing losses ----
# Class weights are constants (PyTorch does not differentiate them); the C++
# entries build the same tensor.
def w4():
    return torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64)



logits, cls = randn(5, 4), ints(1, 0, 3, 3, 2)
r.case("cross_entropy", "index", [logits, cls], lambda x, t: F.cross_entropy(x, t))
r.case("cross_entropy", "weight_ignore_smooth", [randn(5, 4), ints(1, -100, 3, 3, 2)],
       lambda x, t: F.cross_entropy(x, t, weight=w4(), ignore_index=-100, label_smoothing=0.2))
r.case("cross_entropy", "ignore_index", [randn(5, 4), ints(1, 2, 3, 3, 2)],
       lambda x, t: F.cross_entropy(x, t, ignore_index=3))
r.case("cross_entropy", "probs_none", [randn(3, 4, 2), torch.softmax(randn(3, 4, 2), 1)],
       lambda x, t: F.cross_entropy(x, t, reduction="none"))
r.case("nll_loss", "weight", [torch.log_softmax(randn(5, 4), 1), cls], lambda x, t: F.nll_loss(x, t, weight=w4()))
r.case("nll_loss", "ignore_none", [torch.log_softmax(randn(5, 4), 1), ints(1, 2, 0, 2, 3)],
       lambda x, t: F.nll_loss(x, t, ignore_index=2, reduction="none"))
r.case("binary_cross_entropy", "weight", [uniform(0.05, 0.95, 3, 4), uniform(0, 1, 3, 4)],
       lambda x, t: F.binary_cross_entropy(x, t, weight=w4()))
r.case("binary_cross_entropy_with_logits", "pos_weight", [randn(3, 4) * 3, uniform(0, 1, 3, 4)],
       lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=w4(), reduction="sum"))
r.case("kl_div", "batchmean", [torch.log_softmax(randn(3, 4), 1), torch.softmax(randn(3, 4), 1)],
       lambda x, t: F.kl_div(x, t, reduction="batchmean"))
r.case("kl_div", "log_target", [torch.log_softmax(randn(3, 4), 1), torch.log_softmax(randn(3, 4), 1)],
       lambda x, t: F.kl_div(x, t, reduction="none", log_target=True))
r.case("huber_loss", "delta", [randn(3, 4) * 2, randn(3, 4)], lambda x, t: F.huber_loss(x, t, delta=0.7))
r.case("smooth_l1_loss", "beta", [randn(3, 4) * 2, randn(3, 4)],
       lambda x, t: F.smooth_l1_loss(x, t, beta=0.5, reduction="none"))
r.case("l1_loss", "mean", [randn(3, 4), randn(3, 4)], lambda x, t: F.l1_loss(x, t))
r.case("mse_loss", "none", [randn(3, 4), randn(3, 4)], lambda x, t: F.mse_loss(x, t, reduction="none"))

# ---- new losses ----
pm = ints(1, -1, -1, 1, 1)
r.case("cosine_embedding_loss", "margin", [randn(5, 6), randn(5, 6), pm],
       lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1))
r.case("cosine_embedding_loss", "unbatched_none", [randn(6), randn(6), torch.tensor(-1)],
       lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=-0.5, reduction="none"))
r.case("hinge_embedding_loss", "margin", [randn(3, 4), ints(1, -1, 1, 1, -1, -1, 1, -1, -1, 1, 1, -1).view(3, 4)],
       lambda x, y: F.hinge_embedding_loss(x, y, margin=0.5))
r.case("margin_ranking_loss", "margin", [randn(6), randn(6), ints(1, -1, 1, -1, -1, 1)],
       lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2, reduction="sum"))
r.case("multi_margin_loss", "p1", [randn(5, 4), cls], lambda x, t: F.multi_margin_loss(x, t))
r.case("multi_margin_loss", "p2_weight", [randn(5, 4), cls],
       lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.7, weight=w4(), reduction="none"))
r.case("multilabel_margin_loss", "mean", [randn(3, 4), ints(3, 0, -1, 1, 1, 2, 3, 0, -1, 2, 2, 2).view(3, 4)],
       lambda x, t: F.multilabel_margin_loss(x, t))
r.case("multilabel_margin_loss", "unbatched_none", [randn(5), ints(4, 1, -1, 0, 3)],
       lambda x, t: F.multilabel_margin_loss(x, t, reduction="none"))
r.case("multilabel_soft_margin_loss", "weight", [randn(3, 4) * 3, uniform(0, 1, 3, 4)],
       lambda x, t: F.multilabel_soft_margin_loss(x, t, weight=w4()))
r.case("soft_margin_loss", "mean", [randn(3, 4), ints(1, -1, 1, 1, -1, -1, 1, -1, -1, 1, 1, -1).view(3, 4)],
       lambda x, t: F.soft_margin_loss(x, t.double()))
r.case("triplet_margin_loss", "p2", [randn(4, 5), randn(4, 5), randn(4, 5)],
       lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0))
r.case("triplet_margin_loss", "p1_swap", [randn(4, 5), randn(4, 5), randn(4, 5)],
       lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=1.5, p=1, swap=True, reduction="none"))
r.case("poisson_nll_loss", "log_input", [randn(3, 4), uniform(0, 4, 3, 4)], lambda x, t: F.poisson_nll_loss(x, t))
r.case("poisson_nll_loss", "full", [uniform(0.5, 3, 3, 4), uniform(0.1, 4, 3, 4)],
       lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"))
r.case("gaussian_nll_loss", "hetero", [randn(3, 4), randn(3, 4), uniform(0.5, 2, 3, 4)],
       lambda x, t, v: F.gaussian_nll_loss(x, t, v))
r.case("gaussian_nll_loss", "homo_full", [randn(3, 4), randn(3, 4), uniform(0.5, 2, 3)],
       lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"))
ctc_targets = ints(1, 2, 2, 3, 1, 0).view(2, 3)
r.case("ctc_loss", "mean", [randn(6, 2, 4), ctc_targets, ints(6, 5), ints(3, 2)],
       lambda x, t, il, tl: F.ctc_loss(x.log_softmax(2), t, il, tl))
r.case("ctc_loss", "concat_sum", [randn(7, 3, 5), ints(1, 1, 4, 2, 3, 4), ints(7, 6, 7), ints(3, 2, 1)],
       lambda x, t, il, tl: F.ctc_loss(x.log_softmax(2), t, il, tl, blank=0, reduction="sum"))
r.case("ctc_loss", "none_blank", [randn(5, 2, 4), ints(0, 1, 1, 2).view(2, 2), ints(5, 4), ints(2, 0)],
       lambda x, t, il, tl: F.ctc_loss(x.log_softmax(2), t, il, tl, blank=3, reduction="none"))
# Beyond OPS.md (tests/op_db/surface.txt's last section); appended, so the
# cases above keep their random inputs.
r.case("adaptive_avg_pool3d", "out2x3x4", [randn(2, 3, 5, 7, 6)], lambda x: F.adaptive_avg_pool3d(x, (2, 3, 4)))
# grid_sample's nearest mode on 5-D input (PyTorch's volumetric kernel).
grid3d = uniform(-1.2, 1.2, 2, 3, 2, 4, 3)
r.case("grid_sample", "nearest_3d_zeros", [randn(2, 3, 4, 5, 6), grid3d],
       lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=False))
r.case("grid_sample", "nearest_3d_border_align", [randn(2, 3, 4, 5, 6), grid3d],
       lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True))
r.case("grid_sample", "nearest_3d_reflection", [randn(2, 3, 4, 5, 6), uniform(-2.5, 2.5, 2, 3, 2, 4, 3)],
       lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="reflection", align_corners=False))
r.write()

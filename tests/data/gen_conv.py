#!/usr/bin/python3
# Expected values for tests/ops/test_conv.cpp and test_pool.cpp, from PyTorch (1.13).
# Run: /usr/bin/python3 tests/data/gen_conv.py > tests/data/conv_expected.txt
# Each line: name|shape|values (row-major, repr of float64). Inputs are exact
# quarter-integers from X(shape, k) (same formula in the C++ tests); each case
# stores the output and, for grad_output = X(out.shape, 5), every gradient.
import torch
import torch.nn.functional as F


def X(shape, k):
    n = 1
    for s in shape:
        n *= s
    return (((torch.arange(n, dtype=torch.float64) * 7 + 3 * k) % 13) - 6).div(4).reshape(shape)


def emit(name, t):
    t = t.detach().to(torch.float64).contiguous()
    print(f"{name}|{','.join(str(s) for s in t.shape)}|{','.join(repr(float(v)) for v in t.flatten())}")


def run(name, f, *shapes):
    inputs = [X(s, i).requires_grad_() for i, s in enumerate(shapes)]
    out = f(*inputs)
    emit(name, out)
    grads = torch.autograd.grad(out, inputs, X(out.shape, 5))
    for i, g in enumerate(grads):
        emit(f"{name}.grad{i}", g)


# ---- convolution: (input, weight[, bias]) ----
run("conv2d_basic", lambda x, w, b: F.conv2d(x, w, b), (2, 3, 7, 6), (4, 3, 3, 3), (4,))
run("conv2d_stride_pad_dil", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
    (2, 3, 9, 8), (4, 3, 3, 2), (4,))
run("conv2d_groups", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), (2, 4, 6, 6), (6, 2, 3, 3), (6,))
run("conv2d_depthwise", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=4), (1, 4, 5, 5), (4, 1, 3, 3))
run("conv2d_same_even", lambda x, w, b: F.conv2d(x, w, b, padding="same", dilation=(1, 2)), (1, 2, 6, 7),
    (3, 2, 4, 2), (3,))
run("conv2d_valid", lambda x, w: F.conv2d(x, w, padding="valid"), (1, 2, 5, 5), (3, 2, 2, 2))
run("conv2d_no_bias_stride", lambda x, w: F.conv2d(x, w, stride=2), (1, 1, 5, 5), (2, 1, 3, 3))
run("conv1d_basic", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), (2, 3, 10), (4, 3, 3), (4,))
run("conv1d_groups", lambda x, w: F.conv1d(x, w, groups=3), (1, 3, 8), (6, 1, 2))
run("conv_transpose2d_basic",
    lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), (2, 3, 4, 5), (3, 2, 3, 3),
    (2,))
run("conv_transpose2d_groups_dil",
    lambda x, w: F.conv_transpose2d(x, w, stride=(1, 2), padding=(0, 1), output_padding=(0, 1), groups=2,
                                    dilation=2), (1, 4, 3, 3), (4, 3, 2, 3))
run("conv_transpose2d_plain", lambda x, w: F.conv_transpose2d(x, w), (1, 2, 3, 3), (2, 3, 2, 2))

# ---- pooling: (input) ----
run("max_pool2d_k3s2p1", lambda x: F.max_pool2d(x, 3, 2, 1), (2, 3, 7, 7))
run("max_pool2d_k2", lambda x: F.max_pool2d(x, 2), (1, 2, 6, 5))
run("max_pool2d_ceil", lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True), (1, 2, 6, 6))
run("max_pool2d_dilation", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1), dilation=2), (1, 2, 7, 8))
run("max_pool2d_3d", lambda x: F.max_pool2d(x, 2), (2, 5, 5))
emit("max_pool2d_k3s2p1.indices", F.max_pool2d(X((2, 3, 7, 7), 0), 3, 2, 1, return_indices=True)[1])
emit("max_pool2d_ceil.indices", F.max_pool2d(X((1, 2, 6, 6), 0), 3, 2, ceil_mode=True, return_indices=True)[1])
run("max_pool1d_k3s2p1", lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 11))
run("max_pool1d_ceil_dil", lambda x: F.max_pool1d(x, 2, 3, dilation=2, ceil_mode=True), (1, 2, 10))
run("max_pool1d_2d", lambda x: F.max_pool1d(x, 2), (3, 6))
run("avg_pool2d_k3s2p1", lambda x: F.avg_pool2d(x, 3, 2, 1), (2, 3, 7, 7))
run("avg_pool2d_exclude_pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (2, 3, 7, 7))
run("avg_pool2d_ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 6, 6))
run("avg_pool2d_ceil_exclude", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    (1, 2, 6, 6))
run("avg_pool2d_ceil_nopad", lambda x: F.avg_pool2d(x, 2, ceil_mode=True), (1, 2, 5, 7))
run("avg_pool2d_rect", lambda x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 0)), (1, 2, 5, 7))
run("avg_pool2d_3d", lambda x: F.avg_pool2d(x, 2), (2, 4, 4))
run("adaptive_avg_pool2d_uneven", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (1, 2, 7, 9))
run("adaptive_avg_pool2d_even", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (2, 2, 6, 6))
run("adaptive_avg_pool2d_global", lambda x: F.adaptive_avg_pool2d(x, 1), (2, 3, 5, 4))
run("adaptive_avg_pool2d_upsample", lambda x: F.adaptive_avg_pool2d(x, (5, 3)), (1, 1, 3, 2))
run("adaptive_avg_pool2d_3d", lambda x: F.adaptive_avg_pool2d(x, (2, 2)), (3, 5, 5))

#!/usr/bin/python3
# Expected values for tests/ops/test_reduction.cpp, from PyTorch (1.13).
# Run: /usr/bin/python3 tests/data/gen_reduction.py > tests/data/reduction_expected.txt
# Each line: name|shape|values (row-major, repr of float64). The C++ test
# builds the same inputs (exact small integers) and looks results up by name.
import math
import torch

torch.set_printoptions(precision=17)


def X(dtype=torch.float32):
    # 24 exact integers in [-5, 5], shape [2, 3, 4]; same formula in the test.
    return ((torch.arange(24) * 7) % 11 - 5).to(dtype).reshape(2, 3, 4)


def Y():
    return X() / 4  # exact in float32


cases = {}


def case(name, t):
    cases[name] = t.detach().to(torch.float64) if t.dtype != torch.bool else t.to(torch.float64)


x, y = X(), Y()
xd = X(torch.float64)
# sum / mean / prod
case("sum_all", x.sum())
case("sum_d1", x.sum(1))
case("sum_d02_keep", x.sum((0, 2), keepdim=True))
case("sum_dneg1", x.sum(-1))
case("mean_all", y.mean())
case("mean_d2", y.mean(2))
case("mean_d01", y.mean((0, 1)))
case("prod_d2", x.prod(2))
case("prod_d0", y.prod(0))
# amax / amin / max / min / argmax / argmin
case("amax_d1", x.amax(1))
case("amin_d02", x.amin((0, 2)))
case("max_d2_values", x.max(2).values)
case("max_d2_indices", x.max(2).indices)
case("min_d0_values", x.min(0).values)
case("min_d0_indices", x.min(0).indices)
case("argmax_all", x.argmax())
case("argmin_d1", x.argmin(1))
case("argmax_d1_keep", x.argmax(1, keepdim=True))
# var / std
case("var_all", y.var())
case("var_d1", y.var(1))
case("var_d2_c0", torch.var(y, 2, unbiased=False))
case("std_d0", y.std(0))
case("std_d12_keep", y.std((1, 2), keepdim=True))
case("var_mean_d2_var", torch.var_mean(y, 2)[0])
case("var_mean_d2_mean", torch.var_mean(y, 2)[1])
# var with correction=2 (torch 1.13 python binding: pass dim and correction)
case("var_d1_c2", torch.var(y, (1,), correction=2))
# logsumexp / norm
case("logsumexp_d2", y.logsumexp(2))
case("logsumexp_d01", y.logsumexp((0, 1)))
case("norm2_all", y.norm())
case("norm1_d1", y.norm(1, 1))
case("norminf_d2", y.norm(float("inf"), 2))
case("norm0_d0", x.norm(0, 0))
case("norm3_d2", y.norm(3, 2))
case("norm_half_all", y.norm(0.5))
# all / any
case("all_d2", (x != 0).all(2))
case("any_d0", (x > 4).any(0))
# cumsum / softmax / log_softmax
case("cumsum_d1", x.cumsum(1))
case("cumsum_d2", y.cumsum(2))
case("softmax_d2", y.softmax(2))
case("softmax_d0", y.softmax(0))
case("log_softmax_d1", y.log_softmax(1))
case("log_softmax_d2", y.log_softmax(2))
# non-contiguous: transposed, sliced, expanded
xt = x.transpose(0, 2)  # [4, 3, 2]
case("t_sum_d0", xt.sum(0))
case("t_sum_d2", xt.sum(2))
case("t_sum_d02", xt.sum((0, 2)))
case("t_amax_d1", xt.amax(1))
case("t_var_d0", (xt / 4).var(0))
case("t_argmax_d0", xt.argmax(0))
case("t_cumsum_d0", xt.cumsum(0))
case("t_softmax_d0", (xt / 4).softmax(0))
xs = x[:, ::2, 1:]  # [2, 2, 3]
case("s_sum_d2", xs.sum(2))
case("s_mean_d0", (xs / 4).mean(0))
case("s_max_d1_values", xs.max(1).values)
case("s_max_d1_indices", xs.max(1).indices)
xe = x[0, 0].expand(3, 4)  # rows repeated
case("e_sum_d0", xe.sum(0))
case("e_prod_d1", xe.prod(1))
xp = x.permute(2, 0, 1)  # [4, 2, 3]
case("p_sum_d1", xp.sum(1))
case("p_sum_d12", xp.sum((1, 2)))
# larger: outer and inner reductions with many rows (float64 for exactness)
big = ((torch.arange(300 * 257) * 13) % 101 - 50).to(torch.float64).reshape(300, 257)
case("big_sum_d0", big.sum(0))
case("big_sum_d1", big.sum(1))
case("big_var_d0", big.var(0))
case("big_lse_d1", (big / 25).logsumexp(1))
case("big_amax_d0", big.amax(0))

for name, t in cases.items():
    vals = ",".join(repr(float(v)) for v in t.reshape(-1).tolist())
    shape = ",".join(str(s) for s in t.shape)
    print(f"{name}|{shape}|{vals}")

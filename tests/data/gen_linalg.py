"""Expected values for tests/ops/test_linalg.cpp, from PyTorch 1.13.
Run: /usr/bin/python3 tests/data/gen_linalg.py  (prints the C++ literals the test inlines)."""
import torch


def show(name, t):
    full = t.dtype == torch.float64  # float64 needs all 17 digits
    vals = ", ".join(repr(v) if isinstance(v, int) or full else f"{v:.9g}" for v in t.flatten().tolist())
    print(f"// {name}: shape {list(t.shape)} dtype {t.dtype}\n{{{vals}}}")


ar = lambda *s, dtype=torch.float32: torch.arange(torch.Size(s).numel(), dtype=dtype).reshape(*s)

show("dot 1-D @ 1-D", torch.matmul(torch.tensor([1., 2., 3.]), torch.tensor([4., 5., 6.])))
show("1-D @ 2-D", torch.matmul(torch.tensor([1., 2.]), ar(2, 3)))
show("2-D @ 1-D", torch.matmul(ar(2, 3), torch.tensor([1., 0., -1.])))
show("batched broadcast [2,1,2,3] @ [3,3,2]", torch.matmul(ar(2, 1, 2, 3), ar(3, 3, 2)))
show("1-D @ 3-D", torch.matmul(ar(3), ar(2, 3, 2)))
show("3-D @ 1-D", torch.matmul(ar(2, 2, 3), ar(3)))
show("3-D @ 2-D", torch.matmul(ar(2, 2, 3), ar(3, 2)))
x = ar(3, 4)
show("x.t() @ x", x.t() @ x)
show("x[:, ::2] @ x[:2, 1:]", x[:, ::2] @ x[:2, 1:])
w = ar(5, 4) / 10
show("x @ w.t()", x @ w.t())
show("bmm with transposed batch2", torch.bmm(ar(2, 2, 3), ar(2, 4, 3).transpose(1, 2)))
a = (ar(4, 6) / 7 - 1).bfloat16()
b = (ar(6, 3) / 5 - 1.5).bfloat16()
show("bf16 inputs a", a.float())
show("bf16 inputs b", b.float())
show("bf16 a @ b", (a @ b).float())
d1 = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float64)
d2 = torch.tensor([[1.0 / 3, 0.5], [0.25, 1e-8]], dtype=torch.float64)
show("float64 mm", d1 @ d2)
i1 = torch.tensor([[2**40 + 1, 3], [-7, 11]], dtype=torch.int64)
i2 = torch.tensor([[2**20, 1], [5, -2]], dtype=torch.int64)
show("int64 mm", i1 @ i2)
show("addmm beta=0.5 alpha=2", torch.addmm(ar(2, 2), ar(2, 3), ar(3, 2), beta=0.5, alpha=2))
show("addmm row bias", torch.addmm(torch.tensor([1., -1.]), ar(2, 3), ar(3, 2)))
show("addmm column input [2,1] beta=2", torch.addmm(torch.tensor([[10.], [20.]]), ar(2, 3), ar(3, 2), beta=2))
show("linear", torch.nn.functional.linear(ar(2, 3), ar(4, 3), torch.tensor([1., 2., 3., 4.])))
show("linear 3-D input", torch.nn.functional.linear(ar(2, 2, 3), ar(4, 3) - 5, torch.tensor([0.5, 0., -0.5, 1.])))
show("linear 1-D input no bias", torch.nn.functional.linear(torch.tensor([1., 2., 3.]), ar(2, 3)))
show("outer", torch.outer(torch.tensor([1, 2, 3]), torch.tensor([1.5, -1.0])))
show("int32 3-D matmul", torch.matmul(ar(2, 2, 3, dtype=torch.int32), ar(3, 2, dtype=torch.int32)))
show("int8 mm wraps", torch.mm(torch.tensor([[100, 100]], dtype=torch.int8), torch.tensor([[2], [1]], dtype=torch.int8)))

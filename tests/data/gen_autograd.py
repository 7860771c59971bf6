#!/usr/bin/python3
"""Reference gradients for tests/autograd/test_programs.cpp, computed by PyTorch.

Run: /usr/bin/python3 tests/data/gen_autograd.py  (prints C++ initialisers to paste)
Inputs are closed-form (sin/cos of aranges) so Ember builds the same tensors.
"""
import torch

torch.set_printoptions(precision=10)
d = torch.float64


def show(name, t):
    vals = ", ".join(repr(v) for v in t.detach().flatten().tolist())
    print(f"// {name} {list(t.shape)}\n{{{vals}}}")


# (a) two-layer MLP with MSE loss
x = torch.sin(torch.arange(12, dtype=d).view(4, 3) * 0.7)
w1 = (torch.cos(torch.arange(15, dtype=d).view(5, 3) * 0.3) * 0.5).requires_grad_()
b1 = (torch.arange(5, dtype=d) * 0.1 - 0.2).requires_grad_()
w2 = (torch.sin(torch.arange(10, dtype=d).view(2, 5) * 0.9) * 0.4).requires_grad_()
b2 = torch.tensor([0.05, -0.1], dtype=d).requires_grad_()
y = torch.cos(torch.arange(8, dtype=d).view(4, 2))
h = torch.relu(x @ w1.t() + b1)
out = h @ w2.t() + b2
loss = ((out - y) ** 2).mean()
loss.backward()
print("// mlp loss", repr(loss.item()))
for n, t in [("w1.grad", w1.grad), ("b1.grad", b1.grad), ("w2.grad", w2.grad), ("b2.grad", b2.grad)]:
    show(n, t)

# (b) softmax cross-entropy from primitives
logits = (torch.sin(torch.arange(12, dtype=d).view(3, 4) * 1.3) * 2).requires_grad_()
target = torch.tensor([0, 3, 1])
logp = logits - torch.logsumexp(logits, 1, keepdim=True)
ce = -logp.gather(1, target.view(3, 1)).mean()
ce.backward()
print("// ce loss", repr(ce.item()))
show("logits.grad", logits.grad)

# (c) a loop whose trip count depends on the data
v = torch.tensor([0.5, 1.0, 1.5], dtype=d, requires_grad=True)
hh = v
steps = 0
while hh.sum() < 10:
    hh = hh * 1.5 + 0.1
    steps += 1
(hh * hh).sum().backward()
print("// loop steps", steps)
show("v.grad", v.grad)

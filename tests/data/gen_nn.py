# Generates tests/data/nn_reference.safetensors: inputs, weights, outputs and
# gradients of nn layers and losses from PyTorch 1.13 (float64), plus module
# reprs and state_dict keys in the metadata block. Run with /usr/bin/python3;
# the file is committed, so tests never need PyTorch.
# Written with json + struct (the safetensors package is not installed here),
# which also checks Ember's reader against an independent writer.
import json
import os
import struct
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
T = OrderedDict()
META = OrderedDict()


def put(name, t):
    T[name] = t.detach().clone().contiguous()


def run_layer(name, module, inputs, params=None):
    """Stores inputs, params, output, grads of (output * gy).sum()."""
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    for i, x in enumerate(xs):
        put(f"{name}.x{i}", x)
    for k, p in module.named_parameters():
        put(f"{name}.p.{k}", p)
    for k, b in module.named_buffers():
        put(f"{name}.b.{k}", b)
    y = module(*xs)
    gy = torch.randn_like(y)
    put(f"{name}.y", y)
    put(f"{name}.gy", gy)
    (y * gy).sum().backward()
    for i, x in enumerate(xs):
        if x.grad is not None:
            put(f"{name}.gx{i}", x.grad)
    for k, p in module.named_parameters():
        if p.grad is not None:
            put(f"{name}.g.{k}", p.grad)
    for k, b in module.named_buffers():
        put(f"{name}.after.{k}", b)
    return y


def spread(*shape, scale=3.0):
    return torch.randn(*shape) * scale


# ---- layers ----
run_layer("linear", nn.Linear(5, 3), [spread(4, 5)])
run_layer("linear_nobias", nn.Linear(5, 3, bias=False), [spread(2, 3, 5)])
run_layer("bilinear", nn.Bilinear(3, 4, 2), [spread(5, 3), spread(5, 4)])
emb = nn.Embedding(10, 3, padding_idx=1)
run_layer("embedding", emb, [torch.tensor([[1, 2, 3, 1], [9, 0, 1, 5]])])

for name, mod, x in [("bn1d", nn.BatchNorm1d(3), spread(6, 3)),
                     ("bn1d_3d", nn.BatchNorm1d(3), spread(4, 3, 5)),
                     ("bn2d", nn.BatchNorm2d(3), spread(2, 3, 4, 4))]:
    with torch.no_grad():
        mod.weight.uniform_(0.5, 1.5)
        mod.bias.uniform_(-0.5, 0.5)
        mod.running_mean.uniform_(-1, 1)
        mod.running_var.uniform_(0.5, 2)
    run_layer(name, mod, [x])  # train: batch stats, running update
    mod.eval()
    put(f"{name}.y_eval", mod(x))
bn = nn.BatchNorm1d(3, momentum=None)
xa, xb = spread(5, 3), spread(5, 3)
put("bn_cumulative.x0", xa)
put("bn_cumulative.x1", xb)
bn(xa)
bn(xb)
for k, b in bn.named_buffers():
    put(f"bn_cumulative.after.{k}", b)
bn_nostats = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
bn_nostats.eval()
run_layer("bn_nostats", bn_nostats, [spread(4, 3)])

ln = nn.LayerNorm([4, 5])
with torch.no_grad():
    ln.weight.uniform_(0.5, 1.5)
    ln.bias.uniform_(-0.5, 0.5)
run_layer("layernorm", ln, [spread(3, 4, 5)])
gn = nn.GroupNorm(2, 6)
with torch.no_grad():
    gn.weight.uniform_(0.5, 1.5)
    gn.bias.uniform_(-0.5, 0.5)
run_layer("groupnorm", gn, [spread(2, 6, 3)])

act_x = torch.linspace(-9, 9, 24).reshape(4, 6) + 0.01  # avoids exact kinks
act_x[0, 0] = 30.0  # beyond softplus' threshold
for name, mod in [("relu", nn.ReLU()), ("leaky_relu", nn.LeakyReLU(0.2)), ("gelu", nn.GELU()),
                  ("gelu_tanh", nn.GELU(approximate="tanh")), ("silu", nn.SiLU()), ("sigmoid", nn.Sigmoid()),
                  ("tanh", nn.Tanh()), ("softmax", nn.Softmax(dim=1)), ("log_softmax", nn.LogSoftmax(dim=1)),
                  ("softplus", nn.Softplus(beta=2, threshold=5)), ("elu", nn.ELU(alpha=0.7))]:
    run_layer(name, mod, [act_x])


# ---- losses ----
def run_loss(name, fn, x, target, extra=None):
    x = x.clone().requires_grad_()
    put(f"{name}.x", x)
    put(f"{name}.t", target)
    for k, v in (extra or {}).items():
        put(f"{name}.{k}", v)
    y = fn(x, target)
    gy = torch.randn_like(y) if y.dim() > 0 else torch.ones(())
    put(f"{name}.y", y)
    put(f"{name}.gy", gy)
    (y * gy).sum().backward()
    put(f"{name}.gx", x.grad)


logits = spread(6, 4)
tgt = torch.tensor([0, 3, 1, 1, 2, 3])
w4 = torch.tensor([0.5, 2.0, 1.0, 1.5])
run_loss("ce", lambda x, t: F.cross_entropy(x, t), logits, tgt)
run_loss("ce_weight_ignore", lambda x, t: F.cross_entropy(x, t, weight=w4, ignore_index=1), logits, tgt,
         {"w": w4})
run_loss("ce_smooth", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1, ignore_index=1), logits, tgt)
run_loss("ce_smooth_weight", lambda x, t: F.cross_entropy(x, t, weight=w4, ignore_index=1, label_smoothing=0.2),
         logits, tgt, {"w": w4})
run_loss("ce_smooth_weight_sum",
         lambda x, t: F.cross_entropy(x, t, weight=w4, label_smoothing=0.2, reduction="sum"), logits, tgt, {"w": w4})
run_loss("ce_none", lambda x, t: F.cross_entropy(x, t, weight=w4, ignore_index=3, reduction="none"), logits, tgt,
         {"w": w4})
run_loss("ce_sum", lambda x, t: F.cross_entropy(x, t, reduction="sum"), logits * 40, tgt)
probs = torch.softmax(spread(6, 4), 1)
run_loss("ce_prob", lambda x, t: F.cross_entropy(x, t, weight=w4, label_smoothing=0.2), logits, probs, {"w": w4})
run_loss("ce_prob_none", lambda x, t: F.cross_entropy(x, t, reduction="none"), logits, probs)
run_loss("ce_nd", lambda x, t: F.cross_entropy(x, t, weight=w4[:3]), spread(2, 3, 4), torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]]),
         {"w": w4[:3]})
run_loss("ce_1d", lambda x, t: F.cross_entropy(x, t), spread(4), torch.tensor(2))
run_loss("nll", lambda x, t: F.nll_loss(x, t, weight=w4, ignore_index=0), torch.log_softmax(logits, 1), tgt, {"w": w4})
p = torch.sigmoid(spread(3, 4))
bt = (torch.rand(3, 4) > 0.5).double()
bw = torch.rand(3, 4) + 0.5
run_loss("bce", lambda x, t: F.binary_cross_entropy(x, t, weight=bw), p, bt, {"w": bw})
big = spread(3, 4) * 10  # includes |x| > 30: the naive formula would overflow
pw = torch.tensor([0.5, 1.0, 2.0, 3.0])
run_loss("bce_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t, weight=bw, pos_weight=pw), big, bt,
         {"w": bw, "pw": pw})
run_loss("bce_logits_plain", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="sum"), big, bt)
a, b = spread(3, 5), spread(3, 5)
run_loss("mse", lambda x, t: F.mse_loss(x, t), a, b)
run_loss("l1", lambda x, t: F.l1_loss(x, t, reduction="sum"), a, b)
run_loss("smooth_l1", lambda x, t: F.smooth_l1_loss(x, t, beta=2.0), a, b)
run_loss("huber", lambda x, t: F.huber_loss(x, t, reduction="none", delta=1.5), a, b)
lp = torch.log_softmax(spread(4, 5), 1)
q = torch.softmax(spread(4, 5), 1)
q[0, 0] = 0.0  # 0 * log 0 = 0
run_loss("kl_batchmean", lambda x, t: F.kl_div(x, t, reduction="batchmean"), lp, q)
run_loss("kl_log_target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True), lp, torch.log_softmax(spread(4, 5), 1))
run_loss("kl_mean", lambda x, t: F.kl_div(x, t), lp, q)

# ---- reprs and state_dict keys ----
models = OrderedDict()
models["mlp"] = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
models["seqbn"] = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
models["nested"] = nn.Sequential(OrderedDict([
    ("features", nn.Sequential(nn.Linear(3, 4), nn.GELU(approximate="tanh"))),
    ("norm", nn.LayerNorm(4)),
    ("heads", nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 2, bias=False)])),
    ("extra", nn.ModuleDict(OrderedDict([("emb", nn.Embedding(10, 3, padding_idx=0)), ("gn", nn.GroupNorm(2, 4))]))),
]))
models["misc"] = nn.Sequential(
    nn.Bilinear(3, 4, 5), nn.Identity(), nn.Flatten(), nn.Unflatten(1, (2, 5)), nn.Dropout2d(), nn.Dropout(p=0.25),
    nn.BatchNorm2d(16, momentum=None), nn.BatchNorm1d(5, eps=1e-3, affine=False, track_running_stats=False),
    nn.LeakyReLU(), nn.LeakyReLU(0.2), nn.GELU(), nn.SiLU(), nn.Sigmoid(), nn.Tanh(), nn.Softmax(dim=1),
    nn.LogSoftmax(dim=-1), nn.Softplus(), nn.ELU(), nn.ELU(alpha=0.5), nn.LayerNorm(10),
    nn.LayerNorm((4, 5), eps=1e-6, elementwise_affine=False), nn.Embedding(10, 3), nn.GroupNorm(3, 6, affine=False))
models["losses"] = nn.ModuleList([nn.CrossEntropyLoss(), nn.NLLLoss(), nn.BCELoss(), nn.BCEWithLogitsLoss(),
                                  nn.MSELoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.HuberLoss(), nn.KLDivLoss()])
models["weighted_loss"] = nn.CrossEntropyLoss(weight=torch.ones(3))
for k, m in models.items():
    META[f"repr.{k}"] = repr(m)
    META[f"keys.{k}"] = ",".join(m.state_dict().keys())
    META[f"params.{k}"] = ",".join(n for n, _ in m.named_parameters())
    META[f"modules.{k}"] = ",".join(n for n, _ in m.named_modules())

# ---- init: statistics / exact values ----
META["gain.tanh"] = repr(nn.init.calculate_gain("tanh"))
META["gain.leaky_relu"] = repr(nn.init.calculate_gain("leaky_relu", 0.2))
META["gain.relu"] = repr(nn.init.calculate_gain("relu"))


# ---- write safetensors ----
def write(path):
    names = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64", torch.bool: "BOOL"}
    header = OrderedDict()
    header["__metadata__"] = META
    blobs = []
    off = 0
    for k, t in T.items():
        t = t.contiguous()
        data = t.numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_reference.safetensors"))
print(len(T), "tensors")

# Generates tests/data/attention_reference.safetensors: weights, inputs,
# masks, outputs, attention weights and gradients of MultiheadAttention,
# TransformerEncoderLayer and TransformerEncoder from PyTorch 1.13 (float64),
# plus reprs and parameter names in the metadata block. Run with
# /usr/bin/python3; the file is committed, so tests never need PyTorch.
#
# Every module runs in train mode with dropout=0.0: that disables dropout
# and keeps torch 1.13 off its eval-only "fast path" (the fused
# _transformer_encoder_layer_fwd / _native_multi_head_attention kernels), so
# the reference is the plain composite path Ember mirrors.
import json
import os
import struct
from collections import OrderedDict

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
T = OrderedDict()
META = OrderedDict()


def put(name, t):
    T[name] = t.detach().clone().contiguous()


def perturb(module):
    """Random non-zero biases and norm affines, so every gradient is exercised."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn_like(p) * 0.2)


def store_params(name, module):
    for k, p in module.named_parameters():
        put(f"{name}.p.{k}", p)


def store_grads(name, module, xs):
    for i, x in enumerate(xs):
        if x.grad is not None:
            put(f"{name}.gx{i}", x.grad)
    for k, p in module.named_parameters():
        put(f"{name}.g.{k}", p.grad)


def causal(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)


def run_mha(name, m, inputs, self_attention=False, **kw):
    """inputs: [q, k, v] (or [x] for self-attention: q = k = v = x).
    Backprops (y * gy).sum() + (w * gw).sum()."""
    perturb(m)
    m.train()
    xs = [x.clone().requires_grad_() for x in inputs]
    for i, x in enumerate(xs):
        put(f"{name}.x{i}", x)
    store_params(name, m)
    for k in ("key_padding_mask", "attn_mask"):
        if kw.get(k) is not None:
            put(f"{name}.{k}", kw[k])
    q, k, v = (xs[0], xs[0], xs[0]) if self_attention else xs
    y, w = m(q, k, v, **kw)
    gy = torch.randn_like(y)
    put(f"{name}.y", y)
    put(f"{name}.gy", gy)
    loss = (y * gy).sum()
    if w is not None:
        gw = torch.randn_like(w)
        put(f"{name}.w", w)
        put(f"{name}.gw", gw)
        loss = loss + (w * gw).sum()
    loss.backward()
    store_grads(name, m, xs)


def run_encoder(name, m, src, mask=None, kpm=None):
    perturb(m)
    m.train()
    x = src.clone().requires_grad_()
    put(f"{name}.x0", x)
    store_params(name, m)
    if mask is not None:
        put(f"{name}.attn_mask", mask)
    if kpm is not None:
        put(f"{name}.key_padding_mask", kpm)
    if isinstance(m, nn.TransformerEncoder):
        y = m(x, mask=mask, src_key_padding_mask=kpm)
    else:
        y = m(x, src_mask=mask, src_key_padding_mask=kpm)
    gy = torch.randn_like(y)
    put(f"{name}.y", y)
    put(f"{name}.gy", gy)
    (y * gy).sum().backward()
    store_grads(name, m, [x])


E, H, L, S, N = 8, 2, 5, 4, 3

# ---- MultiheadAttention ----
# Self-attention, sequence first [L, N, E].
run_mha("mha_self", nn.MultiheadAttention(E, H), [torch.randn(L, N, E)], self_attention=True)
# Cross-attention, batch first, key padding (no row fully masked).
kpm = torch.tensor([[False, False, False, False], [False, False, True, True], [False, True, False, True]])
run_mha("mha_cross_bf", nn.MultiheadAttention(E, H, batch_first=True),
        [torch.randn(N, L, E), torch.randn(N, S, E), torch.randn(N, S, E)], key_padding_mask=kpm)
# Causal bool mask together with key padding (merged with logical_or).
kpm_l = torch.tensor([[False] * L, [False] * (L - 2) + [True] * 2, [False] * (L - 1) + [True]])
run_mha("mha_causal", nn.MultiheadAttention(E, H), [torch.randn(L, N, E)], self_attention=True,
        attn_mask=causal(L), key_padding_mask=kpm_l)
# Float additive 3-D mask [N * H, L, S] with bool key padding (masked_fill -inf).
run_mha("mha_float3d", nn.MultiheadAttention(E, H, batch_first=True),
        [torch.randn(N, L, E), torch.randn(N, S, E), torch.randn(N, S, E)],
        attn_mask=torch.randn(N * H, L, S), key_padding_mask=kpm)
# Float 2-D mask, no bias, per-head weights.
run_mha("mha_nobias_perhead", nn.MultiheadAttention(E, H, bias=False),
        [torch.randn(L, N, E), torch.randn(S, N, E), torch.randn(S, N, E)],
        attn_mask=torch.randn(L, S), average_attn_weights=False)
# need_weights=False: output only.
run_mha("mha_noweights", nn.MultiheadAttention(E, 4, batch_first=True), [torch.randn(N, L, E)],
        self_attention=True, need_weights=False)
# Unbatched input [L, E].
run_mha("mha_unbatched", nn.MultiheadAttention(E, H), [torch.randn(L, E), torch.randn(S, E), torch.randn(S, E)],
        key_padding_mask=torch.tensor([False, True, False, False]))
# A fully masked row: PyTorch 1.13 gives NaN (softmax over all -inf).
m = nn.MultiheadAttention(E, H, batch_first=True)
perturb(m)
x = torch.randn(2, 3, E)
store_params("mha_nan", m)
put("mha_nan.x0", x)
nan_kpm = torch.tensor([[False, False, True], [True, True, True]])
put("mha_nan.key_padding_mask", nan_kpm)
y, w = m(x, x, x, key_padding_mask=nan_kpm)
put("mha_nan.y", y)
put("mha_nan.w", w)

# ---- TransformerEncoderLayer / TransformerEncoder (train mode, dropout 0) ----
D, NH, FF = 8, 2, 16
kpm_enc = torch.tensor([[False] * L, [False] * 3 + [True] * 2, [False] * 4 + [True]])
run_encoder("tel_relu_post", nn.TransformerEncoderLayer(D, NH, FF, 0.0), torch.randn(L, N, D), kpm=kpm_enc)
run_encoder("tel_gelu_pre_bf",
            nn.TransformerEncoderLayer(D, NH, FF, 0.0, activation="gelu", batch_first=True, norm_first=True),
            torch.randn(N, L, D), mask=causal(L), kpm=kpm_enc)
run_encoder("tel_gelu_post_bf", nn.TransformerEncoderLayer(D, NH, FF, 0.0, "gelu", batch_first=True),
            torch.randn(N, L, D), mask=torch.randn(L, L))
run_encoder("tel_relu_pre", nn.TransformerEncoderLayer(D, NH, FF, 0.0, layer_norm_eps=1e-6, norm_first=True),
            torch.randn(L, N, D), kpm=kpm_enc)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NH, FF, 0.0, batch_first=True), 2, norm=nn.LayerNorm(D))
run_encoder("encoder", enc, torch.randn(N, L, D), mask=causal(L), kpm=kpm_enc)

# ---- reprs and names ----
models = OrderedDict()
models["mha"] = nn.MultiheadAttention(E, H, dropout=0.1)
models["mha_nobias"] = nn.MultiheadAttention(E, H, bias=False, batch_first=True)
models["tel"] = nn.TransformerEncoderLayer(D, NH, FF, 0.1, activation="gelu", layer_norm_eps=1e-6)
models["encoder"] = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NH, FF, 0.0, norm_first=True), 2,
                                          norm=nn.LayerNorm(D))
models["encoder_nonorm"] = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NH), 3)
for k, m in models.items():
    META[f"repr.{k}"] = repr(m)
    META[f"keys.{k}"] = ",".join(m.state_dict().keys())
    META[f"params.{k}"] = ",".join(n for n, _ in m.named_parameters())
    META[f"modules.{k}"] = ",".join(n for n, _ in m.named_modules())


# ---- write safetensors (json + struct, like gen_nn.py) ----
def write(path):
    names = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64", torch.bool: "BOOL"}
    header = OrderedDict()
    header["__metadata__"] = META
    blobs = []
    off = 0
    for k, t in T.items():
        data = t.contiguous().numpy().tobytes()
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


write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_reference.safetensors"))
print(len(T), "tensors")

# Generates tests/data/rnn_reference.safetensors: inputs, initial states,
# weights, outputs, final states and gradients of nn.RNN / LSTM / GRU from
# PyTorch 1.13 (float64), dense and packed (pack_padded_sequence with
# enforce_sorted=False), plus reprs and named_parameters in the metadata.
# Run with /usr/bin/python3; the file is committed, so tests never need PyTorch.
import json
import os
import struct
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
T = OrderedDict()
META = OrderedDict()


def put(name, t):
    T[name] = t.detach().clone().contiguous()


def run(name, module, seq, batch, lengths=None, with_state=True):
    """Stores x, states, params, outputs and the gradients of a random
    linear functional of (output, h_n[, c_n])."""
    is_lstm = isinstance(module, nn.LSTM)
    feat = module.input_size
    shape = (batch, seq, feat) if module.batch_first else (seq, batch, feat)
    x = torch.randn(*shape).requires_grad_()
    dirs = 2 if module.bidirectional else 1
    hshape = (module.num_layers * dirs, batch, module.hidden_size)
    put(f"{name}.x", x)
    hx = None
    if with_state:
        h0 = torch.randn(*hshape).requires_grad_()
        put(f"{name}.h0", h0)
        hx = h0
        if is_lstm:
            c0 = torch.randn(*hshape).requires_grad_()
            put(f"{name}.c0", c0)
            hx = (h0, c0)
    with torch.no_grad():
        for k, p in module.named_parameters():
            p.uniform_(-0.8, 0.8)  # wider than the default init: exercises saturation
    for k, p in module.named_parameters():
        put(f"{name}.p.{k}", p)
    if lengths is not None:
        lengths = torch.tensor(lengths, dtype=torch.int64)
        put(f"{name}.lengths", lengths)
        packed = pack_padded_sequence(x, lengths, batch_first=module.batch_first, enforce_sorted=False)
        out_p, state = module(packed, hx)
        y, _ = pad_packed_sequence(out_p, batch_first=module.batch_first, total_length=seq)
    else:
        y, state = module(x, hx)
    hn, cn = state if is_lstm else (state, None)
    put(f"{name}.y", y)
    put(f"{name}.hn", hn)
    gy, ghn = torch.randn_like(y), torch.randn_like(hn)
    put(f"{name}.gy", gy)
    put(f"{name}.ghn", ghn)
    loss = (y * gy).sum() + (hn * ghn).sum()
    if cn is not None:
        put(f"{name}.cn", cn)
        gcn = torch.randn_like(cn)
        put(f"{name}.gcn", gcn)
        loss = loss + (cn * gcn).sum()
    loss.backward()
    put(f"{name}.gx", x.grad)
    if with_state:
        put(f"{name}.gh0", h0.grad)
        if is_lstm:
            put(f"{name}.gc0", c0.grad)
    for k, p in module.named_parameters():
        put(f"{name}.g.{k}", p.grad)


# ---- dense (the configurations are repeated in tests/nn/test_rnn.cpp) ----
run("rnn_tanh", nn.RNN(3, 4, num_layers=2, bidirectional=True), 5, 3)
run("rnn_relu_bf", nn.RNN(3, 4, num_layers=2, nonlinearity="relu", batch_first=True), 5, 3, with_state=False)
run("lstm", nn.LSTM(3, 4, num_layers=2, bidirectional=True), 5, 3)
run("lstm_bf", nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True), 4, 2, with_state=False)
run("gru", nn.GRU(3, 4, num_layers=2, bidirectional=True), 5, 3)
run("gru_bf_nobias", nn.GRU(3, 4, batch_first=True, bias=False), 6, 2)

# ---- packed: unsorted lengths, one of them full, one of them 1 ----
LENS = [3, 6, 1, 4]
run("rnn_packed", nn.RNN(3, 4, num_layers=2, bidirectional=True), 6, 4, LENS)
run("lstm_packed", nn.LSTM(3, 4, num_layers=2, bidirectional=True), 6, 4, LENS)
run("lstm_packed_bf", nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True), 6, 4, LENS,
    with_state=False)
run("gru_packed", nn.GRU(3, 4, num_layers=2, bidirectional=True), 6, 4, LENS)
run("gru_packed_bf", nn.GRU(3, 4, batch_first=True), 6, 4, LENS)

# ---- reprs and parameter names / shapes ----
for k, m in [("rnn", nn.RNN(10, 20)),
             ("rnn_relu", nn.RNN(10, 20, nonlinearity="relu")),
             ("lstm", nn.LSTM(64, 128, batch_first=True)),
             ("lstm_full", nn.LSTM(5, 7, num_layers=3, bias=False, batch_first=True, dropout=0.25,
                                   bidirectional=True)),
             ("gru", nn.GRU(5, 7, num_layers=2, bidirectional=True)),
             ("gru_dropout", nn.GRU(5, 7, num_layers=2, dropout=0.5))]:
    META[f"repr.{k}"] = repr(m)
    META[f"params.{k}"] = ";".join(f"{n}:{'x'.join(str(s) for s in p.shape)}" for n, p in m.named_parameters())


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


write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_reference.safetensors"))
print(len(T), "tensors")

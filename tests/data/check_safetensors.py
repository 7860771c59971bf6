# Reads a safetensors file written by Ember with an independent json+struct
# parser (the safetensors package is not installed here) and, optionally,
# loads it into the PyTorch model of the same architecture with strict=True.
#   /usr/bin/python3 tests/data/check_safetensors.py FILE [nested]
import json
import struct
import sys
from collections import OrderedDict

import torch
import torch.nn as nn

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}


def read(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    out = OrderedDict()
    end = 0
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, f = e["data_offsets"]
        assert b == end, f"{name}: gap or overlap"
        end = f
        buf = bytearray(data[b:f])
        t = torch.frombuffer(buf, dtype=DTYPES[e["dtype"]]) if buf else torch.empty(0, dtype=DTYPES[e["dtype"]])
        out[name] = t.reshape(e["shape"])
    assert end == len(data), "trailing bytes"
    return out, meta


tensors, meta = read(sys.argv[1])
print(len(tensors), "tensors, metadata", meta)
if len(sys.argv) > 2 and sys.argv[2] == "nested":
    model = nn.Sequential(OrderedDict([
        ("features", nn.Sequential(nn.Linear(3, 4), nn.GELU(approximate="tanh"))),
        ("norm", nn.LayerNorm(4)),
        ("heads", nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 2, bias=False)])),
        ("extra", nn.ModuleDict(OrderedDict([("emb", nn.Embedding(10, 3, padding_idx=0)), ("gn", nn.GroupNorm(2, 4))]))),
    ]))
    model.load_state_dict(tensors, strict=True)
    assert torch.equal(model.state_dict()["features.0.weight"], tensors["features.0.weight"])
    print("PyTorch load_state_dict(strict=True): OK")

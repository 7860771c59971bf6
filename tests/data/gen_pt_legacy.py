"""Writes tests/data/pytorch/*_legacy.pt: torch.save's legacy format (PyTorch
0.4-1.5, and later versions with _use_new_zipfile_serialization=False), with
Debian's python3-torch (run once with /usr/bin/python3; outputs committed).
checkpoint_legacy.pt holds the same object as gen_pt.py's checkpoint.pt, so
tests/io/test_pytorch.cpp checks both files with the same values; plus a
malicious legacy pickle that io::load_pytorch must refuse."""
import collections, os, pickle, struct
import torch

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch")
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.25)
    lin.bias.copy_(torch.tensor([-1.0, 2.0]))
base = torch.arange(12, dtype=torch.float64)
ckpt = {  # as in gen_pt.py
    "model": lin.state_dict(),
    "optimizer": {"state": {0: {"step": 10, "exp_avg": torch.full((2,), 0.5)}},
                  "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "params": [0, 1]}]},
    "epoch": 3, "name": "cnn", "flag": True, "nothing": None, "big": 2**40, "neg": -7,
    "dtypes": {
        "f16": torch.tensor([0.5, -1.0], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -2.0], dtype=torch.bfloat16),
        "i64": torch.tensor([2**62, -5]),
        "i32": torch.tensor([7, -8], dtype=torch.int32),
        "i16": torch.tensor([-32768, 32767], dtype=torch.int16),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False]),
    },
    "views": {"whole": base, "row": base.view(3, 4)[1], "col": base.view(3, 4)[:, 2], "t": base.view(3, 4).t()},
    "param": torch.nn.Parameter(torch.tensor([1.5, 2.5])),
    "scalar": torch.tensor(4.0),
    "empty": torch.zeros(0, 3),
}
torch.save(ckpt, os.path.join(out, "checkpoint_legacy.pt"), _use_new_zipfile_serialization=False)
sd = collections.OrderedDict(("module." + k, v) for k, v in lin.state_dict().items())
torch.save(sd, os.path.join(out, "linear_module_legacy.pt"), _use_new_zipfile_serialization=False)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/ember_pwned",))


# The legacy headers, then a pickle that calls os.system.
with open(os.path.join(out, "evil_legacy.pt"), "wb") as f:
    for header in (0x1950a86a20f9469cfc6c, 1001, {"protocol_version": 1001, "little_endian": True}):
        pickle.dump(header, f, protocol=2)
    pickle.dump(Evil(), f, protocol=2)
    pickle.dump([], f, protocol=2)

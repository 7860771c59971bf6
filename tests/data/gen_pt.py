"""Writes tests/data/pytorch/*.pt with Debian's python3-torch (run once with
/usr/bin/python3; outputs committed) plus hand-made malicious archives that
io::load_pytorch must refuse. tests/io/test_pytorch.cpp states the values."""
import collections, io, os, pickle, zipfile
import torch

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch")
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)

# A small model's state dict, saved as a DataParallel one ("module." prefix).
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.25)
    lin.bias.copy_(torch.tensor([-1.0, 2.0]))
sd = collections.OrderedDict(("module." + k, v) for k, v in lin.state_dict().items())
torch.save(sd, os.path.join(out, "linear_module.pt"))

# A training checkpoint: nested dicts, numbers, strings, every dtype,
# views sharing one storage, a Parameter, a 0-d and an empty tensor.
base = torch.arange(12, dtype=torch.float64)
ckpt = {
    "model": lin.state_dict(),
    "optimizer": {"state": {0: {"step": 10, "exp_avg": torch.full((2,), 0.5)}},
                  "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "params": [0, 1]}]},
    "epoch": 3,
    "name": "cnn",
    "flag": True,
    "nothing": None,
    "big": 2**40,
    "neg": -7,
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
torch.save(ckpt, os.path.join(out, "checkpoint.pt"))

# ---- malicious archives: a real archive's layout with data.pkl replaced ----
def archive(name, pkl, storages=None):
    with zipfile.ZipFile(os.path.join(out, name), "w") as z:
        z.writestr("archive/data.pkl", pkl)
        for k, v in (storages or {}).items():
            z.writestr("archive/data/" + k, v)

class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/ember_pwned",))
archive("evil_os_system.pt", pickle.dumps(Evil(), protocol=2))
archive("deep_nesting.pt", b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b".")
archive("huge_memo.pt", b"\x80\x02N" + b"j\xff\xff\xff\x7f" + b".")
# A float tensor of 4 elements whose storage holds only 2.
f = io.BytesIO()
t = torch.zeros(2)
torch.save(t, f)
zin = zipfile.ZipFile(io.BytesIO(f.getvalue()))
pkl = zin.read([n for n in zin.namelist() if n.endswith("data.pkl")][0])
# size (2,) -> (4,): BININT1 2 inside the size tuple is the byte after 'K'.
pkl_bad = pkl.replace(b"K\x02\x85", b"K\x04\x85")
assert pkl_bad != pkl
archive("storage_out_of_range.pt", pkl_bad, {"0": bytes(8)})

# Generates tests/data/models_reference.safetensors: the PyTorch 1.13 twins
# of the zoo's models (include/ember/train/models.h) at tiny sizes, in
# float64: their state dicts, a fixed input, the output, and for some the
# gradients; plus state_dict keys and parameter counts of full-size models
# in the metadata. Weights and inputs are rounded to float32 before use and
# stored as F32 (exact in float64), which halves the file.
# Run with /usr/bin/python3; the file is committed, so tests never need PyTorch.
import json
import os
import struct
import sys
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

sys.path.insert(0, "/work/shared/anchors")

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
T = OrderedDict()
META = OrderedDict()


def put(name, t, f32=False):
    t = t.detach().clone().contiguous()
    T[name] = t.float() if f32 else t


# ---- the twins (configurations repeated in tests/train/test_models.cpp) ----

class MLP(nn.Module):
    def __init__(self, in_features, hidden, out_features, dropout=0.0):
        super().__init__()
        layers, prev = [], in_features
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.ReLU()] + ([nn.Dropout(dropout)] if dropout > 0 else [])
            prev = h
        layers.append(nn.Linear(prev, out_features))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x.flatten(1))


def cnn(in_ch, h, w, classes, channels=(32, 64), hidden=128, dropout=0.25):
    mods, prev = [], in_ch
    for c in channels:
        mods += [nn.Conv2d(prev, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2)]
        prev = c
    s = 2 ** len(channels)
    mods += [nn.Flatten(), nn.Linear(prev * (h // s) * (w // s), hidden), nn.ReLU(), nn.Dropout(dropout),
             nn.Linear(hidden, classes)]
    return nn.Sequential(*mods)


class BasicBlock(nn.Module):  # torchvision.models.resnet.BasicBlock
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (self.downsample(x) if self.downsample is not None else x))


class ResNet(nn.Module):  # torchvision's, CIFAR stem: 3x3 stride-1 conv1, no maxpool
    # (ReLU() without inplace=True in both classes: Ember's ReLU has no such flag, and reprs are compared)
    # depth 6n + 2: He et al. (2016) 4.2's CIFAR nets, three stages of n
    # blocks (projection shortcuts, option B), width 16.
    def __init__(self, depth=18, in_channels=3, num_classes=10, width=None):
        super().__init__()
        cifar = depth not in (18, 34)
        blocks = [(depth - 2) // 6] * 3 if cifar else {18: [2, 2, 2, 2], 34: [3, 4, 6, 3]}[depth]
        width = width or (16 if cifar else 64)
        self.conv1 = nn.Conv2d(in_channels, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.inplanes = width
        self.layer1 = self._make_layer(width, blocks[0], 1)
        self.layer2 = self._make_layer(2 * width, blocks[1], 2)
        self.layer3 = self._make_layer(4 * width, blocks[2], 2)
        self.layer4 = None if cifar else self._make_layer(8 * width, blocks[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)

    def _make_layer(self, planes, n, stride):
        layers = []
        for i in range(n):
            layers.append(BasicBlock(self.inplanes, planes, stride if i == 0 else 1))
            self.inplanes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        if self.layer4 is not None:
            x = self.layer4(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


class LSTMClassifier(nn.Module):
    def __init__(self, vocab, embed_dim, padding_idx, cell, hidden, num_layers, bidirectional, dropout, classes):
        super().__init__()
        self.bidirectional = bidirectional
        self.embedding = nn.Embedding(vocab, embed_dim, padding_idx=padding_idx)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(embed_dim, hidden, num_layers=num_layers, batch_first=True,
                       dropout=dropout if num_layers > 1 else 0.0, bidirectional=bidirectional)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        _, h = self.rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        if isinstance(h, tuple):
            h = h[0]
        feat = torch.cat([h[-2], h[-1]], 1) if self.bidirectional else h[-1]
        return self.fc(self.dropout(feat))


class TransformerClassifier(nn.Module):
    def __init__(self, vocab, d_model, padding_idx, max_len, num_layers, nhead, ff, dropout, activation, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model, padding_idx=padding_idx)
        self.pos_embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, ff, dropout, activation, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, classes)

    def forward(self, tokens, lengths):
        pos = torch.arange(tokens.shape[1])
        x = self.dropout(self.embedding(tokens) + self.pos_embedding(pos))
        pad = pos[None, :] >= lengths[:, None]
        y = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).to(y.dtype).unsqueeze(2)
        return self.fc((y * keep).sum(1) / lengths.to(y.dtype).unsqueeze(1))


# ---- reference runs ----

def prepare(name, model):
    """Perturbs parameters (all but embedding tables, whose padding row
    stays zero) and BatchNorm running stats, rounds everything to float32,
    and stores the state dict as <name>.s.<key>."""
    with torch.no_grad():
        for k, p in model.named_parameters():
            if not k.endswith("embedding.weight"):
                p.add_(0.1 * torch.randn_like(p))
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(3)
        for k, v in model.state_dict().items():
            if v.is_floating_point():
                v.copy_(v.float().double())
    for k, v in model.state_dict().items():
        put(f"{name}.s.{k}", v, f32=v.is_floating_point())
    META[f"{name}.keys"] = ",".join(model.state_dict().keys())
    META[f"{name}.numel"] = str(sum(p.numel() for p in model.parameters()))
    META[f"{name}.repr"] = repr(model)


def rand_input(*shape):
    return torch.randn(*shape).float().double()


# MLP: input [4, 3, 4] flattened to 12 features, eval mode (dropout off).
m = MLP(12, [8, 6], 5, dropout=0.1)
prepare("mlp", m)
m.eval()
x = rand_input(4, 3, 4)
put("mlp.x", x, f32=True)
put("mlp.y", m(x))

# CNN: 2 channels, 8x12, channels (4, 6), hidden 10, 3 classes, eval mode.
m = cnn(2, 8, 12, 3, channels=(4, 6), hidden=10)
prepare("cnn", m)
m.eval()
x = rand_input(3, 2, 8, 12)
put("cnn.x", x, f32=True)
put("cnn.y", m(x))


# A ResNet of `depth`, width 2, 3 channels, 8x8, 5 classes, in TRAIN mode
# (batch statistics, running-stat updates): output, input gradient, and the
# running stats `stats` after.
def resnet_train_run(name, depth, stats):
    m = ResNet(depth, 3, 5, width=2)
    prepare(name, m)
    m.train()
    x = rand_input(3, 3, 8, 8).requires_grad_()
    put(f"{name}.x", x, f32=True)
    y = m(x)
    put(f"{name}.y", y)
    gy = rand_input(*y.shape)
    put(f"{name}.gy", gy, f32=True)
    (y * gy).sum().backward()
    put(f"{name}.gx", x.grad)
    for k in stats:
        put(f"{name}.after.{k}", m.state_dict()[k])


resnet_train_run("resnet", 18, ["bn1.running_mean", "bn1.running_var", "layer2.0.downsample.1.running_var",
                                "layer4.1.bn2.running_mean"])

# Text: vocab 11, padding_idx 0, unsorted lengths with one full and one of 1.
TOKENS_LEN = torch.tensor([3, 5, 1, 4], dtype=torch.int64)


def tokens_for(lengths, steps, vocab):
    t = torch.randint(1, vocab, (len(lengths), steps))
    for b, n in enumerate(lengths.tolist()):
        t[b, n:] = 0
    return t


def text_run(name, model, with_grads):
    prepare(name, model)
    model.eval()
    tok = tokens_for(TOKENS_LEN, 5, 11)
    put(f"{name}.tokens", tok)
    put(f"{name}.lengths", TOKENS_LEN)
    y = model(tok, TOKENS_LEN)
    put(f"{name}.y", y)
    if with_grads:
        gy = rand_input(*y.shape)
        put(f"{name}.gy", gy, f32=True)
        (y * gy).sum().backward()
        for k, p in model.named_parameters():
            put(f"{name}.g.{k}", p.grad)


text_run("lstm", LSTMClassifier(11, 6, 0, "lstm", 5, 2, True, 0.2, 3), with_grads=True)
text_run("gru", LSTMClassifier(11, 6, 0, "gru", 5, 1, False, 0.0, 3), with_grads=False)
text_run("transformer", TransformerClassifier(11, 8, 0, 16, 2, 2, 12, 0.1, "relu", 3), with_grads=True)

# ---- full-size models: state_dict keys and parameter counts only ----
from w1_fmnist_cnn import make_model  # noqa: E402  (the W1 anchor itself)

for name, model in [("w1", make_model()), ("resnet18", ResNet(18, 3, 10)),
                    ("mlp_default", MLP(784, [256, 256], 10))]:
    META[f"{name}.keys"] = ",".join(model.state_dict().keys())
    META[f"{name}.numel"] = str(sum(p.numel() for p in model.parameters()))
    META[f"{name}.repr"] = repr(model)
META["resnet34.keys"] = ",".join(ResNet(34, 3, 10).state_dict().keys())
META["resnet34.numel"] = str(sum(p.numel() for p in ResNet(34, 3, 10).parameters()))

# ResNet-20 (6n + 2, three stages): keys, count and repr; appended last so
# the tensors above keep their random draws.
META["resnet20.keys"] = ",".join(ResNet(20, 3, 10).state_dict().keys())
META["resnet20.numel"] = str(sum(p.numel() for p in ResNet(20, 3, 10).parameters()))
META["resnet20.repr"] = repr(ResNet(20, 3, 10))
# ResNet-8: one block per stage, no layer4.
resnet_train_run("resnet8", 8, ["bn1.running_var", "layer3.0.downsample.1.running_mean", "layer3.0.bn2.running_var"])

# ---- write safetensors ----
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


write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "models_reference.safetensors"))
print(len(T), "tensors")

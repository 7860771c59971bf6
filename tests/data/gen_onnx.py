#!/usr/bin/env python3
"""Writes the ONNX test models of tests/onnx/test_import.cpp (issue 16).

Run with Debian's PyTorch once; the outputs are committed (the build and the
tests never need Python):

    /usr/bin/python3 tests/data/gen_onnx.py

For each model NAME it writes tests/data/onnx/NAME.onnx (torch.onnx.export,
PyTorch 1.13, dynamic batch axis), NAME.in0.npy [, NAME.in1.npy] and
NAME.out.npy (PyTorch's output in eval mode), and checks every file with
onnx.checker.check_model(full_check=True).

resnet18 is torchvision's resnet18 topology (BasicBlock, [2, 2, 2, 2], its
stem, max pooling, adaptive average pooling and fc) at 1/8 of the widths
(8-16-32-64 channels instead of 64-128-256-512): the full model is ~45 MB,
this one ~0.7 MB with the same ops. Weights and BatchNorm statistics are
random (seeded).
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")


def randomize_bn(model):
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        # BatchNorm1d after a Linear stays a BatchNormalization node (PyTorch
        # folds it into the weights only after a Conv).
        self.net = nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 8), nn.Tanh(),
                                 nn.Linear(8, 8), nn.Sigmoid(), nn.Linear(8, 3))

    def forward(self, x):
        return torch.log_softmax(self.net(x), dim=1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, stride=1, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.AvgPool2d(2))
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        x = self.features(x)
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


def resnet18_narrow():
    from torchvision.models.resnet import BasicBlock
    m = torchvision.models.resnet18(weights=None, num_classes=10)
    m.inplanes = 8
    m.conv1 = nn.Conv2d(3, 8, kernel_size=7, stride=2, padding=3, bias=False)
    m.bn1 = nn.BatchNorm2d(8)
    m.layer1 = m._make_layer(BasicBlock, 8, 2)
    m.layer2 = m._make_layer(BasicBlock, 16, 2, stride=2)
    m.layer3 = m._make_layer(BasicBlock, 32, 2, stride=2)
    m.layer4 = m._make_layer(BasicBlock, 64, 2, stride=2)
    m.fc = nn.Linear(64, 10)
    randomize_bn(m)
    return m


class RNNClassifier(nn.Module):
    def __init__(self, cell):
        super().__init__()
        kind = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = kind(6, 5, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(10, 3)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1, :])


class TransformerClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 16)
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.fc = nn.Linear(16, 3)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens))
        return self.fc(h.mean(dim=1))


def export(name, model, inputs, opset, input_names, dynamic):
    model.eval()
    path = os.path.join(OUT, name + ".onnx")
    axes = {n: dynamic.get(n, {0: "batch"}) for n in input_names}
    axes["output"] = {0: "batch"}
    # Exported with grad enabled: PyTorch 1.13's TransformerEncoderLayer takes
    # its fused fast path (no ONNX form) under no_grad in eval mode.
    with torch.no_grad():
        out = model(*inputs)
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, input_names=input_names,
                      output_names=["output"], dynamic_axes=axes, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    for i, x in enumerate(inputs):
        np.save(os.path.join(OUT, f"{name}.in{i}.npy"), x.numpy())
    np.save(os.path.join(OUT, name + ".out.npy"), out.numpy())
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{name}: opset {opset}, {os.path.getsize(path)} bytes, ops {' '.join(ops)}")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(16)
    mlp = MLP()
    randomize_bn(mlp)
    export("mlp", mlp, [torch.randn(4, 12)], 17, ["input"], {})
    export("mlp_opset13", mlp, [torch.randn(4, 12)], 13, ["input"], {})
    cnn = CNN()
    randomize_bn(cnn)
    export("cnn_bn", cnn, [torch.randn(3, 1, 12, 12)], 17, ["input"], {})
    export("cnn_bn_opset13", cnn, [torch.randn(3, 1, 12, 12)], 13, ["input"], {})
    export("resnet18_narrow", resnet18_narrow(), [torch.randn(2, 3, 32, 32)], 17, ["input"], {})
    for cell in ("lstm", "gru"):
        export(cell, RNNClassifier(cell), [torch.randn(3, 7, 6)], 17, ["input"], {"input": {0: "batch", 1: "seq"}})
    tf = TransformerClassifier()
    tokens = torch.randint(0, 30, (3, 9))
    export("transformer", tf, [tokens], 17, ["tokens"], {"tokens": {0: "batch", 1: "seq"}})
    export("transformer_opset13", tf, [tokens], 13, ["tokens"], {"tokens": {0: "batch", 1: "seq"}})


if __name__ == "__main__":
    main()

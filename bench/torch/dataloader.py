#!/usr/bin/python3
"""PyTorch twin of bench/bench_dataloader.cpp: one Fashion-MNIST training epoch
through RandomCrop(28, padding=4) + RandomHorizontalFlip + ToTensor + Normalize,
batch 128, shuffle, num_workers=2; prints images/s per epoch and the median as
JSON. The dataset mirrors torchvision.datasets.FashionMNIST.__getitem__ (a PIL
image per sample) on Debian's files, so no download is needed."""
import gzip
import json
import statistics
import sys
import time

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image

ROOT = "/usr/share/datasets/fashion-mnist/"


def read(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


class FashionMNIST(torch.utils.data.Dataset):
    def __init__(self, transform):
        self.data = torch.from_numpy(read(ROOT + "train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28).copy())
        self.targets = torch.from_numpy(read(ROOT + "train-labels-idx1-ubyte.gz", 8).astype(np.int64))
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):  # as torchvision.datasets.MNIST
        img = Image.fromarray(self.data[i].numpy(), mode="L")
        return self.transform(img), int(self.targets[i])


def main():
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    torch.set_num_threads(1)
    transform = T.Compose([T.RandomCrop(28, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize((0.2860,), (0.3530,))])
    loader = torch.utils.data.DataLoader(FashionMNIST(transform), batch_size=128, shuffle=True,
                                         num_workers=workers, prefetch_factor=2 if workers else 2)
    rates = []
    for e in range(epochs):
        t0 = time.perf_counter()
        n = 0
        for x, _ in loader:
            n += x.shape[0]
        s = time.perf_counter() - t0
        rates.append(n / s)
        print(f"epoch {e}: {n} images in {s:.3f} s, {rates[-1]:.0f} images/s", flush=True)
    print(json.dumps({"bench": "dataloader", "framework": "pytorch", "workers": workers,
                      "images_per_s": round(statistics.median(rates), 1)}))


if __name__ == "__main__":
    main()

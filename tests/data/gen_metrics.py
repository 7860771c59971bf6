#!/usr/bin/env python3
"""Expected values for tests/train/test_metrics.cpp.

scikit-learn is not installed where these were made, so its definitions are
written out with numpy (labels=range(C), zero_division=0):
  precision_c = tp_c / predicted_c, recall_c = tp_c / support_c,
  f1_c = 2 tp_c / (predicted_c + support_c), each 0 when the denominator is 0;
  macro = plain mean over the C classes, weighted = support-weighted mean;
  top-k: correct when fewer than k classes rank before the target, where j
  ranks before t if z_j > z_t, or z_j == z_t and j < t (torch.topk order).
Run: python3 tests/data/gen_metrics.py
"""
import numpy as np


def classification(batches, C, ks):
    conf = np.zeros((C, C), dtype=np.int64)
    topk = {k: 0 for k in ks}
    n = 0
    loss_sum = 0.0
    for z, y, loss in batches:
        z = np.asarray(z, dtype=np.float64)
        y = np.asarray(y)
        pred = np.argmax(z, axis=1)  # first index on ties, as torch.argmax
        for i in range(len(y)):
            conf[y[i], pred[i]] += 1
            t = y[i]
            rank = sum(1 for j in range(C) if z[i, j] > z[i, t] or (z[i, j] == z[i, t] and j < t))
            for k in ks:
                topk[k] += rank < k
        n += len(y)
        loss_sum += loss * len(y)
    tp = np.diag(conf).astype(np.float64)
    support = conf.sum(axis=1).astype(np.float64)
    predicted = conf.sum(axis=0).astype(np.float64)

    def div(a, b):
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))

    p, r, f = div(tp, predicted), div(tp, support), div(2 * tp, predicted + support)
    w = support / support.sum()
    return {
        "confusion": conf.tolist(),
        "accuracy": tp.sum() / n,
        "loss": loss_sum / n,
        "top_k": {k: topk[k] / n for k in ks},
        "precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist(),
        "support": support.astype(int).tolist(),
        "precision_macro": p.mean(), "recall_macro": r.mean(), "f1_macro": f.mean(),
        "precision_weighted": (p * w).sum(), "recall_weighted": (r * w).sum(), "f1_weighted": (f * w).sum(),
    }


# Two batches, 4 classes. Class 3 is never predicted (and has support 1), so
# its precision/recall/F1 are 0; sample 2 of batch 1 ties classes 0 and 2
# (argmax picks 0).
BATCH1 = (
    [[2.0, 1.0, 0.5, 0.1],   # y=0 pred 0
     [0.2, 3.0, 0.1, 0.0],   # y=1 pred 1
     [1.0, 0.3, 1.0, 0.9],   # y=2 pred 0 (tie with 2), target rank 1
     [0.1, 0.2, 2.5, 2.4]],  # y=3 pred 2, target rank 1
    [0, 1, 2, 3], 0.5)
BATCH2 = (
    [[0.0, 1.5, 0.2, 0.3],   # y=1 pred 1
     [0.9, 0.1, 0.8, 0.7],   # y=2 pred 0, target rank 1
     [0.1, 0.3, 0.2, 0.0],   # y=0 pred 1, target rank 2
     [0.0, 0.1, 5.0, 0.2]],  # y=2 pred 2
    [1, 2, 0, 2], 1.0)

# Regression: predictions/targets [3, 2] then [1, 2].
REG = [([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], [[1.5, 2.0], [1.0, 0.0], [0.5, 2.0]], 0.25),
       ([[4.0, 4.0]], [[3.0, 6.0]], 2.0)]


def regression(batches):
    p = np.concatenate([np.asarray(b[0], dtype=np.float64).ravel() for b in batches])
    t = np.concatenate([np.asarray(b[1], dtype=np.float64).ravel() for b in batches])
    n = sum(len(b[0]) for b in batches)
    return {"mse": np.mean((p - t) ** 2), "mae": np.mean(np.abs(p - t)),
            "loss": sum(b[2] * len(b[0]) for b in batches) / n}


if __name__ == "__main__":
    np.set_printoptions(precision=17)
    for k, v in classification([BATCH1, BATCH2], 4, [1, 2, 3]).items():
        print(f"{k} = {v!r}")
    for k, v in regression(REG).items():
        print(f"regression {k} = {v!r}")

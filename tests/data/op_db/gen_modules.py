#!/usr/bin/python3
"""Writes tests/data/op_db/nn_modules.txt: the torch.nn modules (PyTorch 1.13,
Debian's python3-torch) that Ember has too, namely every one of
torch.nn.modules.__all__ but those below, whose functional is not in
../shared/OPS.md. OpDbTable.EveryPyTorchModuleOfTheSurfaceExists checks
include/ember/nn declares each."""
import os

import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))

NOT_IN_OPS_MD = {
    "Container": "deprecated since PyTorch 0.4",
    "ParameterList": "a container of parameters, not an op",
    "ParameterDict": "a container of parameters, not an op",
    "MaxUnpool1d": "max_unpool is not in OPS.md",
    "MaxUnpool2d": "max_unpool is not in OPS.md",
    "MaxUnpool3d": "max_unpool is not in OPS.md",
    "FractionalMaxPool2d": "fractional_max_pool is not in OPS.md",
    "FractionalMaxPool3d": "fractional_max_pool is not in OPS.md",
    "LPPool1d": "lp_pool is not in OPS.md",
    "LPPool2d": "lp_pool is not in OPS.md",
    "AdaptiveMaxPool3d": "adaptive_max_pool3d is not in OPS.md",
    "ConvTranspose3d": "conv_transpose3d is not in OPS.md",
    "SyncBatchNorm": "multi-GPU batch norm",
    "FeatureAlphaDropout": "feature_alpha_dropout is not in OPS.md",
    "CrossMapLRN2d": "Lua Torch's LRN, kept for legacy models",
    "RNNCellBase": "recurrent cells are not in OPS.md (nn::RNN/LSTM/GRU are)",
    "RNNCell": "recurrent cells are not in OPS.md (nn::RNN/LSTM/GRU are)",
    "LSTMCell": "recurrent cells are not in OPS.md (nn::RNN/LSTM/GRU are)",
    "GRUCell": "recurrent cells are not in OPS.md (nn::RNN/LSTM/GRU are)",
    "AdaptiveLogSoftmaxWithLoss": "adaptive softmax is not in OPS.md",
    "Transformer": "the decoder stack is not in OPS.md (TransformerEncoder is in Ember)",
    "TransformerDecoder": "the decoder stack is not in OPS.md (TransformerEncoder is in Ember)",
    "TransformerDecoderLayer": "the decoder stack is not in OPS.md (TransformerEncoder is in Ember)",
    "TripletMarginWithDistanceLoss": "triplet_margin_with_distance_loss is not in OPS.md",
    "ChannelShuffle": "channel_shuffle is not in OPS.md",
    "NLLLoss2d": "deprecated alias of NLLLoss",
}
# Lazy* modules (shape inference at the first call) are not in OPS.md either.

modules = [m for m in nn.modules.__all__ if m not in NOT_IN_OPS_MD and not m.startswith("Lazy")]
out = os.path.join(HERE, "nn_modules.txt")
with open(out, "w") as f:
    f.write("# torch.nn modules whose functional is in OPS.md (written by gen_modules.py)\n")
    for m in modules:
        f.write(m + "\n")
print(f"wrote {out}: {len(modules)} modules")

// Ember's public API in one include: tensors, autograd, autocast, nn, optim
// (with optim::save/load), data, io, and from train the metrics and
// checkpoints (train::save_checkpoint). The experiment workflow (Trainer,
// config, zoo) and the CLI (cli/main.h) have their own headers.
#pragma once

#include "ember/core/adaptive_threads.h"
#include "ember/core/allocator.h"
#include "ember/core/autocast.h"
#include "ember/core/device.h"
#include "ember/core/error.h"
#include "ember/core/generator.h"
#include "ember/core/parallel.h"
#include "ember/core/scalar.h"
#include "ember/core/scalar_type.h"
#include "ember/autograd/autograd.h"
#include "ember/autograd/function.h"
#include "ember/core/grad_graph.h"
#include "ember/core/tensor.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/inplace_functions.h"
#include "ember/ops/linalg.h"
#include "ember/ops/nn_functional.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "ember/ops/attention.h"
#include "ember/ops/distance.h"
#include "ember/ops/dropout.h"
#include "ember/ops/normalization.h"
#include "ember/ops/resample.h"

namespace ember {
// Ember's version string ("0.1.0").
const char* version();
}  // namespace ember
#include "ember/optim.h"
#include "ember/nn.h"
#include "ember/ops/activation.h"
#include "ember/data/data.h"
#include "ember/io/safetensors.h"
#include "ember/train/checkpoint.h"
#include "ember/train/metrics.h"

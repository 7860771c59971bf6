// Kernel selection: marks each float32 conv2d and matmul node whose weight
// (and bias) are constants, or views of constants, with kernel="prepared":
// a prepared graph may run it through a prepared oneDNN kernel (weights
// reordered once into the primitive's blocked layout, fused activation /
// residual add / pooling as post-ops and blocked intermediates; Note
// [prepared kernels] in src/kernels/cpu/prepared.cpp). Such a node's
// results match the generic kernels within float rounding, not bitwise, so
// only level 2 selects them; unmarked nodes replay the traced kernels.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph select_kernels(const Graph& g);

}  // namespace ember::jit

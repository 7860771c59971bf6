// conv2d / matmul (+ their bias, already an input of the node) followed by
// relu, silu, gelu or gelu_tanh becomes one node with the attribute
// activation="relu" (...): the interpreter applies the activation in place on
// the kernel's output buffer right after the kernel (the same elementwise
// kernel the separate node ran, so the result is bitwise the same) instead of
// allocating and writing a second buffer. Only when the conv/matmul output
// has no other user; never into a pooled conv. On a conv with a fused
// residual add (fuse_residual_add) the activation follows the add:
// post_activation="relu". The runtime's prepared kernels (Note [prepared
// kernels]) run both as oneDNN eltwise post-ops instead. Then DCE.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fuse_activations(const Graph& g);

// The activations fuse_activations folds into a conv2d/matmul node.
bool is_fusable_activation(const std::string& kind);

}  // namespace ember::jit

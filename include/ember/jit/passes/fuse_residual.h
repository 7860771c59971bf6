// A residual add fused into the conv2d before it: when a conv2d's output
// (its activation fused or not, not pooled) is read only by an `add` with a
// second operand of the same type (no broadcast, no scalar), the pair
// becomes one conv2d node with the attribute residual=true and that operand
// as its fourth input (after the bias; kNoValue when there is no bias),
// computing  act(conv(x, w) + b) + residual  in one pass: the runtime's
// prepared kernel adds it as a oneDNN sum post-op; the generic path adds it
// in place after the kernel. The fused node takes the add's place in the
// order (the residual may be computed after the conv, as a ResNet shortcut
// is). A relu/silu/gelu after it is then fused by fuse_activations as the
// node's post_activation. Then DCE.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fuse_residual_add(const Graph& g);

}  // namespace ember::jit

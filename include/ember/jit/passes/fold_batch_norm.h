// BatchNorm (eval) folded into the conv2d before it: when a conv2d's output
// feeds only a batch_norm_apply whose statistics and affine parameters are
// constants (and the conv's weight and bias are constants), the pair becomes
// one conv2d with  w' = w * s,  b' = (b - mean) * s + beta,  s = gamma / sqrt(var + eps)
// per output channel (computed in double, stored in the conv's dtype), as
// new constants "<conv weight>.bn_folded" / "<conv>.bias.bn_folded". Then DCE.
// Linear + BatchNorm1d is not folded yet (no zoo model has it).
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fold_batch_norm(const Graph& g);

}  // namespace ember::jit

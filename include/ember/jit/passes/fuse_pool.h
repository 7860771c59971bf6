// conv2d (its activation fused or not; not one with a fused residual add)
// whose output only a max_pool2d or avg_pool2d reads becomes one conv2d node
// that produces the pooled output: attribute pool="max"|"avg" and the pool's own attributes prefixed "pool_"
// (pool_kernel_size, pool_stride, pool_dilation, pool_padding,
// pool_count_include_pad). The interpreter runs the conv a chunk of images at
// a time into a cache-sized scratch block, applies the activation there and
// pools the chunk into the output (Note [conv + pool in chunks] in
// src/jit/ir/interpreter.cpp), so the full-size conv output is never written
// to memory. Per image the same kernels run on the same values: results
// differ from level 1 only where a kernel's arithmetic depends on the batch
// size (oneDNN may block a smaller batch differently). Then DCE.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph fuse_pooling(const Graph& g);

}  // namespace ember::jit

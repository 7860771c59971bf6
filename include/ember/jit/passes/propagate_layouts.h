// Layout propagation: marks each prepared conv2d (jit::select_kernels) whose
// output is read only by prepared conv2d nodes, as their input or as their
// fused residual, with output_layout="blocked": a prepared graph then keeps
// that activation in the blocked layout the conv's oneDNN primitive writes
// (nChw16c, ...) and the readers are made for it, so a chain of convs
// reorders from NCHW once before its first conv and back once after its
// last (Note [layout propagation] in src/kernels/cpu/prepared.cpp). A value
// the graph returns, or that anything else reads (a flatten, a linear, an
// elementwise op, a view), stays NCHW. A marked conv with few input
// channels (W1's first) runs oneDNN instead of Ember's small-c_in kernel so
// that its output can stay blocked; a small-c_in conv reading a marked
// value would take NCHW, so it makes its producer unmarked. The numbers
// match the unmarked graph's within float rounding.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph propagate_layouts(const Graph& g);

}  // namespace ember::jit

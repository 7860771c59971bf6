// Identity removal: drops views that give their base's own geometry
// (as_strided with the base's sizes, strides and offset, which the tracer
// records for flatten/view/reshape no-ops) and copies of a contiguous value
// into a buffer of the same dtype and shape (contiguous() on a contiguous
// tensor). Uses are rewired to the input; the graph is then DCE'd.
// Dropout needs no pass: in eval mode it dispatches no kernel, so a traced
// graph never holds one.
#pragma once

#include "ember/jit/graph.h"

namespace ember::jit {

Graph remove_identities(const Graph& g);

}  // namespace ember::jit

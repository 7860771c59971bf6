// jit::cond and jit::while_loop: data-dependent control flow that survives
// tracing (the script equivalent of an `if` or a `while` on tensor values).
// Eagerly they simply run; under jit::trace they record one "cond" or
// "while_loop" node holding the branches (loop functions) as sub-graphs, so
// the exported graph takes the branch its inputs select at run time
// (Note [control flow] in src/jit/ir/control_flow.cpp).
//
//   auto y = jit::cond(h.sum() > 0, [](const std::vector<Tensor>& a) { return std::vector{relu(a[0])}; },
//                      [](const std::vector<Tensor>& a) { return std::vector{-a[0]}; }, {h})[0];
//
// The functions must be pure in their tensors: they may read tensors from
// outside (weights, values computed earlier; the trace passes them to the
// sub-graph as extra inputs, Note [control flow capture] in
// src/jit/trace/control_flow.cpp), but must not write in place into what they
// receive or capture. Host-side effects (counters, logging) happen while the
// functions run: once per function while tracing, never in the exported graph.
#pragma once

#include <functional>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::jit {

// Takes the operands (carried values) and returns tensors.
using BranchFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& operands)>;
// Takes the carried values and returns a bool tensor of one element.
using LoopCondFn = std::function<Tensor(const std::vector<Tensor>& carried)>;

// then_fn(operands) if pred holds, else else_fn(operands). pred: a bool tensor
// of one element (compare first: x.sum() > 0). Traced, both branches are
// traced and must return the same number of tensors with the same dtypes and
// shapes; eagerly only the taken branch runs (and is not compared with the
// other).
std::vector<Tensor> cond(const Tensor& pred, const BranchFn& then_fn, const BranchFn& else_fn,
                         const std::vector<Tensor>& operands);

// while (cond_fn(carried)) carried = body_fn(carried); returns carried.
// body_fn must return as many tensors as it takes, each with the dtype and
// shape of the carried value it replaces (checked every iteration eagerly,
// once when traced). At least one carried value.
std::vector<Tensor> while_loop(const LoopCondFn& cond_fn, const BranchFn& body_fn, const std::vector<Tensor>& carried);

}  // namespace ember::jit

// The public autograd API: backward, grad, custom functions, gradcheck.
#pragma once

#include <optional>

#include "ember/core/grad_graph.h"

namespace ember::autograd {

// Accumulates d(sum(tensors * grad_tensors)) / d(leaf) into every leaf's grad().
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// Returns d(outputs)/d(inputs) weighted by grad_outputs without touching any
// grad(). An input the outputs do not depend on raises unless allow_unused
// (then its entry is undefined).
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                   bool create_graph = false, bool allow_unused = false);

}  // namespace ember::autograd

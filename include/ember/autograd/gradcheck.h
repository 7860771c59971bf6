// Finite-difference checks of autograd formulas (torch.autograd.gradcheck).
#pragma once

#include <functional>

#include "ember/core/grad_graph.h"

namespace ember::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

using DiffFn = std::function<variable_list(const variable_list&)>;

// Compares the Jacobian from backward with central differences for every
// float64 input that requires grad. Raises ember::Error naming the output,
// input and element that disagree.
void gradcheck(const DiffFn& fn, const variable_list& inputs, const GradcheckOptions& opts = {});

// gradcheck of the first derivative (vector-Jacobian product with random
// grad_outputs) — checks double backward.
void gradgradcheck(const DiffFn& fn, const variable_list& inputs, const GradcheckOptions& opts = {});

}  // namespace ember::autograd

// The step counter every stateful optimizer keeps per parameter.
#include "optim/option_util.h"

#include "ember/ops/factory.h"

namespace ember::optim::detail {

Tensor new_step_tensor() { return zeros({}, kFloat32); }

double increment_step(Tensor& step) {
  float* s = step.data_ptr<float>();
  *s += 1.0f;
  step.bump_version();
  return static_cast<double>(*s);
}

}  // namespace ember::optim::detail

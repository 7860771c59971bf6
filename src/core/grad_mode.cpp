// Thread-local grad / inference / anomaly flags.
#include "ember/core/grad_mode.h"

namespace ember {
namespace {
thread_local bool grad_enabled = true;
thread_local bool inference_enabled = false;
thread_local bool anomaly_enabled = false;
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

bool InferenceMode::is_enabled() { return inference_enabled; }
InferenceModeGuard::InferenceModeGuard() : prev_grad_(grad_enabled), prev_inference_(inference_enabled) {
  grad_enabled = false;
  inference_enabled = true;
}
InferenceModeGuard::~InferenceModeGuard() {
  grad_enabled = prev_grad_;
  inference_enabled = prev_inference_;
}

bool AnomalyMode::is_enabled() { return anomaly_enabled; }
void AnomalyMode::set_enabled(bool enabled) { anomaly_enabled = enabled; }

}  // namespace ember

// Thread-local grad / inference / anomaly flags.
#include "ember/core/grad_mode.h"

namespace ember {
namespace detail {
thread_local constinit bool tls_grad_enabled = true;
}  // namespace detail
namespace {
thread_local bool inference_enabled = false;
thread_local bool anomaly_enabled = false;
}  // namespace

bool InferenceMode::is_enabled() { return inference_enabled; }
InferenceModeGuard::InferenceModeGuard()
    : prev_grad_(detail::tls_grad_enabled), prev_inference_(inference_enabled) {
  detail::tls_grad_enabled = false;
  inference_enabled = true;
}
InferenceModeGuard::~InferenceModeGuard() {
  detail::tls_grad_enabled = prev_grad_;
  inference_enabled = prev_inference_;
}

bool AnomalyMode::is_enabled() { return anomaly_enabled; }
void AnomalyMode::set_enabled(bool enabled) { anomaly_enabled = enabled; }

}  // namespace ember

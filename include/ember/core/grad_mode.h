// Thread-local autograd switches and their RAII guards (the only mutable
// global state Ember has, like torch.no_grad / torch.inference_mode).
#pragma once

namespace ember {

namespace detail {
// Read by every op (defined in grad_mode.cpp). constinit: no dynamic
// initialisation, so the inline read below is one thread-pointer load, no
// TLS wrapper call.
extern thread_local constinit bool tls_grad_enabled;
}  // namespace detail

struct GradMode {
  static bool is_enabled() { return detail::tls_grad_enabled; }
  static void set_enabled(bool enabled) { detail::tls_grad_enabled = enabled; }
};

// Ops inside record nothing and save nothing (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Re-enables recording inside a NoGradGuard (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// Inference: no recording, and tensors made inside are never meant for
// autograd (torch.inference_mode()).
struct InferenceMode {
  static bool is_enabled();
};
class InferenceModeGuard {
 public:
  InferenceModeGuard();
  ~InferenceModeGuard();
  InferenceModeGuard(const InferenceModeGuard&) = delete;
  InferenceModeGuard& operator=(const InferenceModeGuard&) = delete;

 private:
  bool prev_grad_;
  bool prev_inference_;
};

// Anomaly detection: backward checks each node's outputs for NaN/Inf and
// names the forward op that recorded the node (torch.autograd.detect_anomaly).
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember

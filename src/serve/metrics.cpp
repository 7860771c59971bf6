// Prometheus text exposition format 0.0.4, written by hand: a handful of
// series does not justify a client library.
#include "metrics.h"

#include <fmt/format.h>

namespace ember::serve {

namespace {

const std::vector<double> kLatencyBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,     10};
const std::vector<double> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

std::string with_le(const std::string& labels, const std::string& le) {
  return labels.empty() ? fmt::format("le=\"{}\"", le) : fmt::format("{},le=\"{}\"", labels, le);
}

Histogram& series(std::map<std::string, Histogram>& m, const std::string& model, const std::vector<double>& bounds) {
  return m.try_emplace(model, bounds).first->second;
}

}  // namespace

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

std::string Histogram::text(const std::string& name, const std::string& labels) const {
  std::string out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    out += fmt::format("{}_bucket{{{}}} {}\n", name, with_le(labels, le), cumulative);
  }
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, sum_, name, braces, count_);
  return out;
}

void Metrics::count_request(int status) {
  std::lock_guard lock(mu_);
  ++requests_[status];
}

void Metrics::observe_latency(const std::string& model, double seconds) {
  std::lock_guard lock(mu_);
  series(latency_, model, kLatencyBounds).observe(seconds);
}

void Metrics::observe_batch(const std::string& model, int64_t rows) {
  std::lock_guard lock(mu_);
  series(batch_, model, kBatchBounds).observe(static_cast<double>(rows));
}

void Metrics::set_load_seconds(const std::string& model, double seconds) {
  std::lock_guard lock(mu_);
  load_seconds_[model] = seconds;
}

void Metrics::count_cancelled(const std::string& model) {
  std::lock_guard lock(mu_);
  ++cancelled_[model];
}

std::string Metrics::text(const std::vector<std::string>& models,
                          const std::function<size_t(const std::string&)>& queue_depth) const {
  std::lock_guard lock(mu_);
  std::string out = "# HELP ember_requests_total HTTP requests answered, by status code.\n"
                    "# TYPE ember_requests_total counter\n";
  for (const auto& [code, n] : requests_) out += fmt::format("ember_requests_total{{code=\"{}\"}} {}\n", code, n);
  out += "# HELP ember_request_duration_seconds Latency of answered inference requests, from the handler's start to the response built.\n"
         "# TYPE ember_request_duration_seconds histogram\n";
  for (const auto& [model, h] : latency_) out += h.text("ember_request_duration_seconds", fmt::format("model=\"{}\"", model));
  out += "# HELP ember_batch_size Rows per model run formed by the dynamic batcher.\n"
         "# TYPE ember_batch_size histogram\n";
  for (const auto& [model, h] : batch_) out += h.text("ember_batch_size", fmt::format("model=\"{}\"", model));
  out += "# HELP ember_queue_depth Requests waiting for the batcher.\n# TYPE ember_queue_depth gauge\n";
  for (const std::string& m : models) out += fmt::format("ember_queue_depth{{model=\"{}\"}} {}\n", m, queue_depth(m));
  out += "# HELP ember_requests_cancelled_total Requests that timed out while queued, removed without running.\n"
         "# TYPE ember_requests_cancelled_total counter\n";
  for (const std::string& m : models) {
    auto it = cancelled_.find(m);
    out += fmt::format("ember_requests_cancelled_total{{model=\"{}\"}} {}\n", m, it == cancelled_.end() ? 0 : it->second);
  }
  out += "# HELP ember_model_load_seconds Time to load the model file.\n# TYPE ember_model_load_seconds gauge\n";
  for (const auto& [model, s] : load_seconds_) out += fmt::format("ember_model_load_seconds{{model=\"{}\"}} {}\n", model, s);
  return out;
}

}  // namespace ember::serve

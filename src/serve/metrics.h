// Prometheus counters and histograms for `ember serve` (GET /metrics):
// requests by status, request latency, batch sizes, queue depth, load time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ember::serve {

// Cumulative buckets as Prometheus writes them (le="..." plus +Inf).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v);
  // The `name_bucket`, `name_sum` and `name_count` lines; `labels` like model="cnn" or empty.
  std::string text(const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  void count_request(int status);
  void observe_latency(const std::string& model, double seconds);
  void observe_batch(const std::string& model, int64_t rows);
  void set_load_seconds(const std::string& model, double seconds);
  // A request that timed out while queued and was removed without running.
  void count_cancelled(const std::string& model);
  // queue_depth(model) is read when the page is rendered.
  std::string text(const std::vector<std::string>& models, const std::function<size_t(const std::string&)>& queue_depth) const;

 private:
  mutable std::mutex mu_;
  std::map<int, uint64_t> requests_;
  std::map<std::string, Histogram> latency_, batch_;
  std::map<std::string, double> load_seconds_;
  std::map<std::string, uint64_t> cancelled_;
};

}  // namespace ember::serve

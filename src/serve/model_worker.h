// One served model: its Session, a bounded request queue and the batcher
// thread that merges queued requests along dim 0 (Note [dynamic batching]).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/runtime/session.h"
#include "metrics.h"
#include "predict.h"
#include "protocol.h"

namespace ember::serve {

struct BatchOptions {
  int64_t max_batch = 32;     // rows per model run
  int64_t max_delay_us = 2000;  // wait after the oldest queued request
  size_t queue = 1024;        // queued requests before 503
  int threads = 0;            // SessionOptions::threads
};

class ModelWorker {
 public:
  ModelWorker(std::string name, const std::string& path, const BatchOptions& options, Metrics& metrics);
  // Runs what is queued, then joins the batcher.
  ~ModelWorker();
  ModelWorker(const ModelWorker&) = delete;
  ModelWorker& operator=(const ModelWorker&) = delete;

  struct Ticket {
    uint64_t id = 0;  // for cancel()
    std::future<std::vector<Tensor>> result;
  };
  // Queues one request (inputs already checked against the signature).
  // Throws HttpError(503) when the queue is full.
  Ticket submit(std::vector<Tensor> inputs);
  // Takes a request that timed out out of the queue so it never runs; false
  // when the batcher has already taken it (it runs, and nobody reads it).
  bool cancel(uint64_t id);

  const std::string& name() const { return name_; }
  const Signature& signature() const { return signature_; }
  const PredictInfo& predict_info() const { return predict_; }
  const runtime::Session& session() const { return session_; }
  // Whether requests are merged: every input and output has the same
  // symbolic dim 0.
  bool batches() const { return batches_; }
  size_t queue_depth() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Request {
    uint64_t id = 0;
    std::vector<Tensor> inputs;
    int64_t rows = 1;
    int64_t steps = 0;  // dim 1 of its sequence inputs (Note [sequence padding])
    Clock::time_point queued;
    std::promise<std::vector<Tensor>> done;
  };

  void loop();
  std::vector<Request> take_batch();
  bool fits_with(const Request& first, const Request& r) const;
  int64_t ready_rows() const;  // rows that could join the oldest request now
  void run(std::vector<Request>& batch);
  std::vector<Tensor> run_merged(std::vector<Request>& batch);

  std::string name_;
  BatchOptions options_;
  Metrics& metrics_;
  runtime::Session session_;
  Signature signature_;
  PredictInfo predict_;
  bool batches_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace ember::serve

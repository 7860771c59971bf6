// Note [dynamic batching]: requests wait in a per-model queue; the batcher
// takes the oldest and, when the model's dim 0 is symbolic in every input and
// output, waits up to max_delay_us after it was queued for more requests
// whose other dims match, until max_batch rows are ready. It concatenates
// them along dim 0, runs the Session once and hands each request its rows of
// every output. A request larger than max_batch runs alone. Rows do not mix
// in the model (every op acts per sample when dim 0 is the batch), so a
// request's outputs are those of running it alone, up to the kernels' choice
// of blocking by batch size (tests/serve check 1e-6 and the argmax). When a
// merged run throws, each request is rerun alone so that only the request at
// fault gets the error.
#include "model_worker.h"

#include <fmt/format.h>

#include "ember/ember.h"

namespace ember::serve {

namespace {

Signature signature_of(const runtime::Session& s) {
  const jit::Graph& g = s.model().graph;
  Signature sig;
  sig.input_names = s.input_names();
  sig.output_names = s.output_names();
  for (const jit::NamedValue& v : g.inputs) sig.input_types.push_back(g.type(v.value));
  for (const jit::NamedValue& v : g.outputs) sig.output_types.push_back(g.type(v.value));
  return sig;
}

// Whether all inputs and outputs share one symbol as dim 0.
bool has_batch_dim(const Signature& sig) {
  std::string symbol;
  auto same = [&](const jit::TensorType& t) {
    if (t.shape.empty() || !t.shape[0].is_symbolic()) return false;
    if (symbol.empty()) symbol = t.shape[0].symbol;
    return t.shape[0].symbol == symbol;
  };
  for (const jit::TensorType& t : sig.input_types)
    if (!same(t)) return false;
  for (const jit::TensorType& t : sig.output_types)
    if (!same(t)) return false;
  // A plain symbol, not an expression such as "2*batch".
  return !sig.input_types.empty() && symbol.find_first_of("*+ ") == std::string::npos;
}

}  // namespace

ModelWorker::ModelWorker(std::string name, const std::string& path, const BatchOptions& options, Metrics& metrics)
    : name_(std::move(name)),
      options_(options),
      metrics_(metrics),
      session_(path, runtime::SessionOptions{.threads = options.threads}),
      signature_(signature_of(session_)),
      batches_(has_batch_dim(signature_)) {
  EMBER_CHECK(options.max_batch >= 1, "serve: --max-batch must be at least 1, got {}", options.max_batch);
  EMBER_CHECK(options.max_delay_us >= 0, "serve: --max-delay-us must be >= 0, got {}", options.max_delay_us);
  EMBER_CHECK(options.queue >= 1, "serve: --queue must be at least 1");
  thread_ = std::thread([this] { loop(); });
}

ModelWorker::~ModelWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::future<std::vector<Tensor>> ModelWorker::submit(std::vector<Tensor> inputs) {
  Request r;
  r.rows = batches_ ? inputs.at(0).size(0) : 1;
  r.inputs = std::move(inputs);
  r.queued = Clock::now();
  std::future<std::vector<Tensor>> f = r.done.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw HttpError(503, fmt::format("model '{}' is shutting down", name_));
    if (queue_.size() >= options_.queue)
      throw HttpError(503, fmt::format("model '{}': the queue is full ({} requests); retry later", name_, options_.queue));
    queue_.push_back(std::move(r));
  }
  cv_.notify_one();
  return f;
}

size_t ModelWorker::queue_depth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

bool ModelWorker::fits_with(const Request& first, const Request& r) const {
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    IntArrayRef a = first.inputs[i].sizes(), b = r.inputs[i].sizes();
    if (!std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end())) return false;
  }
  return true;
}

int64_t ModelWorker::ready_rows() const {
  int64_t rows = 0;
  for (const Request& r : queue_)
    if (fits_with(queue_.front(), r)) rows += r.rows;
  return rows;
}

std::vector<ModelWorker::Request> ModelWorker::take_batch() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return {};
  if (batches_) {
    // On shutdown, run what is queued without waiting for company.
    auto deadline = queue_.front().queued + std::chrono::microseconds(options_.max_delay_us);
    cv_.wait_until(lock, deadline, [&] { return stopping_ || ready_rows() >= options_.max_batch; });
  }
  std::vector<Request> batch;
  batch.push_back(std::move(queue_.front()));
  queue_.pop_front();
  int64_t rows = batch.front().rows;
  for (auto it = queue_.begin(); batches_ && it != queue_.end() && rows < options_.max_batch;) {
    if (fits_with(batch.front(), *it) && rows + it->rows <= options_.max_batch) {
      rows += it->rows;
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

void ModelWorker::loop() {
  for (;;) {
    std::vector<Request> batch = take_batch();
    if (batch.empty()) return;
    run(batch);
  }
}

void ModelWorker::run(std::vector<Request>& batch) {
  int64_t rows = 0;
  for (const Request& r : batch) rows += r.rows;
  metrics_.observe_batch(name_, rows);
  if (batch.size() > 1) {
    try {
      std::vector<Tensor> merged;
      for (size_t i = 0; i < batch.front().inputs.size(); ++i) {
        std::vector<Tensor> parts;
        for (const Request& r : batch) parts.push_back(r.inputs[i]);
        merged.push_back(cat(parts, 0));
      }
      std::vector<Tensor> outputs = session_.run(merged);
      int64_t start = 0;
      for (Request& r : batch) {
        std::vector<Tensor> mine;
        for (const Tensor& o : outputs) mine.push_back(o.narrow(0, start, r.rows));
        start += r.rows;
        r.done.set_value(std::move(mine));
      }
      return;
    } catch (const std::exception&) {
      // Fall through: run each alone so the error reaches only its request.
    }
  }
  for (Request& r : batch) {
    try {
      r.done.set_value(session_.run(r.inputs));
    } catch (...) {
      r.done.set_exception(std::current_exception());
    }
  }
}

}  // namespace ember::serve

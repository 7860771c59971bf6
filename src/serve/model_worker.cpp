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
// fault gets the error. A request whose handler timed out is taken out of
// the queue (cancel) so that it is never run; the batcher re-reads the
// oldest request after every wake-up, since the one it waited for may be
// gone. Sequence inputs of different lengths are padded to the longest of
// the batch (Note [sequence padding] in padding.cpp).
#include "model_worker.h"

#include <fmt/format.h>

#include <algorithm>

#include "ember/ember.h"

namespace ember::serve {

namespace {

Signature signature_of(const runtime::Session& s) {
  const jit::Graph& g = s.model().graph;
  std::vector<jit::TensorType> in, out;
  for (const jit::NamedValue& v : g.inputs) in.push_back(g.type(v.value));
  for (const jit::NamedValue& v : g.outputs) out.push_back(g.type(v.value));
  return make_signature(s.input_names(), std::move(in), s.output_names(), std::move(out));
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
      predict_(serve::predict_info(session_.model(), path)),
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

ModelWorker::Ticket ModelWorker::submit(std::vector<Tensor> inputs) {
  Request r;
  r.rows = batches_ ? inputs.at(0).size(0) : 1;
  const SequenceLayout& seq = signature_.seq;
  for (size_t i = 0; seq.active() && i < inputs.size(); ++i)
    if (seq.padded_inputs[i]) r.steps = inputs[i].size(1);
  r.inputs = std::move(inputs);
  r.queued = Clock::now();
  Ticket t;
  t.result = r.done.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw HttpError(503, fmt::format("model '{}' is shutting down", name_));
    if (queue_.size() >= options_.queue)
      throw HttpError(503, fmt::format("model '{}': the queue is full ({} requests); retry later", name_, options_.queue));
    r.id = t.id = next_id_++;
    queue_.push_back(std::move(r));
  }
  cv_.notify_one();
  return t;
}

bool ModelWorker::cancel(uint64_t id) {
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Request& r) { return r.id == id; });
    if (it == queue_.end()) return false;
    queue_.erase(it);
  }
  metrics_.count_cancelled(name_);
  cv_.notify_all();  // the batcher may be waiting on this one's deadline
  return true;
}

size_t ModelWorker::queue_depth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

// Dims past the batch must match, but for the steps of sequence inputs.
bool ModelWorker::fits_with(const Request& first, const Request& r) const {
  const SequenceLayout& seq = signature_.seq;
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    IntArrayRef a = first.inputs[i].sizes(), b = r.inputs[i].sizes();
    if (a.size() != b.size()) return false;
    const size_t from = seq.active() && seq.padded_inputs[i] ? 2 : 1;
    if (!std::equal(a.begin() + from, a.end(), b.begin() + from, b.end())) return false;
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
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return {};
    // On shutdown, run what is queued without waiting for company.
    if (!batches_ || stopping_) break;
    const uint64_t oldest = queue_.front().id;
    auto deadline = queue_.front().queued + std::chrono::microseconds(options_.max_delay_us);
    cv_.wait_until(lock, deadline, [&] {
      return stopping_ || queue_.empty() || queue_.front().id != oldest || ready_rows() >= options_.max_batch;
    });
    // The oldest was cancelled: wait again, for the new oldest's deadline.
    if (!queue_.empty() && (queue_.front().id == oldest || stopping_)) break;
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
    std::vector<Tensor> outputs;
    try {
      outputs = run_merged(batch);
    } catch (const std::exception&) {
      // Fall through: run each alone so the error reaches only its request.
    }
    if (!outputs.empty()) {
      const SequenceLayout& seq = signature_.seq;
      int64_t start = 0;
      for (Request& r : batch) {
        std::vector<Tensor> mine;
        for (size_t o = 0; o < outputs.size(); ++o) {
          Tensor rows = outputs[o].narrow(0, start, r.rows);
          mine.push_back(seq.active() && seq.padded_outputs[o] ? rows.narrow(1, 0, r.steps) : rows);
        }
        start += r.rows;
        r.done.set_value(std::move(mine));
      }
      return;
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

// The batch's inputs concatenated along dim 0, sequence inputs first padded
// to the longest of the batch; the session's outputs.
std::vector<Tensor> ModelWorker::run_merged(std::vector<Request>& batch) {
  const SequenceLayout& seq = signature_.seq;
  int64_t steps = 0;
  for (const Request& r : batch) steps = std::max(steps, r.steps);
  std::vector<Tensor> merged;
  for (size_t i = 0; i < batch.front().inputs.size(); ++i) {
    const bool pad = seq.active() && seq.padded_inputs[i];
    std::vector<Tensor> parts;
    for (const Request& r : batch) parts.push_back(pad ? pad_dim1(r.inputs[i], steps) : r.inputs[i]);
    merged.push_back(cat(parts, 0));
  }
  return session_.run(merged);
}

}  // namespace ember::serve

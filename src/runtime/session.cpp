#include "ember/runtime/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <deque>
#include <mutex>
#include <set>

#include "core/adaptive_threads.h"
#include "ember/core/parallel.h"
#include "ember/jit/interpreter.h"
#include "ember/runtime/onnx_model.h"

namespace ember::runtime {

// Prepared graphs not in use, most recently returned last. Up to kMaxIdle are
// kept: enough for a few input sizes times a few concurrent callers.
struct Session::Pool {
  static constexpr size_t kMaxIdle = 16;
  std::mutex mu;
  std::deque<std::unique_ptr<jit::PreparedGraph>> idle;

  std::unique_ptr<jit::PreparedGraph> take(const jit::Graph& g, const jit::SymbolValues& syms) {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (auto it = idle.rbegin(); it != idle.rend(); ++it)
        if ((*it)->symbols() == syms) {
          std::unique_ptr<jit::PreparedGraph> p = std::move(*it);
          idle.erase(std::next(it).base());
          return p;
        }
    }
    return std::make_unique<jit::PreparedGraph>(g, syms);
  }
  void give_back(std::unique_ptr<jit::PreparedGraph> p) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(p));
    if (idle.size() > kMaxIdle) idle.pop_front();
  }
};

Session::Session(const std::string& path, SessionOptions options) : pool_(std::make_unique<Pool>()) {
  if (is_onnx_path(path)) {
    onnx_ = std::make_shared<const OnnxModel>(OnnxModel::load(path));
    model_ = onnx_->signature();
  } else {
    model_ = jit::load_model(path);
    jit::check_graph(model_.graph, "runtime::Session");
  }
  if (options.threads > 0) set_num_threads(options.threads);
}

Session::Session(jit::ModelFile model, SessionOptions options)
    : model_(std::move(model)), pool_(std::make_unique<Pool>()) {
  jit::check_graph(model_.graph, "runtime::Session");
  if (options.threads > 0) set_num_threads(options.threads);
}

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> n;
  for (const jit::NamedValue& v : model_.graph.inputs) n.push_back(v.name);
  return n;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> n;
  for (const jit::NamedValue& v : model_.graph.outputs) n.push_back(v.name);
  return n;
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) const {
  detail::adapt_thread_count(true);  // between runs no kernel is half-way: the thread count may rise
  if (onnx_) return onnx_->run(inputs);
  const jit::SymbolValues syms = jit::bind_symbols(model_.graph, inputs);
  std::unique_ptr<jit::PreparedGraph> prepared = pool_->take(model_.graph, syms);
  std::vector<Tensor> out = prepared->run(inputs);
  pool_->give_back(std::move(prepared));  // not after a throw: a failed run's state is dropped
  return out;
}

NamedTensors Session::run(const NamedTensors& inputs) const {
  std::vector<Tensor> ordered;
  std::set<std::string> used;
  for (const jit::NamedValue& v : model_.graph.inputs) {
    auto it = inputs.find(v.name);
    EMBER_CHECK(it != inputs.end(), "Session::run: missing input '{}' (the model takes {})", v.name,
                fmt::join(input_names(), ", "));
    ordered.push_back(it->second);
    used.insert(v.name);
  }
  for (const auto& [name, t] : inputs)
    EMBER_CHECK(used.count(name), "Session::run: unknown input '{}' (the model takes {})", name,
                fmt::join(input_names(), ", "));
  std::vector<Tensor> out = run(ordered);
  NamedTensors named;
  for (size_t i = 0; i < out.size(); ++i) named.emplace(model_.graph.outputs[i].name, out[i]);
  return named;
}

}  // namespace ember::runtime

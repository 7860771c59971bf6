// The backward engine: counts dependencies from the roots, then runs each
// node once all gradients for it have arrived. Iterative (no recursion), so
// graphs of any depth work.
//
// Note [graph task]: the engine keeps per-pass scratch (dependency count,
// input buffer) in the nodes, tagged with the pass id; two passes over the
// same nodes must not run at the same time (PyTorch allows that; Ember
// raises instead of racing).
#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "core/adaptive_threads.h"
#include "ember/autograd/autograd.h"
#include "ember/autograd/callback.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduction.h"

namespace ember::autograd {
namespace {

std::atomic<uint64_t> next_task_id{1};

struct Capture {
  uint32_t input_nr;
  size_t slot;
};

struct GraphTask {
  uint64_t id = 0;
  bool keep_graph = false;
  bool accumulate = true;  // false for autograd::grad: leaves' grad() untouched
  std::unordered_map<Node*, std::vector<Capture>> captures;
  variable_list captured;
  std::vector<std::function<void()>> final_callbacks;
};

// The pass running on this thread (the engine runs on the caller's thread),
// for queue_callback; a backward inside a hook saves and restores it.
thread_local GraphTask* current_task = nullptr;

class CurrentTaskGuard {
 public:
  explicit CurrentTaskGuard(GraphTask* t) : prev_(current_task) { current_task = t; }
  ~CurrentTaskGuard() { current_task = prev_; }
  CurrentTaskGuard(const CurrentTaskGuard&) = delete;
  CurrentTaskGuard& operator=(const CurrentTaskGuard&) = delete;

 private:
  GraphTask* prev_;
};

void add_to_buffer(Node& n, uint32_t input_nr, Tensor g) {
  if (n.input_buffer.size() < n.num_outputs) n.input_buffer.resize(n.num_outputs);
  Tensor& slot = n.input_buffer[input_nr];
  slot = slot.defined() ? slot + g : std::move(g);
}

// Visits every node reachable from the roots once, counting incoming edges.
void count_dependencies(const std::vector<Edge>& roots, uint64_t id) {
  std::vector<Node*> stack;
  auto visit = [&](Node* n) {
    if (n->task_id == id) return;
    n->task_id = id;
    n->dependencies = 0;
    n->input_buffer.clear();
    stack.push_back(n);
  };
  for (const Edge& e : roots) visit(e.fn.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (!e.fn) continue;
      visit(e.fn.get());
      ++e.fn->dependencies;
    }
  }
}

void check_finite(const Node& n, const variable_list& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (!t.defined() || !t.is_floating_point()) continue;
    if (!isfinite(t).all().item<bool>()) {
      std::string op = n.name();
      auto pos = op.find("Backward");
      if (pos != std::string::npos) op = op.substr(0, pos);
      EMBER_ERROR(
          "Function '{}' returned nan or inf values in its {}th output. The forward op that "
          "recorded it was '{}' (node #{}).",
          n.name(), i, op, n.sequence_nr());
    }
  }
}

void run_node(Node& n, GraphTask& task, std::vector<Node*>& ready) {
  variable_list grads = std::move(n.input_buffer);
  n.input_buffer = {};
  grads.resize(n.num_outputs);
  for (auto& [index, hook] : n.pre_hooks()) {
    if (index >= grads.size() || !grads[index].defined()) continue;
    Tensor r = hook(grads[index]);
    if (r.defined()) grads[index] = std::move(r);
  }
  if (auto it = task.captures.find(&n); it != task.captures.end()) {
    for (const Capture& c : it->second) task.captured[c.slot] = grads[c.input_nr];
  }
  bool is_leaf_sink = n.is_leaf_sink();
  variable_list outputs;
  if (!is_leaf_sink || task.accumulate) {
    outputs = n.apply(std::move(grads));
    if (AnomalyMode::is_enabled()) check_finite(n, outputs);
    if (!task.keep_graph) n.release_variables();
  }
  EMBER_ASSERT(outputs.empty() || outputs.size() == n.next_edges.size(),
               "{} returned {} gradients for {} inputs", n.name(), outputs.size(), n.next_edges.size());
  for (size_t i = 0; i < n.next_edges.size(); ++i) {
    const Edge& e = n.next_edges[i];
    if (!e.fn) continue;
    if (i < outputs.size() && outputs[i].defined()) add_to_buffer(*e.fn, e.input_nr, std::move(outputs[i]));
    if (--e.fn->dependencies == 0) ready.push_back(e.fn.get());
  }
}

Tensor root_gradient(const Tensor& root, const Tensor& given, size_t i) {
  if (!given.defined()) {
    EMBER_CHECK(root.numel() == 1,
                "grad can be implicitly created only for scalar outputs; output {} has shape [{}], pass "
                "a gradient of that shape",
                i, fmt::join(root.sizes(), ", "));
    return ones_like(root);
  }
  EMBER_CHECK(given.sizes().equals(root.sizes()),
              "Mismatch in shape: grad_output[{}] has a shape of [{}] and output[{}] has a shape of [{}]",
              i, fmt::join(given.sizes(), ", "), i, fmt::join(root.sizes(), ", "));
  return given;
}

variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused,
                           bool accumulate) {
  EMBER_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(),
              "backward: got {} tensors and {} gradients", roots.size(), grad_roots.size());
  GraphTask task;
  task.id = next_task_id.fetch_add(1);
  task.keep_graph = keep_graph;
  task.accumulate = accumulate;

  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    EMBER_CHECK(e.valid(), "element {} of tensors does not require grad and does not have a grad_fn", i);
    root_edges.push_back(std::move(e));
  }
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.valid(), "grad: input {} does not require grad", i);
    task.captures[e.fn.get()].push_back({e.input_nr, i});
    input_edges.push_back(std::move(e));
  }
  task.captured.resize(inputs.size());

  // Gradient math of the pass records a graph only for create_graph (the
  // callers restore the mode).
  GradMode::set_enabled(create_graph);

  count_dependencies(root_edges, task.id);
  for (size_t i = 0; i < roots.size(); ++i) {
    Tensor g = root_gradient(roots[i], grad_roots.empty() ? Tensor() : grad_roots[i], i);
    add_to_buffer(*root_edges[i].fn, root_edges[i].input_nr, g);
  }
  CurrentTaskGuard current(&task);
  std::vector<Node*> ready;
  for (const Edge& e : root_edges)
    if (e.fn->dependencies == 0 && std::find(ready.begin(), ready.end(), e.fn.get()) == ready.end())
      ready.push_back(e.fn.get());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    run_node(*n, task, ready);
  }
  // Index loop: a callback may queue another.
  for (size_t i = 0; i < task.final_callbacks.size(); ++i) {
    auto callback = std::move(task.final_callbacks[i]);
    callback();
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    EMBER_CHECK(allow_unused || task.captured[i].defined(),
                "One of the differentiated Tensors (input {}) appears to not have been used in the graph. "
                "Set allow_unused=true if this is the desired behavior.",
                i);
  return task.captured;
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  EMBER_CHECK(current_task != nullptr, "queue_callback: no backward pass is running on this thread");
  current_task->final_callbacks.push_back(std::move(callback));
}

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph) {
  detail::adapt_thread_count(true);  // no kernel is running: the thread count may rise here
  bool prev = GradMode::is_enabled();
  try {
    run_backward(tensors, grad_tensors, retain_graph.value_or(create_graph), create_graph, {}, false, true);
  } catch (...) {
    GradMode::set_enabled(prev);
    throw;
  }
  GradMode::set_enabled(prev);
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  detail::adapt_thread_count(true);
  bool prev = GradMode::is_enabled();
  variable_list result;
  try {
    result = run_backward(outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph, inputs,
                          allow_unused, false);
  } catch (...) {
    GradMode::set_enabled(prev);
    throw;
  }
  GradMode::set_enabled(prev);
  return result;
}

}  // namespace ember::autograd

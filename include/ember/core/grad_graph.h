// The autograd graph as data: nodes, edges, saved tensors and the per-tensor
// autograd metadata. Ops (L2) record into it beside their forward; the engine
// that runs it backwards lives in autograd/ (L3).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/core/object_pool.h"
#include "ember/core/tensor.h"

namespace ember {

class Node;
using variable_list = std::vector<Tensor>;
using GradHook = std::function<Tensor(const Tensor&)>;

// Where a gradient goes: input `input_nr` of node `fn` (null: nowhere).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// A node's edges. Most ops take one or two tensors, so two edges live inside
// the node (no allocation per recorded op); wider ops (cat, custom functions)
// move them all to the heap. The heap list is a pointer, not a vector: every
// byte of a node is fresh memory on each recorded op (W3 chains are bound by
// it), and the heap case is rare.
class EdgeList {
 public:
  static constexpr size_t kInline = 2;
  EdgeList() = default;
  EdgeList(EdgeList&& o) noexcept { *this = std::move(o); }
  EdgeList& operator=(EdgeList&& o) noexcept {
    if (this == &o) return *this;
    clear();
    for (uint32_t i = 0; i < o.size_; ++i) inline_[i] = std::move(o.inline_[i]);
    size_ = std::exchange(o.size_, 0);
    heap_ = std::move(o.heap_);
    return *this;
  }
  EdgeList(const EdgeList&) = delete;
  EdgeList& operator=(const EdgeList&) = delete;

  size_t size() const { return on_heap() ? heap_->size() : size_; }
  bool empty() const { return size() == 0; }
  Edge* begin() { return on_heap() ? heap_->data() : inline_.data(); }
  Edge* end() { return begin() + size(); }
  const Edge* begin() const { return on_heap() ? heap_->data() : inline_.data(); }
  const Edge* end() const { return begin() + size(); }
  Edge& operator[](size_t i) { return begin()[i]; }
  const Edge& operator[](size_t i) const { return begin()[i]; }
  Edge& back() { return begin()[size() - 1]; }

  void reserve(size_t n) {
    if (n > kInline) spill(n);
  }
  // push_back and emplace_back are always inlined: they run for every input
  // of every recorded op, and GCC's out-of-line copies cost more in calls
  // than in work.
  [[gnu::always_inline]] void push_back(Edge e) {
    if (!on_heap() && size_ < kInline) {
      inline_[size_++] = std::move(e);
      return;
    }
    push_back_slow(std::move(e));
  }
  void emplace_back() { push_back(Edge{}); }
  // Copies fn into the next slot without a temporary Edge (the recording
  // hot path: one refcount increment, nothing moved or destroyed).
  [[gnu::always_inline]] void emplace_back(const std::shared_ptr<Node>& fn, uint32_t input_nr) {
    if (!on_heap() && size_ < kInline) {
      Edge& e = inline_[size_++];
      e.fn = std::shared_ptr<Node>(fn);  // copy, then move into the empty slot: all inline
      e.input_nr = input_nr;
      return;
    }
    push_back(Edge{fn, input_nr});
  }
  void pop_back() {
    if (on_heap()) {
      heap_->pop_back();
    } else {
      inline_[--size_] = Edge{};
    }
  }
  void clear() {
    for (uint32_t i = 0; i < size_; ++i) inline_[i] = Edge{};
    size_ = 0;
    heap_.reset();
  }

 private:
  bool on_heap() const { return heap_ != nullptr; }
  [[gnu::noinline]] void push_back_slow(Edge e) {
    if (!on_heap()) spill(2 * kInline);
    heap_->push_back(std::move(e));
  }
  // Moves the inline edges to the heap, which holds all edges from then on.
  void spill(size_t capacity) {
    if (!on_heap()) heap_ = std::make_unique<std::vector<Edge>>();
    heap_->reserve(std::max<size_t>(capacity, heap_->size() + size_));
    for (uint32_t i = 0; i < size_; ++i) heap_->push_back(std::move(inline_[i]));
    size_ = 0;
  }

  std::array<Edge, kInline> inline_;
  uint32_t size_ = 0;  // edges in inline_ (0 when on the heap)
  std::unique_ptr<std::vector<Edge>> heap_;
};

// Note [saved tensors]: a node saves a tensor together with the storage
// version it had. unpack() refuses a tensor modified in place since, with
// PyTorch's message, and refuses after the graph was freed by a backward
// without retain_graph. A saved *output* keeps no strong reference to its own
// node (that would be a cycle); unpack() rebuilds it with a weak link.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, bool is_output);
  Tensor unpack() const;
  bool defined() const { return state_ != nullptr; }
  void release();
  // Links a saved output to the node that produced it (set by record()).
  void bind_output(const std::shared_ptr<Node>& fn, uint32_t output_nr);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

inline SavedTensor save(const Tensor& t) { return SavedTensor(t, false); }
inline SavedTensor save_output(const Tensor& t) { return SavedTensor(t, true); }

// A backward function: gradients of the forward outputs in, gradients of the
// forward inputs out (one per next_edges entry; undefined = zero).
// Note [node deletion]: releasing the last reference to the head of a long
// chain would destroy it recursively and overflow the stack; ~Node hands its
// edges to a per-thread queue that the outermost destructor drains.
namespace detail {
// Per thread, as in PyTorch: numbers order the nodes one thread records (and
// name them in anomaly messages); a shared atomic counter cost a locked
// instruction per recorded op. Defined in grad_graph.cpp.
extern thread_local constinit uint64_t tls_next_sequence_nr;
}  // namespace detail

class Node {
 public:
  explicit Node(const char* name) : name_(name), sequence_nr_(detail::tls_next_sequence_nr++) {}
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const char* name() const { return name_; }
  uint64_t sequence_nr() const { return sequence_nr_; }
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}
  // True for AccumulateGrad, the sink of a leaf's gradient.
  virtual bool is_leaf_sink() const { return false; }

  EdgeList next_edges;
  uint32_t num_outputs = 1;

  // Hooks on the gradient of forward output i, run before apply (rare: kept
  // behind a pointer so that nodes without hooks stay small).
  using PreHook = std::pair<uint32_t, GradHook>;
  void add_pre_hook(uint32_t output_nr, GradHook hook);
  std::span<PreHook> pre_hooks() {
    return pre_hooks_ ? std::span<PreHook>(*pre_hooks_) : std::span<PreHook>();
  }

  // Engine scratch for the backward pass currently visiting this node.
  uint64_t task_id = 0;
  int32_t dependencies = 0;
  variable_list input_buffer;

 private:
  std::unique_ptr<std::vector<PreHook>> pre_hooks_;
  const char* name_;
  uint64_t sequence_nr_;
};

// Nodes and their control blocks come from the object pool.
template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>{}, std::forward<Args>(args)...);
}

// A node whose backward is a lambda written beside the forward op:
//   [sa, sb](const variable_list& g) -> variable_list { ... }
template <typename F>
class LambdaNode final : public Node {
 public:
  LambdaNode(const char* name, std::vector<SavedTensor> saved, F&& fn)
      : Node(name), saved_(std::move(saved)), fn_(std::move(fn)) {}
  variable_list apply(variable_list&& grads) override { return fn_(grads); }
  void release_variables() override {
    for (SavedTensor& s : saved_) s.release();
  }
  // Links saved outputs (Note [saved tensors]) to this node, output 0.
  void bind_saved_outputs(const std::shared_ptr<Node>& self) {
    for (SavedTensor& s : saved_) s.bind_output(self, 0);
  }

 private:
  std::vector<SavedTensor> saved_;
  F fn_;
};

// A LambdaNode for ops that save no tensors (add, sub, views, ...): no saved
// list in the node, which is fresh memory on every recorded op.
template <typename F>
class LambdaNodeNoSaved final : public Node {
 public:
  LambdaNodeNoSaved(const char* name, F&& fn) : Node(name), fn_(std::move(fn)) {}
  variable_list apply(variable_list&& grads) override { return fn_(grads); }

 private:
  F fn_;
};

// The sink for a leaf's gradient: accumulates into leaf.grad() (apply is
// defined by autograd/).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  bool is_leaf_sink() const override { return true; }
  Tensor variable;
};

// Gradient storage that a retain_grad() hook can reach without keeping the
// tensor alive.
struct RetainedGrad {
  Tensor grad;
};

// Per-tensor autograd state that only leaves (and retain_grad() tensors)
// use: an op's output never builds it, so recording an op writes and frees
// only the small AutogradMeta below.
struct AutogradLeafState {
  Tensor grad;
  std::weak_ptr<Node> grad_accumulator;
  std::vector<GradHook> leaf_hooks;
  std::shared_ptr<RetainedGrad> retained;
};

// Per-tensor autograd state; null until a tensor touches autograd. Lives
// inside its TensorImpl (Note [inline autograd meta]).
struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad_ = false;
  // Note [views and autograd]: a differentiable view remembers the storage
  // version at creation; using it in a recorded op after an in-place change
  // to it or its base raises, because its gradient history is stale.
  bool is_view_ = false;
  uint32_t output_nr_ = 0;
  uint32_t view_version_ = 0;
  std::shared_ptr<Node> grad_fn_;
  std::unique_ptr<AutogradLeafState> leaf_;  // null for op outputs

  AutogradLeafState& leaf() {
    if (!leaf_) leaf_ = std::make_unique<AutogradLeafState>();
    return *leaf_;
  }
  bool requires_grad() const override { return requires_grad_ || grad_fn_ != nullptr; }
  void set_requires_grad(bool v) override { requires_grad_ = v; }
};
static_assert(sizeof(AutogradMeta) <= TensorImpl::kAutogradMetaBytes,
              "AutogradMeta outgrew its slot in TensorImpl (Note [inline autograd meta])");

// Null if t never touched autograd.
inline AutogradMeta* autograd_meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta());
}
inline AutogradMeta& materialize_autograd_meta(const Tensor& t) {
  if (AutogradMeta* m = autograd_meta(t)) return *m;
  return t.impl()->emplace_autograd_meta<AutogradMeta>();
}

// True when grad mode is on and any input requires grad.
inline bool any_requires_grad(ArrayRef<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (!t->defined()) continue;
    // AutogradMeta is final: the call below is inlined, not virtual.
    const AutogradMeta* m = autograd_meta(*t);
    if (m && m->requires_grad()) return true;
  }
  return false;
}

// The edge a gradient for t flows into: its grad_fn, or its leaf accumulator.
Edge gradient_edge(const Tensor& t);
// Appends t's edge to a node's list; the out-of-line part of
// collect_next_edges (undefined tensors, leaves, views).
void append_gradient_edge(const Tensor& t, EdgeList& edges);
// Fills a node's (empty) edge list in place: moving a list costs more than
// recording it. Inline, because the common input (an op's output, not a
// view) takes a dozen instructions and W3 counts each one.
[[gnu::always_inline]] inline void collect_next_edges(ArrayRef<const Tensor*> inputs, EdgeList& edges) {
  if (inputs.size() > EdgeList::kInline) edges.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    const AutogradMeta* m = t->defined() ? autograd_meta(*t) : nullptr;
    if (m && !m->is_view_) {
      if (m->grad_fn_) {
        edges.emplace_back(m->grad_fn_, m->output_nr_);
        continue;
      }
      if (m->leaf_) {
        if (auto acc = m->leaf_->grad_accumulator.lock()) {  // a leaf seen before
          edges.push_back(Edge{std::move(acc), 0});
          continue;
        }
      }
    }
    append_gradient_edge(*t, edges);
  }
}
// Makes fn the producer of out (output number output_nr).
[[gnu::always_inline]] inline void set_history(const Tensor& out, std::shared_ptr<Node> fn,
                                               uint32_t output_nr = 0, bool is_view = false) {
  AutogradMeta& m = materialize_autograd_meta(out);
  m.grad_fn_ = std::move(fn);
  m.output_nr_ = output_nr;
  m.is_view_ = is_view;
  if (is_view) m.view_version_ = out.version();
}

// Records a LambdaNode for a single-output op:
//   if (any_requires_grad({&a, &b})) record("MulBackward0", {&a, &b}, {sa, sb}, out, fn);
// The node is moved, never copied, into out's history: per-op recording cost
// is what W3 measures, and each shared_ptr copy is an atomic increment.
template <typename F>
void record(const char* name, ArrayRef<const Tensor*> inputs, std::vector<SavedTensor> saved,
            const Tensor& out, F&& fn, bool is_view = false) {
  using Fn = std::remove_cvref_t<F>;
  auto node = make_node<LambdaNode<Fn>>(name, std::move(saved), Fn(std::forward<F>(fn)));
  collect_next_edges(inputs, node->next_edges);
  node->bind_saved_outputs(node);
  set_history(out, std::move(node), 0, is_view);
}
// The same for an op that saves no tensors (add, sub, views, ...): no list
// to build, move and free on every recorded op.
template <typename F>
void record(const char* name, ArrayRef<const Tensor*> inputs, const Tensor& out, F&& fn, bool is_view = false) {
  using Fn = std::remove_cvref_t<F>;
  auto node = make_node<LambdaNodeNoSaved<Fn>>(name, Fn(std::forward<F>(fn)));
  collect_next_edges(inputs, node->next_edges);
  set_history(out, std::move(node), 0, is_view);
}

// In-place ops under autograd: refuses leaves that require grad and views
// (PyTorch's messages), otherwise returns normally.
void check_inplace(const Tensor& self, const char* op);

}  // namespace ember

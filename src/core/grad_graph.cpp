// Graph bookkeeping: saved tensors, node numbering, edges and history.
#include "ember/core/grad_graph.h"

namespace ember {

namespace detail {
thread_local constinit uint64_t tls_next_sequence_nr = 0;
}  // namespace detail

namespace {

Tensor alias_without_grad(const Tensor& t) {
  return Tensor(make_intrusive<TensorImpl>(t.storage(), t.dtype(), DimVector(t.sizes()),
                                           DimVector(t.strides()), t.storage_offset()));
}

std::string describe(const Tensor& t) {
  return fmt::format("[{} [{}]]", to_string(t.dtype()), fmt::join(t.sizes(), ", "));
}

}  // namespace

struct SavedTensor::State {
  Tensor data;
  uint32_t version = 0;
  bool is_output = false;
  bool released = false;
  std::weak_ptr<Node> grad_fn;  // outputs only
  uint32_t output_nr = 0;
  std::string producer;  // name of the node that made the tensor, if any
};

SavedTensor::SavedTensor(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  state_ = std::allocate_shared<State>(PoolAllocator<State>{});
  state_->version = t.version();
  state_->is_output = is_output;
  if (AutogradMeta* m = autograd_meta(t); m && m->grad_fn_) state_->producer = m->grad_fn_->name();
  if (is_output) {
    state_->data = alias_without_grad(t);
    if (AutogradMeta* m = autograd_meta(t)) {
      state_->grad_fn = m->grad_fn_;
      state_->output_nr = m->output_nr_;
    }
  } else {
    state_->data = t;
  }
}

void SavedTensor::release() {
  if (!state_) return;
  state_->released = true;
  state_->data = Tensor();
}

void SavedTensor::bind_output(const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  if (!state_ || !state_->is_output) return;
  state_->grad_fn = fn;
  state_->output_nr = output_nr;
  state_->producer = fn->name();
}

Tensor SavedTensor::unpack() const {
  if (!state_) return Tensor();
  EMBER_CHECK(!state_->released,
              "Trying to backward through the graph a second time (or directly access saved tensors "
              "after they have already been freed). Saved intermediate values of the graph are freed "
              "when you call backward() or autograd::grad(). Pass retain_graph=true if you need to "
              "backward through the graph a second time.");
  const Tensor& d = state_->data;
  if (d.version() != state_->version) {
    std::string which = state_->producer.empty()
                            ? std::string()
                            : fmt::format(", which is output {} of {},", state_->output_nr, state_->producer);
    EMBER_ERROR(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: {}{} is at version {}; expected version {} instead. Hint: an in-place op (add_, "
        "mul_, relu_, ...) changed it after it was saved for backward; use the out-of-place op or "
        "clone() it first, and run under DetectAnomalyGuard to name the op whose backward failed.",
        describe(d), which, d.version(), state_->version);
  }
  if (!state_->is_output || !GradMode::is_enabled()) return d;
  // Double backward needs the output's own history back.
  std::shared_ptr<Node> fn = state_->grad_fn.lock();
  if (!fn) return d;
  Tensor t = alias_without_grad(d);
  auto& meta = t.impl()->emplace_autograd_meta<AutogradMeta>();
  meta.grad_fn_ = std::move(fn);
  meta.output_nr_ = state_->output_nr;
  return t;
}

Node::~Node() {
  thread_local std::vector<Edge> pending;
  thread_local bool draining = false;
  // Only an edge holding the last reference can recurse; the others are
  // dropped by clear() below without touching the queue.
  for (Edge& e : next_edges)
    if (e.fn && e.fn.use_count() == 1) pending.push_back(std::move(e));
  next_edges.clear();
  if (draining) return;  // an outer ~Node drains the queue
  draining = true;
  while (!pending.empty()) {
    Edge e = std::move(pending.back());
    pending.pop_back();
    e.fn.reset();  // may run a child's ~Node, which queues its edges
  }
  draining = false;
}

void Node::add_pre_hook(uint32_t output_nr, GradHook hook) {
  if (!pre_hooks_) pre_hooks_ = std::make_unique<std::vector<PreHook>>();
  pre_hooks_->emplace_back(output_nr, std::move(hook));
}

AccumulateGrad::AccumulateGrad(Tensor v) : Node("AccumulateGrad"), variable(std::move(v)) {}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = autograd_meta(t);
  if (!m) return {};
  if (m->grad_fn_) return {m->grad_fn_, m->output_nr_};
  if (!m->requires_grad_) return {};
  AutogradLeafState& leaf = m->leaf();
  std::shared_ptr<Node> acc = leaf.grad_accumulator.lock();
  if (!acc) {
    acc = make_node<AccumulateGrad>(t);
    leaf.grad_accumulator = acc;
  }
  return {std::move(acc), 0};
}

void append_gradient_edge(const Tensor& t, EdgeList& edges) {
  if (!t.defined()) {
    edges.emplace_back();
    return;
  }
  AutogradMeta* m = autograd_meta(t);
  if (m && m->is_view_ && m->requires_grad())
    EMBER_CHECK(t.version() == m->view_version_,
                "a view of a tensor that requires grad was used after it or its base was modified "
                "in-place (storage version {} at the view's creation, {} now); its gradient history "
                "is stale. Create the view after the in-place op, or clone() it before modifying.",
                m->view_version_, t.version());
  edges.push_back(gradient_edge(t));
}

void check_inplace(const Tensor& self, const char* op) {
  AutogradMeta* m = autograd_meta(self);
  if (!m || !GradMode::is_enabled()) return;
  EMBER_CHECK(!(m->requires_grad_ && !m->grad_fn_),
              "{}: a leaf Variable that requires grad is being used in an in-place operation. Wrap the "
              "update in NoGradGuard (as optimizers do) or use the out-of-place op.",
              op);
  EMBER_CHECK(!(m->is_view_ && m->requires_grad()),
              "{}: in-place operation on a view of a tensor that requires grad is not supported (its "
              "gradient history would have to be rebased). Use the out-of-place op, or clone() the view "
              "first.",
              op);
}

}  // namespace ember

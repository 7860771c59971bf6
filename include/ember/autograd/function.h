// User-defined differentiable ops (torch::autograd::Function):
//
//   struct Cube : autograd::Function<Cube> {
//     static Tensor forward(AutogradContext* ctx, const Tensor& x) {
//       ctx->save_for_backward({x});
//       return x * x * x;
//     }
//     static variable_list backward(AutogradContext* ctx, const variable_list& g) {
//       Tensor x = ctx->get_saved_variables()[0];
//       return {g[0] * 3 * x * x};
//     }
//   };
//   Tensor y = Cube::apply(x);
//
// forward runs without recording; backward returns one gradient per Tensor
// argument of forward (undefined = zero).
#pragma once

#include <any>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "ember/core/grad_graph.h"

namespace ember::autograd {

class AutogradContext {
 public:
  void save_for_backward(const variable_list& tensors) {
    saved_.clear();
    for (const Tensor& t : tensors) saved_.emplace_back(t, false);
  }
  variable_list get_saved_variables() const {
    variable_list out;
    for (const SavedTensor& s : saved_) out.push_back(s.unpack());
    return out;
  }
  // Whether the i-th Tensor argument of forward needs a gradient.
  bool needs_input_grad(size_t i) const { return i < needs_.size() && needs_[i]; }
  // Anything else backward needs (sizes, flags...).
  std::unordered_map<std::string, std::any> saved_data;

  std::vector<SavedTensor>& saved() { return saved_; }
  std::vector<bool> needs_;

 private:
  std::vector<SavedTensor> saved_;
};

namespace detail {

template <typename T>
void collect_tensor(std::vector<const Tensor*>& out, const T& arg) {
  if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) out.push_back(&arg);
}

template <typename F>
class CppNode final : public Node {
 public:
  CppNode() : Node(typeid(F).name()) {}
  variable_list apply(variable_list&& grads) override {
    variable_list out = F::backward(&ctx, grads);
    EMBER_CHECK(out.size() == next_edges.size(),
                "autograd::Function backward returned {} gradients, but forward took {} Tensor inputs",
                out.size(), next_edges.size());
    return out;
  }
  void release_variables() override {
    for (SavedTensor& s : ctx.saved()) s.release();
  }
  AutogradContext ctx;
};

}  // namespace detail

template <typename F>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    std::vector<const Tensor*> inputs;
    (detail::collect_tensor(inputs, args), ...);
    auto node = make_node<detail::CppNode<F>>();
    for (const Tensor* t : inputs) node->ctx.needs_.push_back(t->requires_grad());
    bool record_graph = any_requires_grad(inputs);
    auto outputs = [&] {
      NoGradGuard no_grad;
      return F::forward(&node->ctx, std::forward<Args>(args)...);
    }();
    if (!record_graph) return outputs;
    collect_next_edges(inputs, node->next_edges);
    if constexpr (std::is_same_v<decltype(outputs), Tensor>) {
      node->num_outputs = 1;
      outputs = outputs.detach();
      set_history(outputs, node, 0);
    } else {
      node->num_outputs = static_cast<uint32_t>(outputs.size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        outputs[i] = outputs[i].detach();
        set_history(outputs[i], node, static_cast<uint32_t>(i));
      }
    }
    return outputs;
  }
};

}  // namespace ember::autograd

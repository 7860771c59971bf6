// SGD: the per-parameter update (fused loop and tensor-op reference) and the
// class that walks the groups.
#include "ember/optim/sgd.h"

#include <cmath>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "optim/fused.h"
#include "optim/option_util.h"
#include "optim/reference.h"

namespace ember::optim {

OptionMap SGDOptions::to_map() const {
  return {{"lr", lr},
          {"momentum", momentum},
          {"dampening", dampening},
          {"weight_decay", weight_decay},
          {"nesterov", nesterov ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

SGDOptions SGDOptions::from_map(const OptionMap& m) {
  using detail::option;
  SGDOptions o;
  o.lr = option(m, "lr", "SGD");
  o.momentum = option(m, "momentum", "SGD");
  o.dampening = option(m, "dampening", "SGD");
  o.weight_decay = option(m, "weight_decay", "SGD");
  o.nesterov = option(m, "nesterov", "SGD") != 0;
  o.maximize = option(m, "maximize", "SGD") != 0;
  return o;
}

namespace detail {

void sgd_update_reference(const Tensor& param, const Tensor& grad, Tensor& buf, const SGDOptions& o) {
  Tensor d_p = o.maximize ? neg(grad) : grad;
  if (o.weight_decay != 0) d_p = d_p.add(param, o.weight_decay);
  if (o.momentum != 0) {
    if (!buf.defined()) {
      buf = d_p.detach().clone();
    } else {
      buf.mul_(o.momentum).add_(d_p, 1 - o.dampening);
    }
    d_p = o.nesterov ? d_p.add(buf, o.momentum) : buf;
  }
  Tensor p = param;
  p.add_(d_p, -o.lr);
}

// Constants by value and flags as template parameters: a branch-free loop
// the compiler vectorizes.
template <typename T, bool WeightDecay, bool Momentum, bool First, bool Nesterov>
void sgd_loop(T* __restrict p, const T* __restrict g, T* __restrict b, const T sign, const T lr, const T wd,
              const T mom, const T damp, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    T d = sign * g[i];
    if constexpr (WeightDecay) d += wd * p[i];
    if constexpr (Momentum) {
      const T bi = First ? d : b[i] * mom + damp * d;
      b[i] = bi;
      d = Nesterov ? d + mom * bi : bi;
    }
    p[i] -= lr * d;
  }
}

template <typename T>
void sgd_update_fused(const Tensor& param, const Tensor& grad, Tensor& buf, const SGDOptions& o) {
  const bool use_momentum = o.momentum != 0;
  const bool first = use_momentum && !buf.defined();
  if (first) buf = empty_like(param);
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* b = use_momentum ? buf.data_ptr<T>() : nullptr;
  const T sign = static_cast<T>(o.maximize ? -1 : 1), lr = static_cast<T>(o.lr);
  const T wd = static_cast<T>(o.weight_decay), mom = static_cast<T>(o.momentum);
  const T damp = static_cast<T>(1 - o.dampening);
  bool_dispatch(
      [&](auto has_wd, auto has_mom, auto is_first, auto nesterov) {
        for_each_chunk(param.numel(), [&](int64_t begin, int64_t end) {
          sgd_loop<T, decltype(has_wd)::value, decltype(has_mom)::value, decltype(is_first)::value,
                   decltype(nesterov)::value>(p, g, b, sign, lr, wd, mom, damp, begin, end);
        });
      },
      o.weight_decay != 0, use_momentum, first, o.nesterov);
  if (use_momentum) buf.bump_version();
  param.bump_version();
}

}  // namespace detail

void sgd_update(const Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const SGDOptions& o) {
  bool fused = o.momentum == 0 || !momentum_buffer.defined() ? detail::fusable(param, {&grad})
                                                               : detail::fusable(param, {&grad, &momentum_buffer});
  if (!fused) return detail::sgd_update_reference(param, grad, momentum_buffer, o);
  detail::dispatch_float(param.dtype(), [&](auto t) {
    detail::sgd_update_fused<decltype(t)>(param, grad, momentum_buffer, o);
  });
}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions defaults) : Optimizer(std::move(groups), defaults.to_map()) {
  EMBER_CHECK(std::isnan(defaults.lr) || defaults.lr >= 0, "SGD: invalid learning rate: {}", defaults.lr);
  EMBER_CHECK(defaults.momentum >= 0, "SGD: invalid momentum value: {}", defaults.momentum);
  EMBER_CHECK(defaults.weight_decay >= 0, "SGD: invalid weight_decay value: {}", defaults.weight_decay);
  EMBER_CHECK(!defaults.nesterov || (defaults.momentum > 0 && defaults.dampening == 0),
              "SGD: Nesterov momentum requires a momentum and zero dampening (got momentum {}, dampening {})",
              defaults.momentum, defaults.dampening);
}

void SGD::step_group(ParamGroup& group) {
  const SGDOptions o = SGDOptions::from_map(group.options);
  for (const Tensor& p : group.params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    ParamState& st = state(p);
    Tensor buf;
    if (auto it = st.find("momentum_buffer"); it != st.end()) buf = it->second;
    sgd_update(p, grad, buf, o);
    if (buf.defined()) st["momentum_buffer"] = buf;
  }
}

}  // namespace ember::optim

// Adam / AdamW: the per-parameter update (fused loop and tensor-op reference)
// and the class that walks the groups.
#include "ember/optim/adam.h"

#include <algorithm>
#include <cmath>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "optim/fused.h"
#include "optim/option_util.h"
#include "optim/reference.h"

namespace ember::optim {

OptionMap AdamOptions::to_map() const {
  return {{"lr", lr},
          {"beta1", beta1},
          {"beta2", beta2},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"amsgrad", amsgrad ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

AdamOptions AdamOptions::from_map(const OptionMap& m, const char* who) {
  using detail::option;
  AdamOptions o;
  o.lr = option(m, "lr", who);
  o.beta1 = option(m, "beta1", who);
  o.beta2 = option(m, "beta2", who);
  o.eps = option(m, "eps", who);
  o.weight_decay = option(m, "weight_decay", who);
  o.amsgrad = option(m, "amsgrad", who) != 0;
  o.maximize = option(m, "maximize", who) != 0;
  return o;
}

AdamState AdamState::init(const Tensor& param, bool amsgrad) {
  AdamState s;
  s.step = detail::new_step_tensor();
  s.exp_avg = zeros_like(param);
  s.exp_avg_sq = zeros_like(param);
  if (amsgrad) s.max_exp_avg_sq = zeros_like(param);
  return s;
}

AdamState AdamState::from(const ParamState& st) {
  AdamState s;
  auto get = [&](const char* k) {
    auto it = st.find(k);
    return it == st.end() ? Tensor() : it->second;
  };
  s.step = get("step");
  s.exp_avg = get("exp_avg");
  s.exp_avg_sq = get("exp_avg_sq");
  s.max_exp_avg_sq = get("max_exp_avg_sq");
  return s;
}

void AdamState::store(ParamState& st) const {
  st["step"] = step;
  st["exp_avg"] = exp_avg;
  st["exp_avg_sq"] = exp_avg_sq;
  if (max_exp_avg_sq.defined()) st["max_exp_avg_sq"] = max_exp_avg_sq;
}

namespace detail {

void adam_update_reference(const Tensor& param_in, const Tensor& grad_in, AdamState& s, const AdamOptions& o,
                           bool decoupled) {
  Tensor param = param_in;
  Tensor grad = o.maximize ? neg(grad_in) : grad_in;
  const double step = increment_step(s.step);
  if (decoupled) {
    param.mul_(1 - o.lr * o.weight_decay);
  } else if (o.weight_decay != 0) {
    grad = grad.add(param, o.weight_decay);
  }
  s.exp_avg.mul_(o.beta1).add_(grad, 1 - o.beta1);
  s.exp_avg_sq.mul_(o.beta2).addcmul_(grad, grad, 1 - o.beta2);
  const double bias_correction1 = 1 - std::pow(o.beta1, step);
  const double bias_correction2 = 1 - std::pow(o.beta2, step);
  const double step_size = o.lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  Tensor denom;
  if (o.amsgrad) {
    if (!s.max_exp_avg_sq.defined()) s.max_exp_avg_sq = zeros_like(param);
    s.max_exp_avg_sq.copy_(maximum(s.max_exp_avg_sq, s.exp_avg_sq));
    denom = (s.max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(o.eps);
  } else {
    denom = (s.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(o.eps);
  }
  param.addcdiv_(s.exp_avg, denom, -step_size);
}

// The per-element constants of one Adam step.
template <typename T>
struct AdamConstants {
  T sign, beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, decay, step_size, bias_correction2_sqrt, eps;
};

// Constants arrive by value and flags as template parameters, so the loop
// keeps them in registers and has no branches but the amsgrad max.
template <typename T, bool Decoupled, bool WeightDecay, bool Amsgrad>
void adam_loop(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax,
               const AdamConstants<T> k, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    T d = k.sign * g[i];
    if constexpr (Decoupled) p[i] *= k.decay;
    if constexpr (WeightDecay) d += k.weight_decay * p[i];
    const T mi = m[i] * k.beta1 + k.one_minus_beta1 * d;
    const T vi = v[i] * k.beta2 + k.one_minus_beta2 * (d * d);
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if constexpr (Amsgrad) second = vmax[i] = std::max(vmax[i], vi);
    const T denom = std::sqrt(second) / k.bias_correction2_sqrt + k.eps;
    p[i] -= k.step_size * (mi / denom);
  }
}

template <typename T>
void adam_update_fused(const Tensor& param, const Tensor& grad, AdamState& s, const AdamOptions& o,
                       bool decoupled) {
  const double step = increment_step(s.step);
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* m = s.exp_avg.data_ptr<T>();
  T* v = s.exp_avg_sq.data_ptr<T>();
  T* vmax = o.amsgrad ? s.max_exp_avg_sq.data_ptr<T>() : nullptr;
  const AdamConstants<T> k{static_cast<T>(o.maximize ? -1 : 1),
                           static_cast<T>(o.beta1),
                           static_cast<T>(1 - o.beta1),
                           static_cast<T>(o.beta2),
                           static_cast<T>(1 - o.beta2),
                           static_cast<T>(o.weight_decay),
                           static_cast<T>(1 - o.lr * o.weight_decay),
                           static_cast<T>(o.lr / (1 - std::pow(o.beta1, step))),
                           static_cast<T>(std::sqrt(1 - std::pow(o.beta2, step))),
                           static_cast<T>(o.eps)};
  bool_dispatch(
      [&](auto dec, auto wd, auto ams) {
        for_each_chunk(param.numel(), [&](int64_t begin, int64_t end) {
          adam_loop<T, decltype(dec)::value, decltype(wd)::value, decltype(ams)::value>(p, g, m, v, vmax, k, begin,
                                                                                      end);
        });
      },
      decoupled, !decoupled && o.weight_decay != 0, o.amsgrad);
  param.bump_version();
}

}  // namespace detail

void adam_update(const Tensor& param, const Tensor& grad, AdamState& s, const AdamOptions& o, bool decoupled) {
  if (!s.step.defined()) s = AdamState::init(param, o.amsgrad);
  // A group may turn amsgrad on after state exists (load, per-group edit): start its max at zero.
  if (o.amsgrad && !s.max_exp_avg_sq.defined()) s.max_exp_avg_sq = zeros_like(param);
  bool fused = o.amsgrad ? detail::fusable(param, {&grad, &s.exp_avg, &s.exp_avg_sq, &s.max_exp_avg_sq})
                         : detail::fusable(param, {&grad, &s.exp_avg, &s.exp_avg_sq});
  if (!fused) return detail::adam_update_reference(param, grad, s, o, decoupled);
  detail::dispatch_float(param.dtype(), [&](auto t) {
    detail::adam_update_fused<decltype(t)>(param, grad, s, o, decoupled);
  });
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults) : Adam(std::move(groups), defaults, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions d, bool decoupled)
    : Optimizer(std::move(groups), d.to_map()), decoupled_(decoupled) {
  EMBER_CHECK(d.lr >= 0, "{}: invalid learning rate: {}", name(), d.lr);
  EMBER_CHECK(d.eps >= 0, "{}: invalid epsilon value: {}", name(), d.eps);
  EMBER_CHECK(d.beta1 >= 0 && d.beta1 < 1, "{}: invalid beta parameter at index 0: {}", name(), d.beta1);
  EMBER_CHECK(d.beta2 >= 0 && d.beta2 < 1, "{}: invalid beta parameter at index 1: {}", name(), d.beta2);
  EMBER_CHECK(d.weight_decay >= 0, "{}: invalid weight_decay value: {}", name(), d.weight_decay);
}

void Adam::step_group(ParamGroup& group) {
  const AdamOptions o = AdamOptions::from_map(group.options, name());
  for (const Tensor& p : group.params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    ParamState& st = state(p);
    AdamState s = AdamState::from(st);
    adam_update(p, grad, s, o, decoupled_);
    s.store(st);
  }
}

}  // namespace ember::optim

// RMSprop: the per-parameter update (fused loop and tensor-op reference) and
// the class that walks the groups.
#include "ember/optim/rmsprop.h"

#include <cmath>

#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "optim/fused.h"
#include "optim/option_util.h"
#include "optim/reference.h"

namespace ember::optim {

OptionMap RMSpropOptions::to_map() const {
  return {{"lr", lr},
          {"alpha", alpha},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"momentum", momentum},
          {"centered", centered ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

RMSpropOptions RMSpropOptions::from_map(const OptionMap& m) {
  using detail::option;
  RMSpropOptions o;
  o.lr = option(m, "lr", "RMSprop");
  o.alpha = option(m, "alpha", "RMSprop");
  o.eps = option(m, "eps", "RMSprop");
  o.weight_decay = option(m, "weight_decay", "RMSprop");
  o.momentum = option(m, "momentum", "RMSprop");
  o.centered = option(m, "centered", "RMSprop") != 0;
  o.maximize = option(m, "maximize", "RMSprop") != 0;
  return o;
}

RMSpropState RMSpropState::init(const Tensor& param, const RMSpropOptions& o) {
  RMSpropState s;
  s.step = detail::new_step_tensor();
  s.square_avg = zeros_like(param);
  if (o.momentum > 0) s.momentum_buffer = zeros_like(param);
  if (o.centered) s.grad_avg = zeros_like(param);
  return s;
}

RMSpropState RMSpropState::from(const ParamState& st) {
  auto get = [&](const char* k) {
    auto it = st.find(k);
    return it == st.end() ? Tensor() : it->second;
  };
  RMSpropState s;
  s.step = get("step");
  s.square_avg = get("square_avg");
  s.momentum_buffer = get("momentum_buffer");
  s.grad_avg = get("grad_avg");
  return s;
}

void RMSpropState::store(ParamState& st) const {
  st["step"] = step;
  st["square_avg"] = square_avg;
  if (momentum_buffer.defined()) st["momentum_buffer"] = momentum_buffer;
  if (grad_avg.defined()) st["grad_avg"] = grad_avg;
}

namespace detail {

void rmsprop_update_reference(const Tensor& param_in, const Tensor& grad_in, RMSpropState& s,
                              const RMSpropOptions& o) {
  Tensor param = param_in;
  Tensor grad = o.maximize ? neg(grad_in) : grad_in;
  increment_step(s.step);
  if (o.weight_decay != 0) grad = grad.add(param, o.weight_decay);
  s.square_avg.mul_(o.alpha).addcmul_(grad, grad, 1 - o.alpha);
  Tensor avg;
  if (o.centered) {
    s.grad_avg.mul_(o.alpha).add_(grad, 1 - o.alpha);
    avg = addcmul(s.square_avg, s.grad_avg, s.grad_avg, -1).sqrt_();
  } else {
    avg = s.square_avg.sqrt();
  }
  avg.add_(o.eps);
  if (o.momentum > 0) {
    s.momentum_buffer.mul_(o.momentum).addcdiv_(grad, avg);
    param.add_(s.momentum_buffer, -o.lr);
  } else {
    param.addcdiv_(grad, avg, -o.lr);
  }
}

template <typename T>
void rmsprop_update_fused(const Tensor& param, const Tensor& grad, RMSpropState& s, const RMSpropOptions& o) {
  increment_step(s.step);
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* sq = s.square_avg.data_ptr<T>();
  T* buf = o.momentum > 0 ? s.momentum_buffer.data_ptr<T>() : nullptr;
  T* ga = o.centered ? s.grad_avg.data_ptr<T>() : nullptr;
  const T alpha = static_cast<T>(o.alpha), one_minus_alpha = static_cast<T>(1 - o.alpha);
  const T lr = static_cast<T>(o.lr), eps = static_cast<T>(o.eps), wd = static_cast<T>(o.weight_decay);
  const T mom = static_cast<T>(o.momentum);
  const bool maximize = o.maximize, centered = o.centered, use_momentum = o.momentum > 0;
  for_each_chunk(param.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (wd != 0) d += wd * p[i];
      sq[i] = sq[i] * alpha + one_minus_alpha * (d * d);
      T avg;
      if (centered) {
        ga[i] = ga[i] * alpha + one_minus_alpha * d;
        avg = std::sqrt(sq[i] - ga[i] * ga[i]);
      } else {
        avg = std::sqrt(sq[i]);
      }
      avg += eps;
      if (use_momentum) {
        buf[i] = buf[i] * mom + d / avg;
        p[i] -= lr * buf[i];
      } else {
        p[i] -= lr * (d / avg);
      }
    }
  });
  param.bump_version();
}

}  // namespace detail

void rmsprop_update(const Tensor& param, const Tensor& grad, RMSpropState& s, const RMSpropOptions& o) {
  if (!s.step.defined()) s = RMSpropState::init(param, o);
  if (o.momentum > 0 && !s.momentum_buffer.defined()) s.momentum_buffer = zeros_like(param);
  if (o.centered && !s.grad_avg.defined()) s.grad_avg = zeros_like(param);
  bool fused = detail::fusable(param, {&grad, &s.square_avg, o.momentum > 0 ? &s.momentum_buffer : &grad,
                                       o.centered ? &s.grad_avg : &grad});
  if (!fused) return detail::rmsprop_update_reference(param, grad, s, o);
  detail::dispatch_float(param.dtype(), [&](auto t) { detail::rmsprop_update_fused<decltype(t)>(param, grad, s, o); });
}

RMSprop::RMSprop(std::vector<ParamGroup> groups, RMSpropOptions d) : Optimizer(std::move(groups), d.to_map()) {
  EMBER_CHECK(d.lr >= 0, "RMSprop: invalid learning rate: {}", d.lr);
  EMBER_CHECK(d.eps >= 0, "RMSprop: invalid epsilon value: {}", d.eps);
  EMBER_CHECK(d.momentum >= 0, "RMSprop: invalid momentum value: {}", d.momentum);
  EMBER_CHECK(d.weight_decay >= 0, "RMSprop: invalid weight_decay value: {}", d.weight_decay);
  EMBER_CHECK(d.alpha >= 0, "RMSprop: invalid alpha value: {}", d.alpha);
}

void RMSprop::step_group(ParamGroup& group) {
  const RMSpropOptions o = RMSpropOptions::from_map(group.options);
  for (const Tensor& p : group.params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    ParamState& st = state(p);
    RMSpropState s = RMSpropState::from(st);
    rmsprop_update(p, grad, s, o);
    s.store(st);
  }
}

}  // namespace ember::optim

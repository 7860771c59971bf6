// Adagrad: the per-parameter update (fused loop and tensor-op reference) and
// the class that walks the groups.
#include "ember/optim/adagrad.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "optim/fused.h"
#include "optim/option_util.h"
#include "optim/reference.h"

namespace ember::optim {

OptionMap AdagradOptions::to_map() const {
  return {{"lr", lr},
          {"lr_decay", lr_decay},
          {"weight_decay", weight_decay},
          {"initial_accumulator_value", initial_accumulator_value},
          {"eps", eps},
          {"maximize", maximize ? 1.0 : 0.0}};
}

AdagradOptions AdagradOptions::from_map(const OptionMap& m) {
  using detail::option;
  AdagradOptions o;
  o.lr = option(m, "lr", "Adagrad");
  o.lr_decay = option(m, "lr_decay", "Adagrad");
  o.weight_decay = option(m, "weight_decay", "Adagrad");
  o.initial_accumulator_value = option(m, "initial_accumulator_value", "Adagrad");
  o.eps = option(m, "eps", "Adagrad");
  o.maximize = option(m, "maximize", "Adagrad") != 0;
  return o;
}

AdagradState AdagradState::init(const Tensor& param, const AdagradOptions& o) {
  AdagradState s;
  s.step = detail::new_step_tensor();
  s.sum = full_like(param, o.initial_accumulator_value);
  return s;
}

AdagradState AdagradState::from(const ParamState& st) {
  AdagradState s;
  if (auto it = st.find("step"); it != st.end()) s.step = it->second;
  if (auto it = st.find("sum"); it != st.end()) s.sum = it->second;
  return s;
}

void AdagradState::store(ParamState& st) const {
  st["step"] = step;
  st["sum"] = sum;
}

namespace detail {

void adagrad_update_reference(const Tensor& param_in, const Tensor& grad_in, AdagradState& s,
                              const AdagradOptions& o) {
  Tensor param = param_in;
  const double step = increment_step(s.step);
  Tensor grad = o.maximize ? neg(grad_in) : grad_in;
  if (o.weight_decay != 0) grad = grad.add(param, o.weight_decay);
  const double clr = o.lr / (1 + (step - 1) * o.lr_decay);
  s.sum.addcmul_(grad, grad, 1);
  Tensor std = s.sum.sqrt().add_(o.eps);
  param.addcdiv_(grad, std, -clr);
}

template <typename T>
void adagrad_update_fused(const Tensor& param, const Tensor& grad, AdagradState& s, const AdagradOptions& o) {
  const double step = increment_step(s.step);
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* sum = s.sum.data_ptr<T>();
  const T clr = static_cast<T>(o.lr / (1 + (step - 1) * o.lr_decay));
  const T eps = static_cast<T>(o.eps), wd = static_cast<T>(o.weight_decay);
  const bool maximize = o.maximize;
  for_each_chunk(param.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T d = maximize ? -g[i] : g[i];
      if (wd != 0) d += wd * p[i];
      sum[i] += d * d;
      p[i] -= clr * (d / (std::sqrt(sum[i]) + eps));
    }
  });
  param.bump_version();
}

}  // namespace detail

void adagrad_update(const Tensor& param, const Tensor& grad, AdagradState& s, const AdagradOptions& o) {
  if (!s.step.defined()) s = AdagradState::init(param, o);
  if (!detail::fusable(param, {&grad, &s.sum})) return detail::adagrad_update_reference(param, grad, s, o);
  detail::dispatch_float(param.dtype(), [&](auto t) { detail::adagrad_update_fused<decltype(t)>(param, grad, s, o); });
}

Adagrad::Adagrad(std::vector<ParamGroup> groups, AdagradOptions d) : Optimizer(std::move(groups), d.to_map()) {
  EMBER_CHECK(d.lr >= 0, "Adagrad: invalid learning rate: {}", d.lr);
  EMBER_CHECK(d.lr_decay >= 0, "Adagrad: invalid lr_decay value: {}", d.lr_decay);
  EMBER_CHECK(d.weight_decay >= 0, "Adagrad: invalid weight_decay value: {}", d.weight_decay);
  EMBER_CHECK(d.initial_accumulator_value >= 0, "Adagrad: invalid initial_accumulator_value value: {}",
              d.initial_accumulator_value);
  EMBER_CHECK(d.eps >= 0, "Adagrad: invalid epsilon value: {}", d.eps);
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    const AdagradOptions o = AdagradOptions::from_map(g.options);
    for (const Tensor& p : g.params) AdagradState::init(p, o).store(state(p));
  }
}

void Adagrad::step_group(ParamGroup& group) {
  const AdagradOptions o = AdagradOptions::from_map(group.options);
  for (const Tensor& p : group.params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    ParamState& st = state(p);
    AdagradState s = AdagradState::from(st);
    adagrad_update(p, grad, s, o);
    s.store(st);
  }
}

}  // namespace ember::optim

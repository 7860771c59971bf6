// SequentialLR (PyTorch 1.13's hand-over at milestones).
#include "ember/optim/sequential_lr.h"

#include <algorithm>

#include "option_util.h"

namespace ember::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer, -1), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  EMBER_CHECK(!schedulers_.empty(), "SequentialLR: expected at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    EMBER_CHECK(schedulers_[i] && &schedulers_[i]->optimizer() == &optimizer,
                "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers "
                "at index {} to be different than the optimizer passed in.",
                i);
  }
  EMBER_CHECK(milestones_.size() + 1 == schedulers_.size(),
              "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
              "milestone points, but got number of schedulers {} and the number of milestones to be equal to {}",
              schedulers_.size(), milestones_.size());
  // Undo what the schedulers' own first steps did, then restart the first.
  last_epoch_ = last_epoch + 1;
  for (ParamGroup& g : optimizer.param_groups()) g.set_lr(g.get("initial_lr"));
  for (auto& s : schedulers_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t idx = static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                                         milestones_.begin());
  LRScheduler& s = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    s.step(int64_t{0});
  } else {
    s.step();
  }
  last_lr_ = s.get_last_lr();
}

void SequentialLR::step(int64_t) {
  EMBER_ERROR("SequentialLR.step takes no epoch; call step() once per epoch");
}

SchedulerState SequentialLR::state_dict() const {
  SchedulerState s;
  s["last_epoch"] = static_cast<double>(last_epoch_);
  for (size_t i = 0; i < last_lr_.size(); ++i) s[fmt::format("_last_lr.{}", i)] = last_lr_[i];
  for (size_t i = 0; i < schedulers_.size(); ++i)
    for (const auto& [k, v] : schedulers_[i]->state_dict()) s[fmt::format("_schedulers.{}.{}", i, k)] = v;
  return s;
}

void SequentialLR::load_state_dict(const SchedulerState& s) {
  auto it = s.find("last_epoch");
  EMBER_CHECK(it != s.end(), "SequentialLR.load_state_dict: missing key 'last_epoch'");
  last_epoch_ = detail::state_count(it->second, "last_epoch", "SequentialLR");
  for (size_t i = 0; i < last_lr_.size(); ++i) {
    auto lr = s.find(fmt::format("_last_lr.{}", i));
    EMBER_CHECK(lr != s.end(), "SequentialLR.load_state_dict: missing key '_last_lr.{}'", i);
    last_lr_[i] = lr->second;
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const std::string prefix = fmt::format("_schedulers.{}.", i);
    SchedulerState sub;
    for (const auto& [k, v] : s)
      if (k.rfind(prefix, 0) == 0) sub[k.substr(prefix.size())] = v;
    schedulers_[i]->load_state_dict(sub);
  }
}

}  // namespace ember::optim

// nn::Module: registry, traversal, mode, state_dict and repr.
#include "ember/nn/module.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_set>

#include "ember/core/grad_mode.h"

namespace ember::nn {

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Tensor Module::forward(const Tensor&) {
  EMBER_ERROR("{}: has no single-tensor forward(input); call its typed forward (e.g. forward(input, target))",
              type_name_);
}

ModulePtr Module::self_ptr() const {
  auto* self = const_cast<Module*>(this);
  if (ModulePtr p = self->weak_from_this().lock()) return p;
  return ModulePtr(ModulePtr{}, self);  // aliasing, owns nothing
}

// ---- registration ----

void Module::check_new_name(const std::string& name, const char* what) const {
  EMBER_CHECK(!name.empty(), "{}: {} name must not be empty", type_name_, what);
  EMBER_CHECK(name.find('.') == std::string::npos, "{}: {} name '{}' must not contain '.'", type_name_, what,
              name);
  auto taken = [&](const std::deque<Slot>& slots) {
    for (const Slot& s : slots)
      if (s.name == name) return true;
    return false;
  };
  bool child = false;
  for (const auto& c : children_) child = child || c.first == name;
  EMBER_CHECK(!taken(params_) && !taken(buffers_) && !child, "{}: attribute '{}' already exists; cannot register {} '{}'",
              type_name_, name, what, name);
}

Tensor& Module::register_parameter(std::string name, Tensor value, bool requires_grad) {
  check_new_name(name, "parameter");
  if (value.defined()) {
    EMBER_CHECK(value.is_floating_point() || !requires_grad,
                "{}: parameter '{}' must be floating point to require grad, got {}", type_name_, name,
                to_string(value.dtype()));
    if (!value.is_leaf()) value = value.detach();
    value.requires_grad_(requires_grad);
  }
  params_.push_back({std::move(name), std::move(value), true});
  return params_.back().value;
}

Tensor& Module::register_buffer(std::string name, Tensor value, bool persistent) {
  check_new_name(name, "buffer");
  buffers_.push_back({std::move(name), std::move(value), persistent});
  return buffers_.back().value;
}

void Module::register_module_impl(std::string name, ModulePtr module) {
  check_new_name(name, "submodule");
  EMBER_CHECK(module != nullptr, "{}: submodule '{}' is null", type_name_, name);
  children_.emplace_back(std::move(name), std::move(module));
}

void Module::replace_module(const std::string& name, ModulePtr module) {
  EMBER_CHECK(module != nullptr, "{}: replacement for submodule '{}' is null", type_name_, name);
  for (auto& c : children_) {
    if (c.first == name) {
      c.second = std::move(module);
      return;
    }
  }
  EMBER_ERROR("{}: no submodule named '{}' to replace", type_name_, name);
}

// ---- traversal ----

void Module::collect_slots(const std::string& prefix, bool params, bool recurse, NamedTensors& out,
                           std::vector<const TensorImpl*>& seen) const {
  for (const Slot& s : params ? params_ : buffers_) {
    if (!s.value.defined()) continue;
    const TensorImpl* impl = s.value.impl();
    bool dup = false;
    for (const TensorImpl* p : seen) dup = dup || p == impl;
    if (dup) continue;
    seen.push_back(impl);
    out.emplace_back(prefix + s.name, s.value);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect_slots(prefix + name + ".", params, true, out, seen);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  std::vector<const TensorImpl*> seen;
  collect_slots("", true, recurse, out, seen);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  std::vector<const TensorImpl*> seen;
  collect_slots("", false, recurse, out, seen);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

NamedModules Module::named_children() const { return children_; }

std::vector<ModulePtr> Module::children() const {
  std::vector<ModulePtr> out;
  for (const auto& c : children_) out.push_back(c.second);
  return out;
}

NamedModules Module::named_modules() const {
  NamedModules out;
  std::unordered_set<const Module*> seen;
  // Iterative pre-order walk (deep models must not recurse deeply).
  std::vector<std::pair<std::string, ModulePtr>> stack{{"", self_ptr()}};
  while (!stack.empty()) {
    auto [name, m] = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(m.get()).second) continue;
    out.emplace_back(name, m);
    for (auto it = m->children_.rbegin(); it != m->children_.rend(); ++it)
      stack.emplace_back(name.empty() ? it->first : name + "." + it->first, it->second);
  }
  return out;
}

std::vector<ModulePtr> Module::modules() const {
  std::vector<ModulePtr> out;
  for (auto& [name, m] : named_modules()) out.push_back(m);
  return out;
}

ModulePtr Module::get_submodule(const std::string& dotted_name) const {
  ModulePtr cur = self_ptr();
  size_t start = 0;
  while (start <= dotted_name.size() && !dotted_name.empty()) {
    size_t dot = dotted_name.find('.', start);
    std::string part = dotted_name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    ModulePtr next;
    for (const auto& c : cur->children_)
      if (c.first == part) next = c.second;
    if (!next) return nullptr;
    cur = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

// ---- mode and state ----

void Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.second->train(on);
}

Module& Module::to(ScalarType dtype) {
  convert_tensors([dtype](const Tensor& t) { return t.is_floating_point() && t.dtype() != dtype; },
                  [dtype](const Tensor& t) { return t.to(dtype); });
  return *this;
}

Module& Module::to(Device device) {
  check_device_available(device);
  convert_tensors([device](const Tensor& t) { return !(t.device() == device); },
                  [device](const Tensor& t) { return t.to(device); });
  return *this;
}

// Replaces each slot that `needed` selects with convert(slot); parameters
// stay leaves with their requires_grad, and their grads convert alike.
void Module::convert_tensors(const std::function<bool(const Tensor&)>& needed,
                             const std::function<Tensor(const Tensor&)>& convert) {
  NoGradGuard no_grad;
  for (const ModulePtr& m : modules()) {
    for (Slot& s : m->params_) {
      if (!s.value.defined() || !needed(s.value)) continue;
      bool rg = s.value.requires_grad();
      Tensor grad = s.value.grad();
      Tensor nv = convert(s.value.detach());
      nv.requires_grad_(rg);
      if (grad.defined()) nv.set_grad(convert(grad));
      s.value = nv;
    }
    for (Slot& s : m->buffers_) {
      if (s.value.defined() && needed(s.value)) s.value = convert(s.value);
    }
  }
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      g.zero_();
    }
  }
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& c : children_) c.second->apply(fn);
  fn(*this);
  return *this;
}

Module& Module::requires_grad_(bool requires_grad) {
  for (Tensor& p : parameters()) p.requires_grad_(requires_grad);
  return *this;
}

// ---- state_dict ----

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const Slot& s : params_)
    if (s.value.defined()) out.insert(prefix + s.name, s.value.detach());
  for (const Slot& s : buffers_)
    if (s.value.defined() && s.persistent) out.insert(prefix + s.name, s.value.detach());
  for (const auto& [name, child] : children_) child->collect_state(prefix + name + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

namespace {
std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s.vec(), ", ")); }
}  // namespace

Module::LoadResult Module::load_state_dict(const StateDict& dict, bool strict) {
  // Expected keys with their live slots, in state_dict order.
  std::vector<std::pair<std::string, Tensor*>> expected;
  std::vector<std::pair<std::string, Module*>> stack{{"", this}};
  std::vector<std::pair<std::string, Module*>> order;
  while (!stack.empty()) {  // pre-order, like collect_state
    auto [prefix, m] = stack.back();
    stack.pop_back();
    order.emplace_back(prefix, m);
    for (auto it = m->children_.rbegin(); it != m->children_.rend(); ++it)
      stack.emplace_back(prefix + it->first + ".", it->second.get());
  }
  for (auto& [prefix, m] : order) {
    for (Slot& s : m->params_)
      if (s.value.defined()) expected.emplace_back(prefix + s.name, &s.value);
    for (Slot& s : m->buffers_)
      if (s.value.defined() && s.persistent) expected.emplace_back(prefix + s.name, &s.value);
  }

  // Accept "module.<key>" when every key carries the prefix and the model
  // itself has no such names.
  const std::string kPrefix = "module.";
  bool strip = !dict.empty();
  for (const auto& [k, v] : dict) strip = strip && k.rfind(kPrefix, 0) == 0;
  for (const auto& [k, slot] : expected) strip = strip && k.rfind(kPrefix, 0) != 0;
  auto key_in_dict = [&](const std::string& k) { return strip ? kPrefix + k : k; };

  LoadResult result;
  std::vector<std::string> errors;
  std::unordered_set<std::string> used;
  NoGradGuard no_grad;
  for (auto& [key, slot] : expected) {
    const Tensor* src = dict.find(key_in_dict(key));
    if (!src) {
      result.missing_keys.push_back(key);
      continue;
    }
    used.insert(key_in_dict(key));
    if (src->sizes().vec() != slot->sizes().vec()) {
      errors.push_back(fmt::format(
          "size mismatch for {}: copying a param with shape {} from checkpoint, the shape in current model is {}.",
          key, shape_str(src->sizes()), shape_str(slot->sizes())));
      continue;
    }
    slot->copy_(*src);
  }
  for (const auto& [k, v] : dict)
    if (!used.count(k)) result.unexpected_keys.push_back(strip ? k.substr(kPrefix.size()) : k);

  auto quoted = [](const std::vector<std::string>& keys) {
    std::vector<std::string> q;
    for (const auto& k : keys) q.push_back("\"" + k + "\"");
    return fmt::format("{}", fmt::join(q, ", "));
  };
  if (strict) {
    if (!result.unexpected_keys.empty())
      errors.insert(errors.begin(), fmt::format("Unexpected key(s) in state_dict: {}. ", quoted(result.unexpected_keys)));
    if (!result.missing_keys.empty())
      errors.insert(errors.begin(), fmt::format("Missing key(s) in state_dict: {}. ", quoted(result.missing_keys)));
  }
  EMBER_CHECK(errors.empty(), "Error(s) in loading state_dict for {}:\n\t{}", type_name_, fmt::join(errors, "\n\t"));
  return result;
}

// ---- repr ----

namespace {
// PyTorch's _addindent: indent every line but the first.
std::string add_indent(const std::string& s, int spaces) {
  std::string pad(static_cast<size_t>(spaces), ' ');
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

std::string Module::repr() const {
  std::vector<std::string> extra_lines;
  std::string extra = extra_repr();
  if (!extra.empty()) {
    std::stringstream ss(extra);
    for (std::string line; std::getline(ss, line);) extra_lines.push_back(line);
  }
  std::vector<std::string> child_lines;
  for (const auto& [name, child] : children_)
    child_lines.push_back("(" + name + "): " + add_indent(child->repr(), 2));
  std::string out = type_name_ + "(";
  if (!extra_lines.empty() || !child_lines.empty()) {
    if (extra_lines.size() == 1 && child_lines.empty()) {
      out += extra_lines[0];
    } else {
      std::vector<std::string> lines = extra_lines;
      lines.insert(lines.end(), child_lines.begin(), child_lines.end());
      out += "\n  " + fmt::format("{}", fmt::join(lines, "\n  ")) + "\n";
    }
  }
  return out + ")";
}

std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: fixed for
  // 1e-4 <= |v| < 1e16, scientific otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  std::string sign;
  if (mant[0] == '-') {
    sign = "-";
    mant = mant.substr(1);
  }
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  if (exp < -4 || exp >= 16) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    return fmt::format("{}{}e{}{:02d}", sign, m, exp < 0 ? '-' : '+', std::abs(exp));
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
  }
  return sign + out;
}

std::string py_tuple(IntArrayRef v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v.vec(), ", "));
}

}  // namespace ember::nn

// Sequential, ModuleList, ModuleDict.
#include "ember/nn/container.h"

namespace ember::nn {

namespace {
size_t wrap_index(int64_t index, size_t size, const char* who) {
  int64_t n = static_cast<int64_t>(size);
  EMBER_CHECK_INDEX(index >= -n && index < n, "{}: index {} is out of range for {} modules", who, index, n);
  return static_cast<size_t>(index < 0 ? index + n : index);
}
}  // namespace

// ---- Sequential ----

Sequential::Sequential() : Module("Sequential") {}
Sequential::Sequential(std::initializer_list<ModulePtr> modules) : Sequential() {
  for (const ModulePtr& m : modules) push_back(m);
}
Sequential::Sequential(const std::vector<ModulePtr>& modules) : Sequential() {
  for (const ModulePtr& m : modules) push_back(m);
}
Sequential::Sequential(const NamedModules& named) : Sequential() {
  for (const auto& [name, m] : named) push_back(name, m);
}

Sequential& Sequential::push_back(ModulePtr module) {
  return push_back(std::to_string(children_list_.size()), std::move(module));
}

Sequential& Sequential::push_back(std::string name, ModulePtr module) {
  register_module(std::move(name), module);
  children_list_.push_back(std::move(module));
  return *this;
}

ModulePtr Sequential::operator[](int64_t index) const {
  return children_list_[wrap_index(index, children_list_.size(), "Sequential")];
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const ModulePtr& m : children_list_) x = m->forward(x);
  return x;
}

// ---- ModuleList ----

ModuleList::ModuleList() : Module("ModuleList") {}
ModuleList::ModuleList(std::initializer_list<ModulePtr> modules) : ModuleList() {
  for (const ModulePtr& m : modules) push_back(m);
}
ModuleList::ModuleList(const std::vector<ModulePtr>& modules) : ModuleList() { extend(modules); }

ModuleList& ModuleList::push_back(ModulePtr module) {
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
  return *this;
}

ModuleList& ModuleList::extend(const std::vector<ModulePtr>& modules) {
  for (const ModulePtr& m : modules) push_back(m);
  return *this;
}

ModulePtr ModuleList::operator[](int64_t index) const {
  return items_[wrap_index(index, items_.size(), "ModuleList")];
}

// ---- ModuleDict ----

ModuleDict::ModuleDict() : Module("ModuleDict") {}
ModuleDict::ModuleDict(const NamedModules& modules) : ModuleDict() {
  for (const auto& [k, m] : modules) insert(k, m);
}

ModuleDict& ModuleDict::insert(const std::string& key, ModulePtr module) {
  if (contains(key)) {
    replace_module(key, std::move(module));
  } else {
    register_module(key, std::move(module));
  }
  return *this;
}

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& c : named_children())
    if (c.first == key) return true;
  return false;
}

ModulePtr ModuleDict::operator[](const std::string& key) const {
  for (const auto& c : named_children())
    if (c.first == key) return c.second;
  EMBER_CHECK_INDEX(false, "ModuleDict: no module named '{}'; keys are [{}]", key, fmt::join(keys(), ", "));
  return nullptr;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& c : named_children()) out.push_back(c.first);
  return out;
}

}  // namespace ember::nn

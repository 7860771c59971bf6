// Runtime containers of modules: Sequential, ModuleList, ModuleDict.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

// Applies its children in order through forward(const Tensor&). Children are
// named "0", "1", ... unless given names (PyTorch's OrderedDict form).
class Sequential : public Module {
 public:
  Sequential();
  Sequential(std::initializer_list<ModulePtr> modules);
  explicit Sequential(const std::vector<ModulePtr>& modules);
  explicit Sequential(const NamedModules& named);

  Tensor forward(const Tensor& input) override;
  // Appends under the next index name; returns *this for chaining.
  Sequential& push_back(ModulePtr module);
  Sequential& push_back(std::string name, ModulePtr module);
  // Negative indices count from the end, like Python.
  ModulePtr operator[](int64_t index) const;
  size_t size() const { return children_list_.size(); }
  bool empty() const { return children_list_.empty(); }
  std::vector<ModulePtr>::const_iterator begin() const { return children_list_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return children_list_.end(); }

 private:
  std::vector<ModulePtr> children_list_;  // fast path for forward
};

// A list of registered modules; it has no forward of its own.
class ModuleList : public Module {
 public:
  ModuleList();
  ModuleList(std::initializer_list<ModulePtr> modules);
  explicit ModuleList(const std::vector<ModulePtr>& modules);

  ModuleList& push_back(ModulePtr module);
  ModuleList& extend(const std::vector<ModulePtr>& modules);
  ModulePtr operator[](int64_t index) const;
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<ModulePtr>::const_iterator begin() const { return items_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<ModulePtr> items_;
};

// Modules by name, in insertion order; it has no forward of its own.
class ModuleDict : public Module {
 public:
  ModuleDict();
  explicit ModuleDict(const NamedModules& modules);

  // Adds, or replaces an existing key in place.
  ModuleDict& insert(const std::string& key, ModulePtr module);
  bool contains(const std::string& key) const;
  // Raises naming the key when absent.
  ModulePtr operator[](const std::string& key) const;
  std::vector<std::string> keys() const;
  size_t size() const { return named_children().size(); }
};

}  // namespace ember::nn

// nn::Module: the base of every layer — named parameters, buffers and
// submodules, train/eval mode, state_dict, and PyTorch-style printing.
#pragma once

#include <concepts>
#include <deque>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/io/state_dict.h"

namespace ember::nn {

class Module;
using ModulePtr = std::shared_ptr<Module>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using NamedModules = std::vector<std::pair<std::string, ModulePtr>>;

// Note [module design]
// Modules are plain classes held by std::shared_ptr and composed at runtime
// (a model can be built from a config); there are no templates or holders.
//
// State lives in the base class's registry, in registration order, which
// fixes the order of parameters() and the keys of state_dict(), exactly as
// in PyTorch. register_parameter / register_buffer return a reference to
// the registry slot; a layer binds it to a public reference member
//     Tensor& weight;   // = register_parameter("weight", ...)
// so `linear->weight` reads the registry, and assigning to it (or to(),
// which replaces slots with converted tensors) is seen by both. An undefined
// tensor in a slot is PyTorch's None: skipped by parameters() and
// state_dict().
//
// forward: C++ has no uniform `forward(*args)`. Every module that maps one
// tensor to one tensor overrides `Tensor forward(const Tensor&)`, which is
// what Sequential calls. Modules with other signatures (Bilinear, losses,
// RNNs) add typed overloads (`forward(input, target)`) and keep the base
// one, which raises naming the module. operator() forwards to forward().
class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The single-tensor forward (see Note [module design]); raises unless
  // the module overrides it.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // The class name printed by repr() ("Linear").
  const std::string& type_name() const { return type_name_; }
  // The text inside the parentheses of repr() (PyTorch's extra_repr).
  virtual std::string extra_repr() const { return {}; }
  // The module tree exactly as PyTorch prints it.
  std::string repr() const;

  // ---- registration ----
  // value becomes a leaf that requires grad (unless requires_grad is false);
  // an undefined value registers None. Returns the registry slot.
  Tensor& register_parameter(std::string name, Tensor value, bool requires_grad = true);
  // Non-persistent buffers are left out of state_dict().
  Tensor& register_buffer(std::string name, Tensor value, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    register_module_impl(std::move(name), module);
    return module;
  }
  // Replaces a registered child (e.g. to swap a layer of a built model).
  void replace_module(const std::string& name, ModulePtr module);

  // ---- traversal (registration order; shared tensors/modules listed once) ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<ModulePtr> children() const;
  NamedModules named_children() const;
  // This module first (name ""), then every descendant with its dotted path.
  NamedModules named_modules() const;
  std::vector<ModulePtr> modules() const;
  // The child registered under name, or null.
  ModulePtr get_submodule(const std::string& dotted_name) const;

  // ---- mode and state ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Converts floating-point parameters and buffers (and their grads).
  Module& to(ScalarType dtype);
  // Moves every parameter and buffer (and grad) to `device`, keeping them
  // leaves (model->to(kCPU), model->to("cuda:0")); a device this build
  // cannot use raises naming it.
  Module& to(Device device);
  // set_to_none: drop .grad; otherwise zero it in place.
  void zero_grad(bool set_to_none = true);
  // fn on every descendant first, then on this module (PyTorch's order).
  Module& apply(const std::function<void(Module&)>& fn);
  // Freezes (false) or unfreezes every parameter.
  Module& requires_grad_(bool requires_grad = true);

  // ---- state_dict ----
  // Parameters then persistent buffers of each module, depth first, with
  // PyTorch's dotted names; tensors are detached and share storage.
  StateDict state_dict() const;
  struct LoadResult {
    std::vector<std::string> missing_keys;
    std::vector<std::string> unexpected_keys;
  };
  // Copies values in place (dtype converted). Shape mismatches always raise;
  // strict also raises for missing and unexpected keys. A "module." prefix
  // on every key (left by data-parallel wrappers) is stripped.
  LoadResult load_state_dict(const StateDict& dict, bool strict = true);

 protected:
  // Non-owning handle to this module when it is not owned by a shared_ptr.
  ModulePtr self_ptr() const;

 private:
  struct Slot {
    std::string name;
    Tensor value;
    bool persistent = true;
  };
  void register_module_impl(std::string name, ModulePtr module);
  void convert_tensors(const std::function<bool(const Tensor&)>& needed,
                       const std::function<Tensor(const Tensor&)>& convert);
  void check_new_name(const std::string& name, const char* what) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  void collect_slots(const std::string& prefix, bool params, bool recurse, NamedTensors& out,
                     std::vector<const TensorImpl*>& seen) const;

  std::string type_name_;
  bool training_ = true;
  // deque: references returned by register_* stay valid as more are added.
  std::deque<Slot> params_;
  std::deque<Slot> buffers_;
  NamedModules children_;
};

// std::cout << *model (or << model): the tree as PyTorch prints it (repr()).
std::ostream& operator<<(std::ostream& os, const Module& module);
template <std::derived_from<Module> M>
std::ostream& operator<<(std::ostream& os, const std::shared_ptr<M>& module) {
  return module ? os << *module : os << "None";
}

// ---- helpers for extra_repr: Python's spelling of values ----
// repr(float): "0.1", "1.0", "1e-05".
std::string py_float(double v);
// "True" / "False".
inline std::string py_bool(bool v) { return v ? "True" : "False"; }
// A Python tuple: "(3,)", "(3, 3)".
std::string py_tuple(IntArrayRef v);

}  // namespace ember::nn

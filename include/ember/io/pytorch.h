// PyTorch checkpoints: what torch.save writes (zip format, PyTorch >= 1.6:
// ARCHIVE/data.pkl + ARCHIVE/data/N storages; and the legacy format of
// PyTorch 0.4-1.5, a sequence of pickles followed by the storages' bytes,
// still written with _use_new_zipfile_serialization=False), read through a data-only
// unpickler. Only these globals are accepted: collections.OrderedDict,
// torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and the
// torch.*Storage types; any other global is an error naming it. Nothing is
// ever imported or called. Memo size, stack depth, nesting depth and every
// storage access are bounded and checked; a legacy file's storages are
// bounded by its size before any is allocated. The pre-0.4 tar format and
// storage views are not read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/io/state_dict.h"

namespace ember::io {

// A value from a pickle: None, bool, int, float, str, bytes, list, tuple,
// dict (keys in order) or tensor.
class PyValue {
 public:
  enum class Kind { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict, Tensor };
  PyValue() = default;
  static PyValue none() { return {}; }
  static PyValue from_bool(bool b);
  static PyValue from_int(int64_t i);
  static PyValue from_float(double f);
  static PyValue from_string(std::string s, bool bytes = false);
  static PyValue from_tensor(Tensor t);
  static PyValue list(std::vector<PyValue> items, bool tuple = false);
  static PyValue dict(std::vector<PyValue> keys, std::vector<PyValue> values);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  // Accessors raise naming the expected and actual kind.
  bool to_bool() const;
  int64_t to_int() const;
  double to_double() const;  // int or float
  const std::string& to_string() const;  // str or bytes
  const Tensor& to_tensor() const;
  const std::vector<PyValue>& items() const;  // list or tuple elements
  const std::vector<PyValue>& keys() const;   // dict keys
  const std::vector<PyValue>& values() const; // dict values
  // Dict lookup by string key: null when absent / raises when absent.
  const PyValue* find(std::string_view key) const;
  const PyValue& at(std::string_view key) const;

 private:
  Kind kind_ = Kind::None;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  Tensor t_;
  std::vector<PyValue> a_, b_;  // list items / dict keys; dict values
};

const char* kind_name(PyValue::Kind k);

struct PytorchOptions {
  size_t max_memo = 1 << 20;    // memo entries
  size_t max_depth = 512;       // container nesting
};

PyValue load_pytorch(const std::string& path, const PytorchOptions& options = {});
// In-memory form; `source` names the bytes in error messages.
PyValue load_pytorch_bytes(const std::string& bytes, const std::string& source = "<bytes>",
                           const PytorchOptions& options = {});

// The flat state dict in a checkpoint: v["state_dict"], v["model"] or
// v["model_state_dict"] when that is a dict of tensors, else `v` itself. Non-tensor
// entries are skipped; nested dicts of tensors are flattened with '.'.
// strip_prefix (e.g. "module.") is removed from keys that start with it.
StateDict pytorch_state_dict(const PyValue& v, std::string_view strip_prefix = "");

}  // namespace ember::io

// The TraceHook that turns the kernels a forward runs into a Graph (private
// to src/jit/trace: jit::trace and the control-flow ops use it).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ember/jit/trace.h"

namespace ember::jit::detail {

class Tracer final : public TraceHook {
 public:
  // The tracer of a whole forward: `module`'s parameters and buffers become
  // named constants.
  Tracer(nn::Module& module, const TraceOptions& options);
  // The tracer of a control-flow sub-graph inside `parent`'s graph: what the
  // sub-graph reads from outside becomes a capture input (Note [control flow
  // capture] in src/jit/trace/control_flow.cpp).
  explicit Tracer(Tracer& parent);

  Graph& graph() { return g_; }

  // A new graph input bound to t; `from_input`: whether it follows the
  // inputs of the whole trace (host reads of it are errors).
  int add_input(const Tensor& t, std::string name, bool from_input = true);
  // The value of a tensor the trace has seen, or a new constant (top level)
  // or capture (sub-graph) for one it has not.
  int value_of(const Tensor& t) { return lookup(t); }
  // The value of a graph output.
  int output_value(const Tensor& t) { return lookup(t); }
  // Binds t, a fresh tensor computed by a node about to be added, to a new value.
  int add_result(const Tensor& t, bool from_input, const std::string& kind) { return bind_output(t, kind, from_input); }
  void add_node(Node n);
  bool from_input(int v) const { return from_input_.at(static_cast<size_t>(v)); }
  // The module path of the last parameter read: where the trace is.
  std::string scope() const;

  // Sub-graphs: per capture input (in input order, after the explicit ones),
  // the tensor and its value in the parent's graph.
  const std::vector<Tensor>& captured_tensors() const { return captured_tensors_; }
  const std::vector<int>& captured_values() const { return captured_values_; }
  // Registers a capture another sub-graph of the same node already made, so
  // both take the same capture inputs in the same order.
  void add_capture(const Tensor& t, int parent_value);

  // ---- TraceHook ----
  void record(Op op, const std::vector<const Tensor*>& inputs, const std::vector<const Tensor*>& outputs,
              TraceAttrs attrs) override;
  void record_composite(std::string_view kind, const std::vector<const Tensor*>& inputs,
                        const std::vector<const Tensor*>& outputs, TraceAttrs attrs) override;
  void view(const Tensor& base, const Tensor& v) override;
  void host_read(const Tensor& t, const char* what) override;
  void unsupported(std::string_view op, std::string_view why) override;

 private:
  struct Geometry {
    ScalarType dtype;
    std::vector<int64_t> sizes, strides;
    int64_t offset;
    static Geometry of(const Tensor& t);
    bool operator==(const Geometry&) const = default;
  };
  struct Param {
    std::string name;
    Constant::Kind kind;
    Tensor tensor;
  };
  struct Entry {
    Tensor tensor;  // keeps the impl (and its address) alive for the trace
    int value;
  };

  [[noreturn]] void fail(const std::string& what);
  void warn(const std::string& msg);
  std::string near() const;
  std::string describe(int v) const;
  int new_value(const Tensor& t, bool from_input, std::string producer = "input");
  void bind(const Tensor& t, int v);
  int find(const Tensor& t);
  int checked(const Tensor& t, int v);
  int lookup(const Tensor& t);
  void note_param(int v);
  int add_constant(const Tensor& t);
  int capture(const Tensor& t);
  int bind_output(const Tensor& t, const std::string& kind, bool dep);

  Tracer* parent_ = nullptr;
  TraceOptions options_;
  Graph g_;
  std::unordered_map<const StorageImpl*, Param> params_;
  std::unordered_map<const TensorImpl*, Entry> impls_;
  std::unordered_map<const StorageImpl*, std::vector<int>> storages_;
  std::vector<Geometry> geometry_;
  std::vector<char> from_input_;
  std::vector<char> is_input_;
  std::vector<std::string> producer_;
  std::unordered_map<int, std::string> param_of_value_;
  std::unordered_set<int> stale_, relaid_;
  std::vector<Tensor> captured_tensors_;
  std::vector<int> captured_values_;
  std::vector<int> capture_inputs_;  // this graph's input value of each capture
  std::string last_param_;
  int inline_count_ = 0;
};

}  // namespace ember::jit::detail

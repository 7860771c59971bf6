// Eager dynamic quantization: module swapping with a report.
#include "ember/quant/quantize_dynamic.h"

#include <fmt/format.h>

#include "ember/nn/container.h"
#include "ember/nn/linear.h"
#include "ember/nn/rnn.h"

namespace ember::quant {

DynamicQuantizedLinear::DynamicQuantizedLinear(PackedLinear packed)
    : nn::Module("DynamicQuantizedLinear"), packed_(std::move(packed)) {}

std::shared_ptr<DynamicQuantizedLinear> DynamicQuantizedLinear::from_float(const nn::Module& m) {
  const auto* linear = dynamic_cast<const nn::Linear*>(&m);
  EMBER_CHECK(linear != nullptr, "DynamicQuantizedLinear.from_float: expected a Linear, got {}", m.type_name());
  return std::make_shared<DynamicQuantizedLinear>(PackedLinear::pack(linear->weight, linear->bias));
}

Tensor DynamicQuantizedLinear::forward(const Tensor& input) { return linear_dynamic(input, packed_); }

std::string DynamicQuantizedLinear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, dtype=qint8, qscheme=per_channel_affine",
                     packed_.in_features(), packed_.out_features());
}

std::string report_str(const std::string& heading, const std::vector<std::string>& quantized,
                       const std::vector<std::pair<std::string, std::string>>& kept_float) {
  std::string s = fmt::format("{} ({}):", heading, quantized.size());
  for (const std::string& q : quantized) s += "\n  " + q;
  s += fmt::format("\nkept in float ({}):", kept_float.size());
  for (const auto& [name, why] : kept_float) s += fmt::format("\n  {}: {}", name, why);
  return s;
}

std::string QuantizeReport::str() const { return report_str("quantized", quantized, kept_float); }

namespace {

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// Why a module of a requested type stays float; empty when it can be quantized.
std::string float_reason(const nn::Module& m) {
  if (m.type_name() == "LSTM" || m.type_name() == "GRU") {
    const auto* rnn = dynamic_cast<const nn::RNNBase*>(&m);
    return rnn == nullptr ? "its class is not an ember::nn::RNNBase (no int8 time loop for it)" : std::string();
  }
  if (m.type_name() != "Linear" || dynamic_cast<const nn::Linear*>(&m) == nullptr)
    return "no dynamic int8 version of " + m.type_name();
  return {};
}

// The module to use in place of m (m itself when nothing changes inside it).
// A Sequential is rebuilt (its forward runs its own list, not the registry);
// other parents get their registry slot replaced.
nn::ModulePtr process(const nn::ModulePtr& m, const std::string& path, const std::set<std::string>& types,
                      QuantizeReport& report) {
  if (types.count(m->type_name())) {
    if (std::string why = float_reason(*m); !why.empty()) {
      report.kept_float.emplace_back(path, why);
      return m;
    }
    report.quantized.push_back(path);
    // Recurrent layers are quantized in place (no swap, so a parent calling
    // them through a typed member runs int8 too).
    if (auto* rnn = dynamic_cast<nn::RNNBase*>(m.get())) {
      rnn->quantize_dynamic_int8();
      return m;
    }
    return DynamicQuantizedLinear::from_float(*m);
  }
  if (dynamic_cast<const nn::Sequential*>(m.get())) {
    nn::NamedModules rebuilt;
    bool changed = false;
    for (const auto& [name, child] : m->named_children()) {
      rebuilt.emplace_back(name, process(child, join_path(path, name), types, report));
      changed = changed || rebuilt.back().second != child;
    }
    if (!changed) return m;
    auto seq = std::make_shared<nn::Sequential>(rebuilt);
    if (!m->is_training()) seq->eval();
    return seq;
  }
  // Names only: holding the children here would hide other owners (below).
  std::vector<std::string> names;
  for (const auto& [name, child] : m->named_children()) names.push_back(name);
  for (const std::string& name : names) {
    const std::string child_path = join_path(path, name);
    nn::ModulePtr child = m->get_submodule(name);
    const size_t before = report.quantized.size();
    nn::ModulePtr repl = process(child, child_path, types, report);
    if (repl == child) continue;
    m->replace_module(name, repl);
    // The registry no longer holds the float module: another owner (a typed
    // member the parent's forward calls directly) would keep running it, so
    // the swap would be a silent no-op. Undo it and say so.
    if (child.use_count() > 1) {
      m->replace_module(name, child);
      for (size_t i = before; i < report.quantized.size(); ++i)
        report.kept_float.emplace_back(
            report.quantized[i],
            fmt::format("{} ({}) calls {} through its own member, not the module registry, so a swap would have "
                        "no effect; trace the model and quantize the graph instead",
                        path.empty() ? "the model" : path, m->type_name(), child_path));
      report.quantized.resize(before);
    }
  }
  return m;
}

}  // namespace

nn::ModulePtr quantize_dynamic(const nn::ModulePtr& model, const std::set<std::string>& types, QDtype dtype,
                               QuantizeReport* report) {
  EMBER_CHECK(model != nullptr, "quantize_dynamic: the model is null");
  EMBER_CHECK(dtype == kQInt8, "quantize_dynamic: only qint8 weights are supported, got {}", to_string(dtype));
  for (const std::string& t : types)
    EMBER_CHECK(t == "Linear" || t == "LSTM" || t == "GRU",
                "quantize_dynamic: unknown module type '{}'; expected Linear, LSTM or GRU", t);
  QuantizeReport local;
  QuantizeReport& r = report ? *report : local;
  r = {};
  return process(model, "", types, r);
}

}  // namespace ember::quant

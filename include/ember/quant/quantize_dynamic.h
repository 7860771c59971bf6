// Eager dynamic quantization (torch.ao.quantization.quantize_dynamic):
// Linear children become DynamicQuantizedLinear; modules asked for but left
// in float are listed with the reason, never skipped silently.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/quant/qlinear.h"

namespace ember::quant {

// torch.ao.nn.quantized.dynamic.Linear: int8 per-channel weight, float in/out.
class DynamicQuantizedLinear : public nn::Module {
 public:
  explicit DynamicQuantizedLinear(PackedLinear packed);
  // From a float nn::Linear (its weight quantized per output channel).
  static std::shared_ptr<DynamicQuantizedLinear> from_float(const nn::Module& linear);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const PackedLinear& packed() const { return packed_; }

 private:
  PackedLinear packed_;
};

struct QuantizeReport {
  std::vector<std::string> quantized;                         // module paths
  std::vector<std::pair<std::string, std::string>> kept_float;  // path, reason
  std::string str() const;
};

// "<heading> (N):" with one line per quantized layer, then "kept in float
// (M):" with each layer and its reason: the report of every quantization
// (eager and graph, dynamic and static).
std::string report_str(const std::string& heading, const std::vector<std::string>& quantized,
                       const std::vector<std::pair<std::string, std::string>>& kept_float);

// Makes every descendant whose type_name() is in `types` ("Linear", "LSTM",
// "GRU") dynamic int8, in place, and returns the model (a new object when the
// root itself is swapped): a Linear is swapped for a DynamicQuantizedLinear,
// an LSTM or GRU packs its own weights (nn::RNNBase::quantize_dynamic_int8).
// Only kQInt8 weights exist.
nn::ModulePtr quantize_dynamic(const nn::ModulePtr& model,
                               const std::set<std::string>& types = {"Linear", "LSTM", "GRU"},
                               QDtype dtype = kQInt8, QuantizeReport* report = nullptr);

}  // namespace ember::quant

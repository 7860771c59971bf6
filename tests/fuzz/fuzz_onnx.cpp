// runtime::OnnxModel on untrusted bytes: parse (protobuf, initializers, node
// wiring), then, when it loads, one run on zero inputs of its signature
// (symbolic dims at 2, at most 2^16 elements per input) so that the
// operators' checks of attributes and shapes are fuzzed too.
#include "ember/ember.h"
#include "ember/runtime/onnx_model.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_error([&] {
    const runtime::OnnxModel m = runtime::OnnxModel::parse(bytes, "fuzz.onnx");
    const jit::Graph& g = m.signature().graph;
    std::vector<Tensor> inputs;
    for (const jit::NamedValue& in : g.inputs) {
      const jit::TensorType& t = g.type(in.value);
      std::vector<int64_t> sizes;
      int64_t n = 1;
      for (const jit::Dim& d : t.shape) {
        const int64_t s = d.is_symbolic() ? 2 : d.size;
        if (s > (int64_t{1} << 16) || (s > 0 && n > (int64_t{1} << 16) / s)) return;  // too large to try
        n *= s;
        sizes.push_back(s);
      }
      inputs.push_back(zeros(sizes, TensorOptions(t.dtype)));
    }
    m.run(inputs);
  });
  return 0;
}

// jit::load_model on an untrusted .ember file (safetensors + the graph JSON,
// including int8 linear_dynamic_int8 nodes and their int8/int32 constants),
// then, for graphs whose traced values stay small, one run on zero inputs at
// the traced sizes: every replay must check its operands (Note [jit
// interpreter]) and refuse a bad graph with an ember::Error.
#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "fuzz_util.h"

using namespace ember;

namespace {

// The bytes of every value at its traced size, saturating; bounded so a
// hostile shape cannot make the run allocate without limit.
bool small_enough(const jit::Graph& g) {
  constexpr int64_t kLimit = int64_t{64} << 20;
  int64_t total = 0;
  for (const jit::Value& v : g.values) {
    int64_t n = static_cast<int64_t>(element_size(v.type.dtype));
    for (const jit::Dim& d : v.type.shape) {
      if (d.size < 0 || (d.size > 0 && n > kLimit / d.size)) return false;
      n *= d.size;
    }
    total += n;
    if (total > kLimit) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".ember");
  const std::string& path = file.write(data, size);
  fuzz::expect_clean_error([&] {
    jit::ModelFile m = jit::load_model(path);
    if (!small_enough(m.graph) || !m.graph.nodes.size() || m.graph.nodes.size() > 256) return;
    std::vector<Tensor> inputs;
    for (const jit::NamedValue& in : m.graph.inputs) {
      const jit::TensorType& t = m.graph.type(in.value);
      inputs.push_back(zeros(t.sizes(), t.dtype));
    }
    (void)jit::run(m.graph, inputs);
  });
  return 0;
}

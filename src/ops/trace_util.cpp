#include "ops/trace_util.h"

namespace ember {

void trace_elementwise(Op op, const Tensor& out, const Tensor* a, const Tensor* b, const Tensor* c) {
  std::vector<const Tensor*> inputs;
  for (const Tensor* t : {a, b, c})
    if (t) inputs.push_back(t);
  trace_hook()->record(op, inputs, {&out}, {});
}

void trace_fill(const Tensor& out, const Scalar& v) { trace_hook()->record(Op::fill, {}, {&out}, {{"a", v}}); }

void trace_view(const Tensor& base, const Tensor& view) { trace_hook()->view(base, view); }

}  // namespace ember

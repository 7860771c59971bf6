// Calls into the trace hook from the hot op paths. Out of line and cold: the
// argument lists are built in here, so an op body grows by one thread-local
// load, a branch and a call, and keeps its inlining (measured: building them
// inline in `binary` cost W3 ~33 instructions per op, Note [trace hook]).
#pragma once

#include "core/op_registry.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/core/trace_hook.h"

namespace ember {

// An elementwise kernel wrote `out` from the non-null inputs a, b, c.
[[gnu::cold, gnu::noinline]] void trace_elementwise(Op op, const Tensor& out, const Tensor* a, const Tensor* b = nullptr,
                                                    const Tensor* c = nullptr);
// fill_ (and index_fill_) wrote v into out.
[[gnu::cold, gnu::noinline]] void trace_fill(const Tensor& out, const Scalar& v);
// A view op made `view` over base's storage.
[[gnu::cold, gnu::noinline]] void trace_view(const Tensor& base, const Tensor& view);

}  // namespace ember

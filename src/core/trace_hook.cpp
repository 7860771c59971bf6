// Note [trace hook]: ops call `if (TraceHook* h = trace_hook()) h->record(...)`
// where they dispatch a kernel (the family helpers of elementwise ops and
// reductions, each generic kernel's call site) and where a view is made, so
// each primitive op is reported once, with the exact tensors its kernel reads
// and writes. The attributes are only built inside the branch, so an op pays
// one thread-local load and a not-taken branch when nothing traces.
#include "ember/core/trace_hook.h"

namespace ember::detail {
thread_local constinit TraceHook* tls_trace_hook = nullptr;
}  // namespace ember::detail

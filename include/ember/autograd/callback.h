// End-of-backward callbacks (PyTorch's Variable._execution_engine.queue_callback).
#pragma once

#include <functional>

namespace ember::autograd {

// Runs `callback` once the backward pass running on this thread has visited
// every node, in the order queued; a callback may queue more. Raises outside
// a backward pass. DistributedDataParallel waits for its gradient buckets
// from one.
void queue_callback(std::function<void()> callback);

}  // namespace ember::autograd

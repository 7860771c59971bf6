// autograd::queue_callback: runs once after backward's last node, in order.
#include "ember/autograd/callback.h"

#include "test_util.h"

namespace ember {
namespace {

TEST(QueueCallback, RunsAfterTheLastNodeInOrderAndMayQueueMore) {
  Tensor w = ones({3}).requires_grad_();
  std::vector<std::string> events;
  w.register_hook([&](const Tensor& g) {
    events.push_back("hook");
    autograd::queue_callback([&] {
      // The leaf's gradient is accumulated before callbacks run.
      events.push_back(fmt::format("first grad={}", w.grad().sum().item<float>()));
      autograd::queue_callback([&] { events.push_back("nested"); });
    });
    autograd::queue_callback([&] { events.push_back("second"); });
    return g;
  });
  (w * 2.0).sum().backward();
  EXPECT_EQ(events, (std::vector<std::string>{"hook", "first grad=6", "second", "nested"}));
  testing::expect_error([] { autograd::queue_callback([] {}); }, {"queue_callback", "no backward pass"});
}

}  // namespace
}  // namespace ember

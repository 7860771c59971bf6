// runtime::Session on traced zoo models: named inputs and outputs, signature
// errors naming the input, and run() from several threads on one session.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "ember/ember.h"
#include "ember/jit/trace.h"
#include "ember/runtime/session.h"
#include "ember/train/models.h"

namespace ember::runtime {
namespace {

namespace fs = std::filesystem;

std::string saved_cnn(train::CNN& m, bool dynamic) {
  jit::TraceOptions o;
  o.input_names = {"image"};
  o.output_names = {"logits"};
  if (dynamic) o.dynamic_dims = {{0, 0, "batch"}};
  jit::ModelFile f;
  f.graph = jit::trace(m, {randn({4, 1, 12, 12})}, o);
  std::string path = (fs::temp_directory_path() / fmt::format("ember_session_{}_{}.ember", ::getpid(), dynamic)).string();
  jit::save_model(f, path);
  return path;
}

train::CNNOptions small_cnn() {
  train::CNNOptions o;
  o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
  o.channels = {4, 8};
  o.hidden = 16;
  return o;
}

Tensor eager(train::CNN& m, const Tensor& x) {
  NoGradGuard ng;
  m.eval();
  return m.forward(x);
}

TEST(Session, NamedRunMatchesEagerBitwise) {
  manual_seed(31);
  train::CNN m(small_cnn());
  const std::string path = saved_cnn(m, true);
  Session s(path, SessionOptions{.threads = 2});
  fs::remove(path);
  EXPECT_EQ(s.input_names(), std::vector<std::string>{"image"});
  EXPECT_EQ(s.output_names(), std::vector<std::string>{"logits"});
  for (int64_t b : {4, 1, 9}) {
    Tensor x = randn({b, 1, 12, 12});
    NamedTensors out = s.run({{"image", x}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(equal(out.at("logits"), eager(m, x))) << b;
  }
}

TEST(Session, InputErrorsNameTheInputAndTheExpectedShape) {
  manual_seed(32);
  train::CNN m(small_cnn());
  const std::string path = saved_cnn(m, true);
  Session s(path);
  fs::remove(path);
  auto message = [&](const NamedTensors& in) {
    try {
      s.run(in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string wrong_size = message({{"image", randn({3, 1, 12, 11})}});
  EXPECT_NE(wrong_size.find("'image' must be float32[batch, 1, 12, 12], got float32[3, 1, 12, 11]"), std::string::npos)
      << wrong_size;
  std::string wrong_rank = message({{"image", randn({1, 12, 12})}});
  EXPECT_NE(wrong_rank.find("'image' must be float32[batch, 1, 12, 12]"), std::string::npos) << wrong_rank;
  std::string wrong_dtype = message({{"image", randn({2, 1, 12, 12}).to(kFloat64)}});
  EXPECT_NE(wrong_dtype.find("got float64[2, 1, 12, 12]"), std::string::npos) << wrong_dtype;
  EXPECT_NE(message({}).find("missing input 'image'"), std::string::npos);
  EXPECT_NE(message({{"image", randn({2, 1, 12, 12})}, {"extra", randn({1})}}).find("unknown input 'extra'"),
            std::string::npos);
  EXPECT_THROW(Session("/nonexistent/model.ember"), Error);
}

TEST(Session, RunFromSeveralThreadsOnOneSession) {
  manual_seed(33);
  train::CNN m(small_cnn());
  const std::string path = saved_cnn(m, true);
  const Session s(path);
  fs::remove(path);
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(randn({2 + i, 1, 12, 12}));
    expected.push_back(eager(m, inputs.back()));
  }
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      bool all = true;
      for (int rep = 0; rep < 5; ++rep) all = all && equal(s.run({inputs[t]})[0], expected[t]);
      ok[t] = all;
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << t;
}

}  // namespace
}  // namespace ember::runtime

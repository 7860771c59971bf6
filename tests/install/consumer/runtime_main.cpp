// Uses the installed libember_runtime.so alone (ember::runtime): loads the
// .ember file consumer wrote and checks y = [7, 0] for x = [1, 1, 1].
#include <cstdio>
#include <vector>

#include <ember/ops/factory.h>
#include <ember/runtime/session.h>

int main(int argc, char** argv) {
  using namespace ember;
  if (argc < 2) {
    std::printf("usage: consumer_runtime MODEL.ember\n");
    return 2;
  }
  runtime::Session s(argv[1]);
  runtime::NamedTensors out = s.run({{"x", ones({1, 3})}});
  std::vector<float> want = {7, 0};
  if (out.size() != 1 || out.at("y").to_vector<float>() != want) {
    std::printf("consumer_runtime: wrong values\n");
    return 1;
  }
  std::printf("consumer_runtime ok: y = [7, 0]\n");
  return 0;
}

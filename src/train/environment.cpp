#include "environment.h"

#include <dnnl.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "ember/core/adaptive_threads.h"
#include "ember/core/parallel.h"
#include "ember/ember.h"
#include "ember_git_commit.h"  // EMBER_GIT_COMMIT (cmake/GitCommit.cmake, at build time)

namespace ember::train {

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : "unknown";
}
}  // namespace

Environment environment_info(int64_t seed) {
  const dnnl_version_t* dv = dnnl_version();
  return {
      {"ember_version", version()},
      {"git_commit", EMBER_GIT_COMMIT},
      {"compiler", fmt::format("g++ {}", __VERSION__)},
      {"onednn", fmt::format("{}.{}.{}", dv->major, dv->minor, dv->patch)},
      {"cpu", cpu_model()},
      {"cores", std::to_string(std::thread::hardware_concurrency())},
      {"threads", std::to_string(get_num_threads())},
      // "yes": the count drops while other processes hold CPUs (Note [adaptive thread count]).
      {"adaptive_threads", adaptive_threads() ? "yes" : "no"},
      {"seed", std::to_string(seed)},
      {"host", host_name()},
  };
}

std::string environment_json(const Environment& env) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : env) j[k] = v;
  return j.dump(2) + "\n";
}

}  // namespace ember::train

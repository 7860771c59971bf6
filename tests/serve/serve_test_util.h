// What the tests of `ember serve` share: a Server running on its own thread
// on an ephemeral loopback port, and a wait on its /metrics page.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ember/ember.h"
#include "ember/serve/server.h"

namespace ember::serve::testing {

// Server::serve on its own thread; stops and joins on destruction.
class RunningServer {
 public:
  RunningServer(std::vector<std::string> paths, ServerOptions o) : server_(paths, with_any_port(o)) {
    port_ = server_.bind();
    thread_ = std::thread([this] { server_.serve(); });
  }
  ~RunningServer() { stop(); }
  void stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30, 0);
    return c;
  }

 private:
  static ServerOptions with_any_port(ServerOptions o) {
    o.port = 0;
    return o;
  }
  Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Polls /metrics until the model's queue holds `depth` requests (bounded:
// at most ~5 s), so a test acts once a request is surely queued.
inline bool wait_for_queue_depth(const RunningServer& s, const std::string& model, int depth) {
  const std::string line = fmt::format("ember_queue_depth{{model=\"{}\"}} {}\n", model, depth);
  httplib::Client c = s.client();
  for (int i = 0; i < 500; ++i) {
    auto r = c.Get("/metrics");
    if (r && r->body.find(line) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A v2 request body with the given inputs as JSON tensors (float32, int64).
inline std::string tensors_body(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, t] : inputs) {
    Tensor c = t.contiguous();
    std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
    nlohmann::json data = c.dtype() == kInt64 ? nlohmann::json(c.to_vector<int64_t>()) : nlohmann::json(c.to_vector<float>());
    list.push_back({{"name", name}, {"shape", shape}, {"datatype", c.dtype() == kInt64 ? "INT64" : "FP32"}, {"data", data}});
  }
  return nlohmann::json{{"inputs", list}}.dump();
}

// The response's output `name` as a float32 tensor.
inline Tensor response_output(const std::string& body, const std::string& name) {
  nlohmann::json j = nlohmann::json::parse(body);
  for (const nlohmann::json& out : j.at("outputs"))
    if (out.at("name") == name)
      return tensor(out.at("data").get<std::vector<float>>(), out.at("shape").get<std::vector<int64_t>>());
  ADD_FAILURE() << "no output " << name << " in " << body;
  return Tensor();
}

}  // namespace ember::serve::testing

// serve::Server: `ember serve` (issue 17), the KServe / Triton open inference
// protocol v2 over HTTP/JSON with a dynamically batched queue per model.
// A separate library (ember_serve) over libember: neither libember nor
// libember_runtime links the HTTP engine. This header includes none of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (see Server::bind)
  int64_t max_batch = 32;          // rows per model run
  int64_t max_delay_us = 2000;     // how long the oldest request waits for company
  int threads = 0;                 // Ember compute threads (0: the default)
  int http_threads = 64;           // connections handled at once
  size_t queue = 1024;             // queued requests per model before 503
  size_t max_body = size_t{16} << 20;  // bytes; larger bodies get 413
  int64_t timeout_ms = 30000;      // a request not answered by then gets 504
};

class Server {
 public:
  // Loads every model (named by its file stem); throws naming the file.
  Server(const std::vector<std::string>& model_paths, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port and returns the port (the chosen one for port 0).
  int bind();
  // Answers requests until stop(); returns once in-flight requests are done.
  void serve();
  // Stops accepting; safe from any thread, before or during serve().
  void stop();
  bool running() const;

  // What startup logs: the models, their signatures, the batching settings.
  std::string summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "16MiB", "512KiB", "1000" (bytes); throws for anything else.
size_t parse_byte_size(const std::string& text);

}  // namespace ember::serve

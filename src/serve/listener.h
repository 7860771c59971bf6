// The bind / serve / stop sequence that `ember serve` and `ember board` share
// around a cpp-httplib server: bind first (so the caller learns an ephemeral
// port), then serve on the calling thread until stop() from another one.
#pragma once

#include <atomic>
#include <string>

namespace httplib {
class Server;
}

namespace ember::serve {

class Listener {
 public:
  // `what` names the command in error messages ("serve", "board").
  Listener(httplib::Server& http, std::string what) : http_(http), what_(std::move(what)) {}

  int bind(const std::string& host, int port);  // port 0: any free port; returns the port
  void serve();                                 // blocks until stop()
  void stop();                                  // from any thread, before or during serve()
  int port() const { return port_; }

 private:
  httplib::Server& http_;
  std::string what_;
  std::atomic<bool> stop_requested_{false}, serving_{false};
  int port_ = -1;
};

}  // namespace ember::serve

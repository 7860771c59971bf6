#include "listener.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "ember/core/error.h"

namespace ember::serve {

int Listener::bind(const std::string& host, int port) {
  bool ok = port == 0 ? (port_ = http_.bind_to_any_port(host)) > 0
                      : http_.bind_to_port(host, port) && (port_ = port) > 0;
  EMBER_CHECK(ok, "{}: cannot bind {}:{} (in use, or not an address of this machine)", what_, host, port);
  return port_;
}

void Listener::serve() {
  EMBER_CHECK(port_ > 0, "{}: call bind() before serve()", what_);
  serving_ = true;
  if (!stop_requested_) http_.listen_after_bind();
  serving_ = false;
}

void Listener::stop() {
  stop_requested_ = true;
  // serve() may be between its check and httplib's start of the accept loop:
  // wait for that loop to run, since httplib's stop() only ends a running one.
  while (serving_) {
    if (http_.is_running()) {
      http_.stop();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace ember::serve

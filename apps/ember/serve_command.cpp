// ember serve MODEL.ember [MODEL.ember...] [--host 127.0.0.1] [--port 8080]
//   [--max-batch 32] [--max-delay-us 2000] [--threads N] [--http-threads 64]
//   [--queue 1024] [--max-body 16MiB] [--timeout-ms 30000]
// Logs the models, their signatures, the address and the batching settings,
// then answers until SIGINT/SIGTERM: it stops accepting, finishes the
// requests in flight and exits 0.
#include "serve_command.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <thread>

#include <pthread.h>
#include <unistd.h>

namespace ember::cli {

sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

ServeCommand::ServeCommand(CLI::App& app) {
  serve_ = app.add_subcommand("serve", "serve .ember models over HTTP (KServe/Triton inference protocol v2)");
  serve_->add_option("models", models_, "model files; each is served under its file stem")->required();
  serve_->add_option("--host", options_.host, "address to listen on (loopback by default)")->capture_default_str();
  serve_->add_option("--port", options_.port, "port (0: any free port)")->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve_->add_option("--max-batch", options_.max_batch, "most rows merged into one model run")->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve_->add_option("--max-delay-us", options_.max_delay_us, "how long a request waits for others to batch with")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  serve_->add_option("--threads", options_.threads, "Ember compute threads (0: the default)")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  serve_->add_option("--http-threads", options_.http_threads, "connections handled at once")->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve_->add_option("--queue", options_.queue, "queued requests per model before answering 503")
      ->capture_default_str()->check(CLI::PositiveNumber);
  serve_->add_option("--max-body", max_body_, "largest request body (e.g. 16MiB, 512KiB); larger gets 413")
      ->capture_default_str();
  serve_->add_option("--timeout-ms", options_.timeout_ms, "answer 504 when a request waits longer than this")
      ->capture_default_str()->check(CLI::PositiveNumber);
}

std::optional<int> ServeCommand::run() {
  if (!*serve_) return std::nullopt;
  options_.max_body = serve::parse_byte_size(max_body_);
  sigset_t stop_signals = block_stop_signals();
  serve::Server server(models_, options_);
  int port = server.bind();
  std::fputs(server.summary().c_str(), stdout);
  std::printf("listening on http://%s:%d (v2 protocol: /v2/models/NAME/infer; images or CSV rows: /v1/models/NAME/predict; /metrics)\n", options_.host.c_str(), port);
  std::fflush(stdout);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::printf("received %s: finishing requests in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    std::fflush(stdout);
    server.stop();
  });
  server.serve();
  waiter.join();
  std::printf("stopped\n");
  return 0;
}

// Note [serve wait policy]: OpenMP threads that spin at the end of a
// parallel region take the cores the HTTP threads need to parse the next
// requests (and, on a shared machine, the client's or another process's).
// Measured with bench/serve/serve_bench.py on 2 cores, W1, 5 s per point:
// spinning gave p99 35 ms at concurrency 1 (p50 2.8 ms) and 2,445 req/s at
// 64; passive waits p99 3.3 ms and 3,114 req/s. libgomp reads
// OMP_WAIT_POLICY once, when it is loaded, before main runs (and the C
// library resets the environment after a .preinit_array function could set
// it), so `ember serve` sets it and re-executes itself, once, unless the
// user chose a policy.
void use_passive_openmp_for_serve(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    if (std::strcmp(argv[i], "serve") != 0) return;  // the first word is the subcommand
    setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/1);
    execv("/proc/self/exe", argv);
    unsetenv("OMP_WAIT_POLICY");  // exec failed: serve with the runtime's default
    return;
  }
}

}  // namespace ember::cli

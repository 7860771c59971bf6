// ember board [ROOT] [--host 127.0.0.1] [--port 6006]: prints the address,
// then answers until SIGINT/SIGTERM and exits 0.
#include "board_command.h"

#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "ember/train/config.h"
#include "serve_command.h"

namespace ember::cli {

BoardCommand::BoardCommand(CLI::App& app) {
  board_ = app.add_subcommand("board", "a local web page over the runs under ROOT: curves of the runs you pick, "
                                       "hyper-parameters, confusion matrix; updates while runs train");
  board_->add_option("root", options_.root, "folder of run directories (the trainer's log.root)")
      ->capture_default_str();
  board_->add_option("--host", options_.host, "address to listen on (loopback by default)")->capture_default_str();
  board_->add_option("--port", options_.port, "port (0: any free port)")->capture_default_str()
      ->check(CLI::Range(0, 65535));
}

std::optional<int> BoardCommand::run() {
  if (!*board_) return std::nullopt;
  if (!std::filesystem::is_directory(options_.root))
    throw train::ConfigError(
        fmt::format("board: '{}' is not a folder (runs go to log.root, by default runs/)", options_.root));
  sigset_t stop_signals = block_stop_signals();
  serve::Board board(options_);
  const int port = board.bind();
  std::printf("ember board: runs under %s at http://%s:%d/\n", options_.root.c_str(), options_.host.c_str(), port);
  std::fflush(stdout);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    board.stop();
  });
  board.serve();
  waiter.join();
  return 0;
}

}  // namespace ember::cli

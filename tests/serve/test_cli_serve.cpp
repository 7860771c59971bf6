// `ember serve` as a process: the startup log, answers on loopback, and
// SIGTERM finishing cleanly with exit code 0; `--help` lists every option.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"
#include "cli_util.h"

namespace ember::serve {
namespace {

namespace fs = std::filesystem;

std::string saved_model(const fs::path& dir) {
  manual_seed(51);
  train::CNNOptions o;
  o.in_channels = 1, o.height = 12, o.width = 12, o.num_classes = 5;
  o.channels = {4, 8};
  o.hidden = 16;
  train::CNN m(o);
  m.eval();
  jit::TraceOptions t;
  t.input_names = {"image"};
  t.output_names = {"logits"};
  t.dynamic_dims = {{0, 0, "batch"}};
  jit::ModelFile f;
  f.graph = jit::trace(m, {randn({2, 1, 12, 12})}, t);
  std::string path = (dir / "digits.ember").string();
  jit::save_model(f, path);
  return path;
}

// `ember ARGS...` running on, with stdout and stderr on a pipe to read line by
// line while it serves (ember::testing::run_cli waits for the exit instead).
struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
  explicit Child(std::vector<std::string> args) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1), dup2(fds[1], 2);
      close(fds[0]), close(fds[1]);
      std::vector<char*> argv{const_cast<char*>(EMBER_CLI)};
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(EMBER_CLI, argv.data());
      _exit(127);
    }
    close(fds[1]);
    out = fdopen(fds[0], "r");
  }
  std::string line() {
    char buf[4096];
    return std::fgets(buf, sizeof buf, out) ? std::string(buf) : std::string();
  }
  // The exit code, or -1 when it was killed.
  int wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~Child() {
    if (pid > 0) kill(pid, SIGKILL), wait();
    if (out) std::fclose(out);
  }
};

TEST(CliServe, ServesThenExitsZeroOnSigterm) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ember_cli_serve_{}", ::getpid());
  fs::create_directories(dir);
  std::string model = saved_model(dir);
  Child c({"serve", model, "--port", "0", "--max-delay-us", "100"});
  std::string log, l;
  std::smatch port;
  // Bounded: the startup log is a few lines.
  for (int i = 0; i < 20 && !std::regex_search(log, port, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))")); ++i) {
    l = c.line();
    if (l.empty()) break;
    log += l;
  }
  fs::remove_all(dir);
  ASSERT_FALSE(port.empty()) << log;
  EXPECT_NE(log.find("model digits: (image: float32[batch, 1, 12, 12]) -> (logits: float32[batch, 5]); batched along dim 0"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("max-batch 32 rows, max-delay 100 us, queue 1024 requests"), std::string::npos) << log;
  // Note [serve wait policy]: passive OpenMP waits unless the environment chose.
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  EXPECT_NE(log.find(std::string("OpenMP wait policy: ") + (policy ? policy : "PASSIVE")), std::string::npos) << log;
  httplib::Client client("127.0.0.1", std::stoi(port[1]));
  auto r = client.Get("/v2/models/digits");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  kill(c.pid, SIGTERM);
  std::string rest;
  for (int i = 0; i < 20 && !(l = c.line()).empty(); ++i) rest += l;
  EXPECT_EQ(c.wait(), 0) << rest;
  EXPECT_NE(rest.find("received SIGTERM"), std::string::npos) << rest;
  EXPECT_NE(rest.find("stopped"), std::string::npos) << rest;
}

TEST(CliServe, HelpListsEveryOption) {
  ember::testing::CliResult r = ember::testing::run_cli("serve --help");
  const std::string& help = r.output;
  EXPECT_EQ(r.code, 0);
  for (const char* option : {"--host", "--port", "--max-batch", "--max-delay-us", "--threads", "--http-threads", "--queue",
                             "--max-body", "--timeout-ms"})
    EXPECT_NE(help.find(option), std::string::npos) << option << "\n" << help;
}

TEST(CliServe, MissingModelFailsNamingTheFile) {
  ember::testing::CliResult r = ember::testing::run_cli("serve /nonexistent/x.ember --port 0");
  const std::string& out = r.output;
  EXPECT_EQ(r.code, 1) << out;
  EXPECT_NE(out.find("/nonexistent/x.ember"), std::string::npos) << out;
}

// `ember board` as a process: prints its address, answers on loopback,
// exits 0 on SIGTERM; a ROOT that is not a folder is a usage error (2).
TEST(CliBoard, ServesRunsThenExitsZeroOnSigterm) {
  fs::path root = fs::temp_directory_path() / fmt::format("ember_cli_board_{}", ::getpid());
  fs::create_directories(root / "r1");
  std::ofstream(root / "r1" / "config.yaml") << "train:\n  epochs: 2\n";
  std::ofstream(root / "r1" / "metrics.csv") << "epoch,train_loss\n1,0.5\n";
  Child c({"board", root.string(), "--port", "0"});
  const std::string first = c.line();
  std::smatch port;
  ASSERT_TRUE(std::regex_search(first, port, std::regex(R"(at http://127\.0\.0\.1:(\d+)/)"))) << first;
  httplib::Client client("127.0.0.1", std::stoi(port[1]));
  auto r = client.Get("/api/metrics?run=r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const nlohmann::json metrics = nlohmann::json::parse(r->body);
  EXPECT_EQ(metrics["columns"], nlohmann::json({"epoch", "train_loss"})) << r->body;
  EXPECT_EQ(metrics["rows"], nlohmann::json::parse("[[1.0, 0.5]]")) << r->body;
  EXPECT_EQ(metrics["next"], 23) << r->body;  // the whole file: the next answer starts after it
  kill(c.pid, SIGTERM);
  EXPECT_EQ(c.wait(), 0);
  fs::remove_all(root);

  ember::testing::CliResult bad = ember::testing::run_cli("board /nonexistent/ember_runs --port 0");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("'/nonexistent/ember_runs' is not a folder"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace ember::serve

// `ember infer` and `ember bench` end to end on a traced nn::Linear(3, 2) with
// weights set by hand, so every printed value can be checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/ember.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;
};

Result ember_cli(const std::string& args) {
  std::string cmd = std::string(EMBER_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// y = x @ [[1, 2, 3], [0, 0, 1]]^T + [1, -1]; dynamic batch; classes "cat,dog".
fs::path tiny_model(const fs::path& dir) {
  nn::Linear lin(3, 2);
  {
    NoGradGuard ng;
    lin.weight.copy_(tensor<float>({1, 2, 3, 0, 0, 1}, {2, 3}));
    lin.bias.copy_(tensor<float>({1, -1}));
  }
  jit::TraceOptions o;
  o.input_names = {"x"};
  o.output_names = {"y"};
  o.dynamic_dims = {{0, 0, "batch"}};
  jit::ModelFile f;
  f.graph = jit::trace(lin, {ones({4, 3})}, o);
  f.source["class_names"] = "cat,dog";
  fs::path p = dir / "tiny.ember";
  jit::save_model(f, p.string());
  return p;
}

TEST(CliInfer, CsvPredictionsThroughputAndCsvOutput) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ember_cli_infer_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path model = tiny_model(dir);
  {
    std::ofstream c(dir / "in.csv");
    c << "a,b,c\n1,1,1\n1,0,0\n0,0,-9\n";
  }
  Result r = ember_cli(fmt::format("infer {} {} --batch-size 2 -o {}", model.string(), (dir / "in.csv").string(),
                                   (dir / "out.csv").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  // Rows: [7, 0] -> cat, [2, -1] -> cat, [-26, -10] -> dog.
  EXPECT_TRUE(contains(r.output, "0: cat\n1: cat\n2: dog\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "3 samples in")) << r.output;
  EXPECT_TRUE(contains(r.output, "samples/s (batch 2")) << r.output;
  std::ifstream out(dir / "out.csv");
  std::stringstream ss;
  ss << out.rdbuf();
  EXPECT_EQ(ss.str(), "index,prediction,class,out0,out1\n0,0,cat,7,0\n1,0,cat,2,-1\n2,1,dog,-26,-10\n");

  // .safetensors input, and an input of the wrong width named in the error.
  safetensors::save_file({{"x", tensor<float>({0, 0, 1}, {1, 3})}}, (dir / "in.safetensors").string());
  r = ember_cli(fmt::format("infer {} {}", model.string(), (dir / "in.safetensors").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0: cat\n")) << r.output;  // [4, 0]
  {
    std::ofstream c(dir / "bad.csv");
    c << "1,2\n";
  }
  r = ember_cli(fmt::format("infer {} {}", model.string(), (dir / "bad.csv").string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "samples of 2 elements")) << r.output;

  r = ember_cli(fmt::format("bench {} --batch-sizes 1,8 --threads 1 --seconds 0.05", model.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "p50 ms")) << r.output;
  EXPECT_TRUE(contains(r.output, "recommendation: for throughput use batch")) << r.output;
  // The file is at level 0: levels 0, 1 and 2 each get a row.
  r = ember_cli(fmt::format("bench {} --batch-sizes 2 --threads 1 --optimize 0,1,2 --seconds 0.02", model.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "the file is at optimize level 0")) << r.output;
  for (const char* row : {"\n     0        1        2 ", "\n     1        1        2 ", "\n     2        1        2 "})
    EXPECT_TRUE(contains(r.output, row)) << row << r.output;
  EXPECT_TRUE(contains(r.output, "threads at level ")) << r.output;
  r = ember_cli(fmt::format("bench {} --optimize 3", model.string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "--optimize 3 is not a level")) << r.output;
  r = ember_cli(fmt::format("bench {} --batch-sizes 0", model.string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "is not a positive integer")) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember

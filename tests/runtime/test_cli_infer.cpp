// `ember infer` and `ember bench` end to end on a traced nn::Linear(3, 2) with
// weights set by hand, so every printed value can be checked; image files and
// IDX images through the transform recorded in the model file.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/ember.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "cli_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

using Result = testing::CliResult;
using testing::contains;
using testing::run_cli;

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
  Result r = run_cli(fmt::format("infer {} {} --batch-size 2 -o {}", model.string(), (dir / "in.csv").string(),
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
  r = run_cli(fmt::format("infer {} {}", model.string(), (dir / "in.safetensors").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0: cat\n")) << r.output;  // [4, 0]
  {
    std::ofstream c(dir / "bad.csv");
    c << "1,2\n";
  }
  r = run_cli(fmt::format("infer {} {}", model.string(), (dir / "bad.csv").string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "samples of 2 elements")) << r.output;

  r = run_cli(fmt::format("bench {} --batch-sizes 1,8 --threads 1 --seconds 0.05", model.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "p50 ms")) << r.output;
  EXPECT_TRUE(contains(r.output, "recommendation: for throughput use batch")) << r.output;
  // The file is at level 0: levels 0, 1 and 2 each get a row.
  r = run_cli(fmt::format("bench {} --batch-sizes 2 --threads 1 --optimize 0,1,2 --seconds 0.02", model.string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "the file is at optimize level 0")) << r.output;
  for (const char* row : {"\n     0        1        2 ", "\n     1        1        2 ", "\n     2        1        2 "})
    EXPECT_TRUE(contains(r.output, row)) << row << r.output;
  EXPECT_TRUE(contains(r.output, "threads at level ")) << r.output;
  r = run_cli(fmt::format("bench {} --optimize 3", model.string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "--optimize 3 is not a level")) << r.output;
  r = run_cli(fmt::format("bench {} --batch-sizes 0", model.string()));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.output, "is not a positive integer")) << r.output;
  fs::remove_all(dir);
}

// Flatten then Linear(c * 2 * 2, rows) with the given weight; dynamic batch;
// source: the image transform and class names given.
fs::path image_model(const fs::path& path, int64_t channels, const std::vector<float>& weight,
                     const std::string& transform, const std::string& class_names) {
  const int64_t in = channels * 4, out = static_cast<int64_t>(weight.size()) / in;
  nn::Linear lin(in, out);
  {
    NoGradGuard ng;
    lin.weight.copy_(tensor<float>(weight, {out, in}));
    lin.bias.zero_();
  }
  jit::TraceFn fn = [&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{lin.forward(x[0].reshape({x[0].size(0), -1}))};
  };
  jit::TraceOptions o;
  o.input_names = {"image"};
  o.dynamic_dims = {{0, 0, "batch"}};
  jit::ModelFile f;
  // Batch 3: no feature count (4, 12), which the trace would take for a baked batch.
  f.graph = jit::trace(lin, fn, {ones({3, channels, 2, 2})}, o);
  if (!transform.empty()) f.source["input_transform"] = transform;
  if (!class_names.empty()) f.source["class_names"] = class_names;
  jit::save_model(f, path.string());
  return path;
}

// A w x h RGB image whose pixel (r, c) is px(r, c) = {R, G, B}.
std::vector<uint8_t> pixels(int w, int h, const std::function<std::array<uint8_t, 3>(int, int)>& px) {
  std::vector<uint8_t> out;
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c)
      for (uint8_t v : px(r, c)) out.push_back(v);
  return out;
}

// The -o file's out columns, row by row.
std::vector<std::vector<double>> outputs(const fs::path& csv) {
  std::ifstream f(csv);
  std::vector<std::vector<double>> rows;
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    std::vector<double> row;
    for (size_t i = 3; i < cells.size(); ++i) row.push_back(std::stod(cells[i]));  // index,prediction,class,out...
    rows.push_back(row);
  }
  return rows;
}

TEST(CliInfer, ImageFilesGoThroughTheRecordedTransform) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ember_cli_infer_img_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  // red = sum of the 4 red inputs, blue = sum of the 4 blue ones (CHW: red 0..3, blue 8..11).
  std::vector<float> w(24, 0.0f);
  for (int i = 0; i < 4; ++i) w[static_cast<size_t>(i)] = 1, w[static_cast<size_t>(12 + 8 + i)] = 1;
  const fs::path model = image_model(
      dir / "rgb.ember", 3, w, R"({"kind":"image","channels":3,"size":[2,2],"mean":[0.5,0.5,0.5],"std":[0.5,0.5,0.5]})",
      "red,blue");
  auto solid = [](uint8_t r, uint8_t g, uint8_t b) {
    return [=](int, int) { return std::array<uint8_t, 3>{r, g, b}; };
  };
  std::vector<uint8_t> red = pixels(4, 4, solid(255, 0, 0)), blue = pixels(3, 5, solid(0, 0, 255));
  std::vector<uint8_t> mixed = pixels(4, 4, solid(51, 0, 204));
  // Red 0, 100, 100, 200 in the top-left 2 x 2 block, 0 elsewhere: a 4 -> 2
  // bilinear resize (align_corners false) averages each block, so red becomes [100, 0, 0, 0].
  std::vector<uint8_t> grad = pixels(4, 4, [](int r, int c) {
    const uint8_t v = r < 2 && c < 2 ? static_cast<uint8_t>(100 * (r + c)) : 0;
    return std::array<uint8_t, 3>{v, 0, 60};
  });
  ASSERT_TRUE(stbi_write_png((dir / "red.png").string().c_str(), 4, 4, 3, red.data(), 12));
  ASSERT_TRUE(stbi_write_bmp((dir / "blue.bmp").string().c_str(), 3, 5, 3, blue.data()));
  ASSERT_TRUE(stbi_write_png((dir / "mixed.dat").string().c_str(), 4, 4, 3, mixed.data(), 12));  // found by its bytes
  ASSERT_TRUE(stbi_write_png((dir / "grad.png").string().c_str(), 4, 4, 3, grad.data(), 12));

  Result r = run_cli(fmt::format("infer {} {} {} {} {} -o {}", model.string(), (dir / "red.png").string(),
                                   (dir / "blue.bmp").string(), (dir / "mixed.dat").string(),
                                   (dir / "grad.png").string(), (dir / "out.csv").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0: red  (red.png)\n1: blue  (blue.bmp)\n2: blue  (mixed.dat)\n3: blue  (grad.png)\n"))
      << r.output;
  // By hand: each input is (v / 255 - 0.5) / 0.5 = 2v / 255 - 1.
  auto n = [](double v) { return 2 * v / 255 - 1; };
  const std::vector<std::vector<double>> want = {{4 * n(255), 4 * n(0)},
                                                 {4 * n(0), 4 * n(255)},
                                                 {4 * n(51), 4 * n(204)},
                                                 {n(100) + 3 * n(0), 4 * n(60)}};
  const std::vector<std::vector<double>> got = outputs(dir / "out.csv");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t j = 0; j < 2; ++j) EXPECT_NEAR(got[i][j], want[i][j], 1e-5) << i << "," << j;

  // A model without a recorded transform cannot take images; nor is a broken image a model input.
  const fs::path bare = image_model(dir / "bare.ember", 3, w, "", "");
  r = run_cli(fmt::format("infer {} {}", bare.string(), (dir / "red.png").string()));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "red.png' is an image, but '" + bare.string() + "' records no input transform"))
      << r.output;
  {
    std::ofstream(dir / "broken.png") << "not a png";
  }
  r = run_cli(fmt::format("infer {} {}", model.string(), (dir / "broken.png").string()));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "broken.png")) << r.output;
  fs::remove_all(dir);
}

TEST(CliInfer, IdxAndGreyImagesGoThroughTheRecordedTransform) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ember_cli_infer_idx_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Outputs: pixel 0 and pixel 3 of the normalised 2 x 2 grey image.
  const fs::path model = image_model(dir / "grey.ember", 1, {1, 0, 0, 0, 0, 0, 0, 1},
                                     R"({"kind":"image","channels":1,"size":[2,2],"mean":[0.5],"std":[0.25]})", "");
  // IDX: uint8 [2, 2, 2] (magic 0x00000803, big-endian sizes).
  {
    std::ofstream f(dir / "imgs-idx3-ubyte", std::ios::binary);
    const uint8_t bytes[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 51, 0, 0, 255, 255, 0, 0, 102};
    f.write(reinterpret_cast<const char*>(bytes), sizeof(bytes));
  }
  std::vector<uint8_t> grey = pixels(3, 3, [](int, int) { return std::array<uint8_t, 3>{102, 102, 102}; });
  ASSERT_TRUE(stbi_write_png((dir / "grey.png").string().c_str(), 3, 3, 3, grey.data(), 9));
  Result r = run_cli(fmt::format("infer {} {} {} -o {}", model.string(), (dir / "imgs-idx3-ubyte").string(),
                                   (dir / "grey.png").string(), (dir / "out.csv").string()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2: 0  (grey.png)\n")) << r.output;
  // (v / 255 - 0.5) / 0.25: 51 -> -1.2, 255 -> 2, 102 -> -0.4 (an RGB grey decodes to its own value).
  const std::vector<std::vector<double>> want = {{-1.2, 2.0}, {2.0, -0.4}, {-0.4, -0.4}};
  const std::vector<std::vector<double>> got = outputs(dir / "out.csv");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t j = 0; j < 2; ++j) EXPECT_NEAR(got[i][j], want[i][j], 1e-5) << i << "," << j;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember

// The .ember file: round trips (graph, weights, source run) and every
// corrupt-file class fails naming the file and the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/ember.h"
#include "ember/io/safetensors.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/model_file.h"
#include "ember/jit/trace.h"
#include "ember/train/models.h"

namespace ember::jit {
namespace {

namespace fs = std::filesystem;

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ember_model_file_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A CNN (conv, batch norm buffers, pooling, linear, dropout) traced and saved.
  ModelFile cnn_model() {
    manual_seed(11);
    train::CNNOptions o;
    o.in_channels = 1, o.height = 8, o.width = 8, o.num_classes = 3;
    o.channels = {2, 4};
    o.hidden = 8;
    model_ = std::make_shared<train::CNN>(o);
    ModelFile m;
    m.graph = trace(*model_, {randn({2, 1, 8, 8})});
    m.source = {{"run_dir", "runs/x-1"}, {"checkpoint", "best.ckpt"}, {"config_hash", "abc123"}};
    return m;
  }

  static void expect_error(const std::string& file, const std::vector<std::string>& parts) {
    try {
      load_model(file);
      FAIL() << "expected an error loading " << file;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(file), std::string::npos) << msg;
      for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
    }
  }

  // Rewrites the file with the graph JSON edited by `edit`.
  void rewrite_graph(const std::string& file, const std::function<void(std::string&)>& edit) {
    safetensors::Metadata meta;
    StateDict t = safetensors::load_file(file, &meta);
    edit(meta.at("ember.graph"));
    safetensors::save_file(t, file, meta);
  }

  fs::path dir_;
  std::shared_ptr<train::CNN> model_;
};

TEST_F(ModelFileTest, RoundTripKeepsGraphWeightsAndSource) {
  ModelFile m = cnn_model();
  const std::string f = path("cnn.ember");
  save_model(m, f);
  ModelFile back = load_model(f);
  EXPECT_EQ(back.format_version, kModelFormatVersion);
  EXPECT_EQ(back.producer, fmt::format("ember {}", version()));
  EXPECT_EQ(back.source, m.source);
  EXPECT_EQ(back.graph.str(), m.graph.str());
  ASSERT_EQ(back.graph.constants.size(), m.graph.constants.size());
  for (size_t i = 0; i < m.graph.constants.size(); ++i) {
    EXPECT_EQ(back.graph.constants[i].kind, m.graph.constants[i].kind);
    EXPECT_TRUE(equal(back.graph.constants[i].data, m.graph.constants[i].data)) << m.graph.constants[i].name;
  }
  // The loaded graph computes what the module does, bit for bit.
  Tensor x = randn({2, 1, 8, 8});
  model_->eval();
  Tensor eager;
  {
    NoGradGuard ng;
    eager = model_->forward(x);
  }
  Tensor got = run(back.graph, {x})[0];
  EXPECT_TRUE(equal(eager, got));
}

TEST_F(ModelFileTest, AttributesRoundTripIncludingNonFiniteScalars) {
  class Masked : public nn::Module {
   public:
    Masked() : nn::Module("Masked") {}
    Tensor forward(const Tensor& x) override {
      Tensor y = clamp(x, -INFINITY, 0.5);
      return where(gt(y, 0.0), y, -INFINITY);
    }
  } m;
  ModelFile mf;
  mf.graph = trace(m, {randn({5})});
  save_model(mf, path("m.ember"));
  ModelFile back = load_model(path("m.ember"));
  EXPECT_EQ(back.graph.str(), mf.graph.str());
  Tensor x = tensor<float>({-1, 0.25, 2, 0.75, -3}, {5});
  EXPECT_TRUE(equal(run(back.graph, {x})[0], m.forward(x)));
}

TEST_F(ModelFileTest, UnknownFormatVersion) {
  save_model(cnn_model(), path("v.ember"));
  rewrite_graph(path("v.ember"), [](std::string& g) {
    auto at = g.find("\"format_version\": 3");
    ASSERT_NE(at, std::string::npos);
    g.replace(at, 19, "\"format_version\": 7");
  });
  expect_error(path("v.ember"), {"format version 7 is not supported", "reads versions 1 to 3"});
}

TEST_F(ModelFileTest, UnknownOp) {
  save_model(cnn_model(), path("op.ember"));
  rewrite_graph(path("op.ember"), [](std::string& g) {
    auto at = g.find("\"conv2d\"");
    ASSERT_NE(at, std::string::npos);
    g.replace(at, 8, "\"conv9d\"");
  });
  expect_error(path("op.ember"), {"unknown op 'conv9d'"});
}

TEST_F(ModelFileTest, MissingWeight) {
  ModelFile m = cnn_model();
  save_model(m, path("w.ember"));
  safetensors::Metadata meta;
  StateDict t = safetensors::load_file(path("w.ember"), &meta);
  StateDict fewer;
  for (const auto& [name, v] : t)
    if (name != "0.weight") fewer.insert(name, v);
  safetensors::save_file(fewer, path("w.ember"), meta);
  expect_error(path("w.ember"), {"weight '0.weight'", "missing"});
}

TEST_F(ModelFileTest, MisShapedWeight) {
  ModelFile m = cnn_model();
  for (Constant& c : m.graph.constants)
    if (c.name == "0.bias") c.data = zeros({3});
  // save_model does not check: the graph types 0.bias [2], the file holds [3].
  save_model(m, path("s.ember"));
  expect_error(path("s.ember"), {"weight '0.bias'", "float32[3]", "float32[2]"});
}

TEST_F(ModelFileTest, UnexpectedTensor) {
  save_model(cnn_model(), path("x.ember"));
  safetensors::Metadata meta;
  StateDict t = safetensors::load_file(path("x.ember"), &meta);
  t.insert("stray", zeros({1}));
  safetensors::save_file(t, path("x.ember"), meta);
  expect_error(path("x.ember"), {"'stray'"});
}

TEST_F(ModelFileTest, TruncatedFile) {
  save_model(cnn_model(), path("t.ember"));
  const auto size = fs::file_size(path("t.ember"));
  for (auto keep : {size - 1, size / 2, decltype(size){12}, decltype(size){3}}) {
    SCOPED_TRACE(keep);
    fs::copy_file(path("t.ember"), path("cut.ember"), fs::copy_options::overwrite_existing);
    fs::resize_file(path("cut.ember"), keep);
    expect_error(path("cut.ember"), {"cannot read the model file"});
  }
}

TEST_F(ModelFileTest, NotAModelFile) {
  safetensors::save_file(StateDict({{"w", zeros({2})}}), path("plain.safetensors"));
  expect_error(path("plain.safetensors"), {"not an Ember model file"});
  expect_error(path("absent.ember"), {"cannot read the model file"});
}

TEST_F(ModelFileTest, MalformedGraphJson) {
  save_model(cnn_model(), path("j.ember"));
  rewrite_graph(path("j.ember"), [](std::string& g) { g.resize(g.size() / 2); });
  expect_error(path("j.ember"), {"not valid JSON"});
  save_model(cnn_model(), path("k.ember"));
  rewrite_graph(path("k.ember"), [](std::string& g) {
    auto at = g.find("\"value\": 0");
    ASSERT_NE(at, std::string::npos);
    g.replace(at, 10, "\"value\": 123456");  // the input's value id, out of range
  });
  expect_error(path("k.ember"), {"value id 123456 out of range"});
}

TEST_F(ModelFileTest, OverflowingShapeIsRejected) {
  save_model(cnn_model(), path("o.ember"));
  rewrite_graph(path("o.ember"), [](std::string& g) {
    auto at = g.find("\"shape\": [");
    ASSERT_NE(at, std::string::npos);
    g.insert(at + 10, "4611686018427387904, 4611686018427387904, ");
  });
  expect_error(path("o.ember"), {"overflows"});
}

}  // namespace
}  // namespace ember::jit

namespace ember::jit {
namespace {

// Hostile graphs: digits of the graph JSON changed at random. Loading or
// running may fail, but only with ember::Error (the interpreter checks every
// node's geometry before its kernel runs), never a crash or a wrong read.
TEST(ModelFileFuzz, MutatedNumbersFailCleanly) {
  manual_seed(12);
  train::CNNOptions o;
  o.in_channels = 1, o.height = 8, o.width = 8, o.num_classes = 3;
  o.channels = {2, 4};
  o.hidden = 8;
  train::CNN model(o);
  ModelFile m;
  m.graph = trace(model, {randn({2, 1, 8, 8})});
  const std::string json = graph_to_json(m);
  std::vector<size_t> digits;
  for (size_t i = 0; i < json.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(json[i]))) digits.push_back(i);
  ASSERT_FALSE(digits.empty());
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int loaded = 0, ran = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = json;
    for (int k = 0; k < 1 + trial % 3; ++k) text[digits[next() % digits.size()]] = static_cast<char>('0' + next() % 10);
    try {
      ModelFile g = graph_from_json(text, "fuzz");
      for (size_t c = 0; c < g.graph.constants.size(); ++c) {
        // Weights as a loader would attach them: only where the type still matches.
        const TensorType& t = g.graph.type(g.graph.constants[c].value);
        Tensor d = m.graph.constants[std::min(c, m.graph.constants.size() - 1)].data;
        g.graph.constants[c].data = d.sizes().vec() == t.sizes() && d.dtype() == t.dtype ? d : zeros(t.sizes(), t.dtype);
      }
      check_graph(g.graph, "fuzz");
      ++loaded;
      run(g.graph, {randn({2, 1, 8, 8})});
      ++ran;
    } catch (const Error&) {
    }
  }
  // Some mutations hit only values that keep the graph valid (a scope, an
  // attribute the kernel tolerates), most are caught.
  EXPECT_GT(loaded, 0);
  EXPECT_GT(ran, 0);
  EXPECT_LT(ran, 400);
  RecordProperty("loaded", loaded);
  RecordProperty("ran", ran);
}

}  // namespace
}  // namespace ember::jit

// Checkpoint metadata is untrusted: sizes it implies are bounded before
// anything is allocated, and every error names the file, the field and the
// problem (issue 13).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "ember/ember.h"
#include "ember/io/safetensors.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/sgd.h"
#include "ember/train/callbacks.h"
#include "ember/train/checkpoint.h"
#include "test_util.h"
#include "cli_util.h"

using namespace ember;
using namespace ember::train;
using ember::testing::expect_error;
namespace fs = std::filesystem;

namespace {

// A valid checkpoint at path (one parameter, SGD-like optimizer metadata).
std::string write_checkpoint(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / "ember_ckpt_metadata";
  fs::create_directories(dir);
  std::string path = (dir / name).string();
  Checkpoint c;
  c.model.insert("w", ones({2, 2}));
  c.optimizer.param_groups.push_back({{{"lr", 0.1}}, {0}});
  c.optimizer.state[0]["momentum_buffer"] = zeros({2, 2});
  c.scheduler = {{"last_epoch", 1}};
  c.rng_state = default_generator().get_state();
  c.epoch = 1;
  c.step = 4;
  c.trainer_json = "{}";
  save_checkpoint(c, path);
  return path;
}

// Rewrites one metadata field of the checkpoint at path.
void set_metadata(const std::string& path, const std::string& key, const std::string& value) {
  safetensors::Metadata meta;
  StateDict tensors = safetensors::load_file(path, &meta);
  meta[key] = value;
  safetensors::save_file(tensors, path, meta);
}

}  // namespace

TEST(CheckpointMetadata, ValidCheckpointStillLoads) {
  std::string path = write_checkpoint("ok.ckpt");
  Checkpoint c = load_checkpoint(path);
  ASSERT_EQ(c.optimizer.param_groups.size(), 1u);
  EXPECT_EQ(c.optimizer.param_groups[0].params, (std::vector<int64_t>{0}));
  EXPECT_EQ(c.optimizer.param_groups[0].options.at("lr"), 0.1);
  EXPECT_EQ(c.optimizer.state.at(0).count("momentum_buffer"), 1u);
}

TEST(CheckpointMetadata, ParameterCountsAreBoundedBeforeAllocating) {
  std::string path = write_checkpoint("count.ckpt");
  // 9e9 parameters = a 72 GB vector from a file of a few hundred bytes.
  set_metadata(path, "optimizer", R"({"param_groups.0.lr":0.1,"param_groups.0.num_params":9e9})");
  expect_error([&] { (void)load_checkpoint(path); },
               {"count.ckpt", "metadata 'optimizer'", "param_groups.0.num_params", "not a parameter count"});
  // -1 must not become SIZE_MAX.
  set_metadata(path, "optimizer", R"({"param_groups.0.num_params":-1})");
  expect_error([&] { (void)load_checkpoint(path); }, {"count.ckpt", "param_groups.0.num_params", "-1"});
  set_metadata(path, "optimizer", R"({"param_groups.0.num_params":1.5})");
  expect_error([&] { (void)load_checkpoint(path); }, {"count.ckpt", "not a parameter count"});
  // The total over groups is bounded too.
  set_metadata(path, "optimizer", R"({"param_groups.0.num_params":1000000,"param_groups.1.num_params":1000000})");
  expect_error([&] { (void)load_checkpoint(path); }, {"count.ckpt", "param_groups.1.num_params"});
}

TEST(CheckpointMetadata, GroupAndParameterIndicesAreCheckedNotStoul) {
  std::string path = write_checkpoint("index.ckpt");
  // A huge group index used to resize param_groups to it (or throw a bare "stoul").
  set_metadata(path, "optimizer", R"({"param_groups.99999999999999999999.lr":0.1})");
  expect_error([&] { (void)load_checkpoint(path); },
               {"index.ckpt", "param_groups.99999999999999999999.lr", "group index", "not a non-negative integer"});
  set_metadata(path, "optimizer", R"({"param_groups.400000000.lr":0.1})");
  expect_error([&] { (void)load_checkpoint(path); }, {"index.ckpt", "group index 400000000 is out of range"});
  set_metadata(path, "optimizer", R"({"param_groups.-1.lr":0.1})");
  expect_error([&] { (void)load_checkpoint(path); }, {"index.ckpt", "param_groups.-1.lr", "not a non-negative"});
  set_metadata(path, "optimizer", R"({"param_groups.x.lr":0.1})");
  expect_error([&] { (void)load_checkpoint(path); }, {"index.ckpt", "'x' is not a non-negative integer"});
  // A state tensor whose index is not a number.
  std::string p2 = write_checkpoint("state.ckpt");
  {
    safetensors::Metadata meta;
    StateDict tensors = safetensors::load_file(p2, &meta);
    tensors.insert("optim.state.zero.momentum_buffer", zeros({1}));
    safetensors::save_file(tensors, p2, meta);
  }
  expect_error([&] { (void)load_checkpoint(p2); },
               {"state.ckpt", "state.zero.momentum_buffer", "parameter index 'zero'"});
}

TEST(CheckpointMetadata, CountsAndRngStateNameTheField) {
  std::string path = write_checkpoint("fields.ckpt");
  set_metadata(path, "epoch", "-1");
  expect_error([&] { (void)load_checkpoint(path); }, {"fields.ckpt", "'epoch' = '-1' is not a count"});
  set_metadata(path, "epoch", "1");
  set_metadata(path, "step", "18446744073709551616");
  expect_error([&] { (void)load_checkpoint(path); }, {"fields.ckpt", "'step'", "not a count"});
  set_metadata(path, "step", "4");
  set_metadata(path, "scheduler", "[1, 2]");
  expect_error([&] { (void)load_checkpoint(path); }, {"fields.ckpt", "'scheduler'", "not a JSON object"});
  // An RNG state of the wrong size.
  {
    safetensors::Metadata meta;
    StateDict tensors = safetensors::load_file(path, &meta);
    meta["scheduler"] = R"({"last_epoch":1})";
    StateDict out;
    for (const auto& [k, v] : tensors) out.insert(k, k == "rng.global" ? zeros({3}, kUInt8) : v);
    safetensors::save_file(out, path, meta);
  }
  expect_error([&] { (void)load_checkpoint(path); }, {"fields.ckpt", "rng.global", "16 bytes"});
}

TEST(CheckpointMetadata, SchedulerCountersMustBeWholeNumbers) {
  auto w = ones({1}).requires_grad_();
  optim::SGDOptions o;
  o.lr = 0.1;
  optim::SGD opt({w}, o);
  optim::StepLR s(opt, 2);
  optim::SchedulerState st = s.state_dict();
  st["last_epoch"] = 1e300;  // converting this to int64 is undefined behaviour
  expect_error([&] { s.load_state_dict(st); }, {"StepLR", "'last_epoch'", "not a whole number"});
  st["last_epoch"] = std::nan("");
  expect_error([&] { s.load_state_dict(st); }, {"StepLR", "'last_epoch'"});
  st["last_epoch"] = 3;
  s.load_state_dict(st);
  EXPECT_EQ(s.last_epoch(), 3);
}

TEST(CheckpointMetadata, TrainerStateFieldsAreTypeChecked) {
  MetricTracker t(MetricMode::Max);
  // nlohmann's get<> used to throw its own "type must be number" here.
  expect_error([&] { t.load_state_json(R"({"best":0.5,"best_epoch":"two","since_best":0})"); },
               {"'best_epoch'", "\"two\"", "not an epoch"});
  expect_error([&] { t.load_state_json(R"({"best":0.5,"best_epoch":2,"since_best":-3})"); },
               {"'since_best'", "not a count"});
  expect_error([&] { t.load_state_json(R"({"best":null,"best_epoch":2,"since_best":0})"); }, {"'best'"});
  t.load_state_json(R"({"best":0.5,"best_epoch":2,"since_best":1})");
  EXPECT_EQ(t.best(), 0.5);
}

#if defined(EMBER_CLI)
using ember::testing::run_cli;

TEST(CheckpointMetadata, ResumeErrorsNameTheCheckpointFileAndField) {
  fs::path root = fs::temp_directory_path() / "ember_ckpt_metadata_cli";
  fs::remove_all(root);
  const std::string cfg = std::string(EMBER_SOURCE_DIR) + "/configs/fashion_mnist_mlp.yaml";
  auto [code, out, seconds] = run_cli("train " + cfg + " model.hidden=[8] data.limit_train=200 data.limit_test=50 " +
                             "train.epochs=1 train.threads=1 log.progress=none log.root=" + root.string() +
                             " log.name=m");
  ASSERT_EQ(code, 0) << out;
  fs::path run = fs::directory_iterator(root)->path();
  const std::string ckpt = (run / "last.ckpt").string();
  safetensors::Metadata meta;
  StateDict tensors = safetensors::load_file(ckpt, &meta);
  const safetensors::Metadata good = meta;
  for (const auto& [field, value, needle] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"trainer", R"({"best":{"best":1,"best_epoch":1,"since_best":"x"}})", "'since_best'"},
           {"trainer", R"({"best":{"best":1,"best_epoch":1,"since_best":0},"finished":"yes"})", "'finished'"},
           {"metrics_csv", "epoch,train_loss\n1,abc\n", "metrics_csv"},
           {"scheduler", R"({"last_epoch":1e300})", "last_epoch"}}) {
    safetensors::Metadata bad = good;
    bad[field] = value;
    safetensors::save_file(tensors, ckpt, bad);
    auto [rc, msg, rc_seconds] = run_cli("train --resume " + run.string());
    EXPECT_NE(rc, 0) << field;
    EXPECT_NE(msg.find("last.ckpt"), std::string::npos) << field << ": " << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << field << ": " << msg;
  }
}
#endif

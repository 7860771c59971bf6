// safetensors: round trips over every dtype, metadata, atomic writes, and
// clear errors for truncated or corrupt files.
#include <filesystem>
#include <fstream>

#include "ember/io/safetensors.h"
#include "test_util.h"

using namespace ember;
using ember::testing::expect_error;
namespace st = ember::safetensors;

namespace {
std::string tmp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
// A file with one F32 tensor "a" of shape [2] and a custom header.
std::string with_header(const std::string& json, const std::string& data) {
  uint64_t n = json.size();
  return std::string(reinterpret_cast<const char*>(&n), 8) + json + data;
}
}  // namespace

TEST(IoSafetensors, RoundTripEveryDtypeAndMetadata) {
  StateDict d;
  d.insert("f32", randn({3, 4}));
  d.insert("f64", randn({2}, kFloat64));
  d.insert("bf16", randn({5}).to(kBFloat16));
  d.insert("f16", randn({2, 2}).to(kFloat16));
  d.insert("i64", arange(6).view({2, 3}));
  d.insert("i32", arange(4).to(kInt32));
  d.insert("i16", tensor<int16_t>({-32768, 32767}));
  d.insert("i8", tensor<int8_t>({-3, 4}));
  d.insert("u8", tensor<uint8_t>({250, 1}));
  d.insert("bool", tensor<bool>({true, false, true}));
  d.insert("scalar", scalar_tensor(2.5));
  d.insert("empty", zeros({0, 3}));
  d.insert("strided", randn({4, 3}).t());  // written contiguous
  std::string path = tmp_path("ember_roundtrip.safetensors");
  st::save_file(d, path, {{"format", "pt"}, {"epoch", "7"}});
  st::Metadata meta;
  StateDict back = st::load_file(path, &meta);
  EXPECT_EQ(back.keys(), d.keys());  // file order = insertion order
  for (auto& [k, t] : d) {
    EXPECT_EQ(back[k].dtype(), t.dtype()) << k;
    EXPECT_TRUE(equal(back[k], t)) << k;
  }
  EXPECT_EQ(meta.at("epoch"), "7");
  EXPECT_EQ(st::load_metadata(path).at("format"), "pt");
  // Header is 8-byte aligned and no temporary file is left behind.
  std::string bytes = read_bytes(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(::testing::TempDir()))
    files += e.path().filename().string().rfind("ember_roundtrip.safetensors", 0) == 0;
  EXPECT_EQ(files, 1);
}

TEST(IoSafetensors, ReadsTheReferenceLayout) {
  // Hand-written file in the format's spec: tensor order by offsets.
  float vals[3] = {1.5f, -2.0f, 3.25f};
  std::string data(reinterpret_cast<const char*>(vals), 12);
  std::string f = with_header(
      R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      data);
  StateDict d = st::load(f);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d["a"].to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(d["b"].item<float>(), 3.25f);
}

TEST(IoSafetensors, TruncatedAndCorruptFilesNameTheFileAndProblem) {
  StateDict d;
  d.insert("w", randn({10, 10}));
  std::string good = st::save(d);
  std::string path = tmp_path("ember_bad.safetensors");

  write_bytes(path, good.substr(0, good.size() - 7));
  expect_error([&] { st::load_file(path); }, {path.c_str(), "truncated", "need 400 bytes"});
  write_bytes(path, good.substr(0, 5));
  expect_error([&] { st::load_file(path); }, {path.c_str(), "truncated", "8-byte header length"});
  write_bytes(path, good.substr(0, 30));
  expect_error([&] { st::load_file(path); }, {path.c_str(), "truncated", "bytes of JSON"});
  std::string huge = good;
  huge[7] = '\x7f';
  write_bytes(path, huge);
  expect_error([&] { st::load_file(path); }, {path.c_str(), "header length", "implausible"});
  write_bytes(path, with_header("{\"w\": [1, 2", ""));
  expect_error([&] { st::load_file(path); }, {path.c_str(), "not valid JSON"});
  write_bytes(path, with_header("[1]", ""));
  expect_error([&] { st::load_file(path); }, {path.c_str(), "not safetensors"});
  write_bytes(path, with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')));
  expect_error([&] { st::load_file(path); }, {"'a'", "data_offsets [0, 8]", "needs 12 bytes"});
  write_bytes(path, with_header(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')));
  expect_error([&] { st::load_file(path); }, {"unsupported dtype 'Q4'"});
  write_bytes(path, with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0')));
  expect_error([&] { st::load_file(path); }, {"'a' starts at byte 4", "gap"});
  write_bytes(path, good + "xx");
  expect_error([&] { st::load_file(path); }, {"2 unexpected trailing bytes"});
  expect_error([&] { st::load_file(tmp_path("does_not_exist.safetensors")); }, {"cannot open", "does_not_exist"});
  expect_error([&] { st::save_file(d, "/nonexistent_dir/x.safetensors"); }, {"cannot create", "/nonexistent_dir"});
}

TEST(IoSafetensors, ShapesWhoseSizeOverflowsAreRejectedBeforeAllocating) {
  std::string path = tmp_path("ember_overflow.safetensors");
  // Issue 13's 92-byte file: 2^62 F32 elements are 2^64 bytes, which wrap to
  // the 0 bytes data_offsets grant; the tensor then claimed 2^62 elements over
  // an empty buffer and the next clone() segfaulted.
  std::string wrap = with_header(R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", "");
  write_bytes(path, wrap);
  expect_error([&] { st::load_file(path); },
               {path.c_str(), "'a'", "[4611686018427387904]", "overflows int64 bytes"});
  // The element count itself wrapping to 1: 2^32 * 2^32 + ... as U8.
  write_bytes(path, with_header(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""));
  expect_error([&] { st::load_file(path); }, {"'a'", "overflows"});
  // A dim beyond int64 (unsigned JSON) must not turn negative.
  write_bytes(path, with_header(R"({"a":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,0]}})", ""));
  expect_error([&] { st::load_file(path); }, {"'a'", "beyond int64"});
  // Empty tensors load, unless their other dims overflow.
  write_bytes(path, with_header(R"({"a":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}})", ""));
  StateDict ok = st::load_file(path);
  EXPECT_EQ(ok.at("a").sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ok.at("a").clone().numel(), 0);
  write_bytes(path, with_header(R"({"a":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})",
                                ""));
  expect_error([&] { st::load_file(path); }, {"'a'", "overflows"});
}

// io::load_pytorch against files torch 1.13 wrote (tests/data/gen_pt.py; the
// legacy format's twins by tests/data/gen_pt_legacy.py, same values) and
// hand-made malicious archives that the data-only unpickler must refuse.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ember/io/atomic_file.h"
#include "ember/io/pytorch.h"
#include "ember/io/safetensors.h"

using namespace ember;

namespace {

std::string pt(const std::string& name) { return std::string(EMBER_TEST_DATA_DIR) + "/pytorch/" + name; }

template <typename T>
std::vector<T> values(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<T> v(static_cast<size_t>(c.numel()));
  if (!v.empty()) std::memcpy(v.data(), c.data_ptr(), c.nbytes());
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

// Each file in both formats: the zip archive and the legacy pickle sequence.
class PytorchFormats : public ::testing::TestWithParam<std::string> {
 protected:
  std::string file(const std::string& stem) const { return pt(stem + GetParam() + ".pt"); }
};
INSTANTIATE_TEST_SUITE_P(Formats, PytorchFormats, ::testing::Values("", "_legacy"),
                         [](const auto& p) { return p.param.empty() ? std::string("zip") : std::string("legacy"); });

TEST_P(PytorchFormats, StateDictWithModulePrefix) {
  io::PyValue v = io::load_pytorch(file("linear_module"));
  ASSERT_TRUE(v.is_dict());
  EXPECT_EQ(v.keys()[0].to_string(), "module.weight");
  StateDict sd = io::pytorch_state_dict(v, "module.");
  ASSERT_EQ(sd.keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(sd["weight"].sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(sd["weight"]), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f}));
  EXPECT_EQ(values<float>(sd["bias"]), (std::vector<float>{-1.0f, 2.0f}));
  EXPECT_EQ(io::pytorch_state_dict(v).keys()[0], "module.weight");
}

TEST_P(PytorchFormats, NestedTrainingCheckpoint) {
  io::PyValue v = io::load_pytorch(file("checkpoint"));
  EXPECT_EQ(v.at("epoch").to_int(), 3);
  EXPECT_EQ(v.at("name").to_string(), "cnn");
  EXPECT_TRUE(v.at("flag").to_bool());
  EXPECT_TRUE(v.at("nothing").is_none());
  EXPECT_EQ(v.at("big").to_int(), int64_t{1} << 40);
  EXPECT_EQ(v.at("neg").to_int(), -7);
  const io::PyValue& opt = v.at("optimizer");
  const io::PyValue& group = opt.at("param_groups").items()[0];
  EXPECT_DOUBLE_EQ(group.at("lr").to_double(), 0.001);
  EXPECT_EQ(group.at("betas").kind(), io::PyValue::Kind::Tuple);
  EXPECT_DOUBLE_EQ(group.at("betas").items()[1].to_double(), 0.999);
  const io::PyValue& st = opt.at("state");
  EXPECT_EQ(st.keys()[0].to_int(), 0);  // int keys survive
  EXPECT_EQ(st.values()[0].at("step").to_int(), 10);
  EXPECT_EQ(values<float>(st.values()[0].at("exp_avg").to_tensor()), (std::vector<float>{0.5f, 0.5f}));
  // The flat state dict of a {'model': sd, ...} checkpoint is sd.
  EXPECT_EQ(io::pytorch_state_dict(v).keys(), (std::vector<std::string>{"weight", "bias"}));

  const io::PyValue& d = v.at("dtypes");
  EXPECT_EQ(values<uint16_t>(d.at("f16").to_tensor()), (std::vector<uint16_t>{0x3800, 0xBC00}));
  EXPECT_EQ(d.at("bf16").to_tensor().dtype(), kBFloat16);
  EXPECT_EQ(values<uint16_t>(d.at("bf16").to_tensor()), (std::vector<uint16_t>{0x3F80, 0xC000}));
  EXPECT_EQ(values<int64_t>(d.at("i64").to_tensor()), (std::vector<int64_t>{int64_t{1} << 62, -5}));
  EXPECT_EQ(values<int32_t>(d.at("i32").to_tensor()), (std::vector<int32_t>{7, -8}));
  EXPECT_EQ(d.at("i16").to_tensor().dtype(), kInt16);
  EXPECT_EQ(values<int16_t>(d.at("i16").to_tensor()), (std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(values<int8_t>(d.at("i8").to_tensor()), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(values<uint8_t>(d.at("u8").to_tensor()), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(d.at("bool").to_tensor().dtype(), kBool);
  EXPECT_EQ(values<uint8_t>(d.at("bool").to_tensor()), (std::vector<uint8_t>{1, 0}));

  EXPECT_EQ(values<float>(v.at("param").to_tensor()), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(v.at("scalar").to_tensor().dim(), 0);
  EXPECT_EQ(values<float>(v.at("scalar").to_tensor()), (std::vector<float>{4.0f}));
  EXPECT_EQ(v.at("empty").to_tensor().sizes().vec(), (std::vector<int64_t>{0, 3}));
}

TEST_P(PytorchFormats, ViewsShareOneStorage) {
  io::PyValue v = io::load_pytorch(file("checkpoint"));
  const io::PyValue& vw = v.at("views");
  Tensor whole = vw.at("whole").to_tensor(), row = vw.at("row").to_tensor(), col = vw.at("col").to_tensor(),
         t = vw.at("t").to_tensor();
  EXPECT_EQ(values<double>(row), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(values<double>(col), (std::vector<double>{2, 6, 10}));
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(row.storage_offset(), 4);
  EXPECT_EQ(row.storage().get(), whole.storage().get());
  EXPECT_EQ(col.storage().get(), whole.storage().get());
  // A write through one view is seen by the others.
  static_cast<double*>(whole.data_ptr())[6] = -1;
  EXPECT_EQ(values<double>(row)[2], -1);
  EXPECT_EQ(values<double>(col)[1], -1);
}

TEST(Pytorch, MaliciousPicklesAreRefused) {
  const std::string evil = error_of([] { io::load_pytorch(pt("evil_os_system.pt")); });
  EXPECT_NE(evil.find("global 'posix.system' is not allowed"), std::string::npos) << evil;
  EXPECT_NE(evil.find("evil_os_system.pt"), std::string::npos) << evil;
  EXPECT_FALSE(std::filesystem::exists("/tmp/ember_pwned"));
  const std::string legacy = error_of([] { io::load_pytorch(pt("evil_legacy.pt")); });
  EXPECT_NE(legacy.find("global 'posix.system' is not allowed"), std::string::npos) << legacy;
  EXPECT_FALSE(std::filesystem::exists("/tmp/ember_pwned"));
  const std::string deep = error_of([] { io::load_pytorch(pt("deep_nesting.pt")); });
  EXPECT_NE(deep.find("nested deeper than 512"), std::string::npos) << deep;
  const std::string memo = error_of([] { io::load_pytorch(pt("huge_memo.pt")); });
  EXPECT_NE(memo.find("memo index 2147483647 is not defined"), std::string::npos) << memo;
  const std::string range = error_of([] { io::load_pytorch(pt("storage_out_of_range.pt")); });
  EXPECT_NE(range.find("reaches element 3 of storage '0', which has 2"), std::string::npos) << range;
}

TEST(Pytorch, MalformedBytesFailCleanly) {
  const std::string good = io::read_file(pt("checkpoint.pt"));
  // Every truncation of a real checkpoint fails with an ember error, never a crash.
  for (size_t n = 0; n < good.size(); n += 97)
    EXPECT_NE(error_of([&] { io::load_pytorch_bytes(good.substr(0, n), "cut.pt"); }).find("cut.pt"),
              std::string::npos);
  const std::string legacy = io::read_file(pt("checkpoint_legacy.pt"));
  for (size_t n = 0; n < legacy.size(); n += 7)
    EXPECT_NE(error_of([&] { io::load_pytorch_bytes(legacy.substr(0, n), "cut.pt"); }).find("cut.pt"),
              std::string::npos)
        << n;
  // A bare pickle without the legacy headers (not something torch.save wrote).
  EXPECT_NE(error_of([] { io::load_pytorch_bytes(std::string("\x80\x02}q\x00.", 6), "old.pt"); })
                .find("no legacy torch.save magic number"),
            std::string::npos);
  // A storage claiming more elements than the file holds is refused before
  // anything is allocated; a size header that disagrees with the pickle too.
  std::string lin = io::read_file(pt("linear_module_legacy.pt"));
  // The bias storage's element count (2, int64) followed by its bytes (-1, 2).
  const float bias[2] = {-1.0f, 2.0f};
  std::string needle("\x02\0\0\0\0\0\0\0", 8);
  needle.append(reinterpret_cast<const char*>(bias), sizeof bias);
  const size_t size_at = lin.find(needle);
  ASSERT_NE(size_at, std::string::npos);
  std::string wrong = lin;
  wrong[size_at] = 3;
  EXPECT_NE(error_of([&] { io::load_pytorch_bytes(wrong, "w.pt"); }).find("has 2 elements in the pickle but 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { io::load_pytorch_bytes(lin + "x", "w.pt"); }).find("1 unexpected bytes"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              io::PytorchOptions o;
              o.max_depth = 2;
              io::load_pytorch(pt("checkpoint.pt"), o);
            }).find("than 2"),
            std::string::npos);
}

TEST(PytorchConvert, CliWritesSafetensors) {
  const std::string out = ::testing::TempDir() + "/converted.safetensors";
  const std::string cmd = std::string(EMBER_CLI) + " convert " + pt("linear_module.pt") + " " + out +
                          " --strip-prefix module. > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  StateDict sd = safetensors::load_file(out);
  ASSERT_EQ(sd.keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(values<float>(sd["bias"]), (std::vector<float>{-1.0f, 2.0f}));
  const std::string bad = std::string(EMBER_CLI) + " convert " + pt("evil_os_system.pt") + " " + out + " 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
}

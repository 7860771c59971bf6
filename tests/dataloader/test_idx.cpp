// IDX reader and (Fashion-)MNIST: Debian's files and every kind of corrupt file.
#include <algorithm>
#include <filesystem>

#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::TempDir;
using ember::testing::write_bytes;

namespace {

bool have_fashion_mnist() {
  return std::filesystem::exists(std::string(kDebianFashionMnistRoot) + "/train-labels-idx1-ubyte.gz");
}

// IDX bytes: magic 0x0000TTNN, big-endian dims, then data.
std::vector<uint8_t> idx_bytes(uint8_t type, std::vector<uint32_t> dims, std::vector<uint8_t> data) {
  std::vector<uint8_t> b{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// A gzip file with stored (uncompressed) deflate blocks — valid gzip that
// the test can write without linking zlib itself (RFC 1951/1952).
void write_gzip(const std::string& path, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    size_t n = std::min<size_t>(65535, data.size() - pos);
    bool last = pos + n == data.size();
    out.push_back(last ? 1 : 0);
    out.push_back(static_cast<uint8_t>(n));
    out.push_back(static_cast<uint8_t>(n >> 8));
    out.push_back(static_cast<uint8_t>(~n));
    out.push_back(static_cast<uint8_t>(~n >> 8));
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(pos),
               data.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < data.size());
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc = ~crc;
  for (uint32_t v : {crc, static_cast<uint32_t>(data.size())})
    for (int s = 0; s < 32; s += 8) out.push_back(static_cast<uint8_t>(v >> s));
  write_bytes(path, out);
}

// 3 images of 2x2 and their labels, raw files in dir.
void write_tiny_mnist(const TempDir& dir, std::vector<uint8_t> labels) {
  std::vector<uint8_t> pixels(12);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 10);
  write_bytes(dir.file("train-images-idx3-ubyte"), idx_bytes(0x08, {3, 2, 2}, pixels));
  write_bytes(dir.file("train-labels-idx1-ubyte"),
              idx_bytes(0x08, {static_cast<uint32_t>(labels.size())}, labels));
}

}  // namespace

TEST(DataIdx, ReadsDebianFashionMnist) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed (scripts/setup installs it)";
  FashionMNIST train;
  FashionMNIST test(kDebianFashionMnistRoot, false);
  ASSERT_EQ(train.size(), 60000);
  ASSERT_EQ(test.size(), 10000);
  EXPECT_EQ(train.images().sizes().vec(), (std::vector<int64_t>{60000, 28, 28}));
  // Reference: torchvision.datasets.FashionMNIST (and gzip + numpy on the same
  // Debian files) give train targets[:10] = [9, 0, 0, 3, 0, 2, 7, 2, 5, 5],
  // test targets[:10] = [9, 2, 1, 1, 6, 1, 4, 6, 5, 7], image 0 pixel sum
  // 76247 and 6000 samples of each class in train.
  EXPECT_EQ(train.targets().narrow(0, 0, 10).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  EXPECT_EQ(test.targets().narrow(0, 0, 10).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  Sample s = train.get(0);
  EXPECT_EQ(s[0].tensor().dtype(), kUInt8);
  EXPECT_EQ(s[0].tensor().sum().item<int64_t>(), 76247);
  EXPECT_EQ(s[0].tensor().select(0, 14).narrow(0, 10, 6).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 237, 226, 217, 223}));
  EXPECT_EQ(s[1].tensor().item<int64_t>(), 9);
  auto counts = one_hot(train.targets(), 10).sum({0}).to_vector<int64_t>();
  EXPECT_EQ(counts, std::vector<int64_t>(10, 6000));
}

TEST(DataIdx, RawAndGzipReadAlike) {
  TempDir dir;
  auto bytes = idx_bytes(0x0C, {2, 2}, {0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 1, 0, 0x7F, 0xFF, 0xFF, 0xFF});
  write_bytes(dir.file("a.idx"), bytes);
  write_gzip(dir.file("a.idx.gz"), bytes);
  for (const char* name : {"a.idx", "a.idx.gz"}) {
    Tensor t = read_idx(dir.file(name));
    EXPECT_EQ(t.dtype(), kInt32);
    EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 256, 2147483647})) << name;
  }
}

TEST(DataIdx, Int16IsReadAsInt16) {
  // torchvision's read_sn3_pascalvincent_tensor also gives torch.int16 for type 0x0B.
  TempDir dir;
  write_bytes(dir.file("s.idx"), idx_bytes(0x0B, {3}, {0x80, 0x00, 0x01, 0x02, 0x7F, 0xFF}));
  Tensor t = read_idx(dir.file("s.idx"));
  EXPECT_EQ(t.dtype(), kInt16);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{-32768, 258, 32767}));
}

TEST(DataIdx, MissingFile) {
  TempDir dir;
  expect_error([&] { (void)read_idx(dir.file("nope.idx")); }, {"nope.idx", "no such file"});
  expect_error([&] { MNIST m(dir.path().string()); }, {"train-images-idx3-ubyte", "cannot find"});
}

TEST(DataIdx, WrongMagic) {
  TempDir dir;
  write_bytes(dir.file("bad.idx"), {0x50, 0x4B, 0x03, 0x04, 0, 0, 0, 0});
  expect_error([&] { (void)read_idx(dir.file("bad.idx")); },
               {"bad.idx", "wrong magic number 0x504b0304", "0x00000803"});
  write_bytes(dir.file("tiny.idx"), {0, 0});
  expect_error([&] { (void)read_idx(dir.file("tiny.idx")); }, {"tiny.idx", "truncated"});
}

TEST(DataIdx, TruncatedFileNamesTheRecord) {
  TempDir dir;
  std::vector<uint8_t> pixels(4 * 9 - 5, 1);  // 4 images of 3x3, the last one short
  write_bytes(dir.file("cut.idx"), idx_bytes(0x08, {4, 3, 3}, pixels));
  expect_error([&] { (void)read_idx(dir.file("cut.idx")); },
               {"cut.idx", "truncated", "4 records", "record 3 (index 3)"});
  // Truncated gzip stream.
  auto full = idx_bytes(0x08, {100, 10}, std::vector<uint8_t>(1000, 7));
  write_gzip(dir.file("cut.gz"), full);
  auto size = std::filesystem::file_size(dir.file("cut.gz"));
  std::filesystem::resize_file(dir.file("cut.gz"), size - 12);  // drops the trailer
  expect_error([&] { (void)read_idx(dir.file("cut.gz")); }, {"cut.gz"});
  // Header shorter than its dims.
  write_bytes(dir.file("head.idx"), {0, 0, 8, 3, 0, 0, 0, 4});
  expect_error([&] { (void)read_idx(dir.file("head.idx")); }, {"head.idx", "truncated inside its header"});
  // Extra bytes mean header and data disagree: never silently ignored.
  write_bytes(dir.file("long.idx"), idx_bytes(0x08, {2}, {1, 2, 3}));
  expect_error([&] { (void)read_idx(dir.file("long.idx")); }, {"long.idx", "1 unexpected bytes"});
}

TEST(DataIdx, LabelOutOfRangeAndCountMismatch) {
  {
    TempDir dir;
    write_tiny_mnist(dir, {1, 12, 3});
    expect_error([&] { MNIST m(dir.path().string()); },
                 {"train-labels-idx1-ubyte", "label 12 at index 1", "out of range"});
  }
  {
    TempDir dir;
    write_tiny_mnist(dir, {1, 2});
    expect_error([&] { MNIST m(dir.path().string()); }, {"3 images", "2 labels"});
  }
  {
    TempDir dir;
    write_tiny_mnist(dir, {1, 2, 3});
    MNIST m(dir.path().string());
    EXPECT_EQ(m.size(), 3);
    EXPECT_EQ(m.get(1)[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{40, 50, 60, 70}));
    EXPECT_EQ(m.get(2)[1].tensor().item<int64_t>(), 3);
  }
}

TEST(DataIdx, DimsWhoseProductWrapsAreTruncationNotAHeapOverflow) {
  TempDir dir;
  // The 16-byte file of issue 13: dims 2^22 x 2^21 x 2^21 = 2^64 bytes wrap to
  // 0, so the old truncation check (0 bytes needed, 0 present) passed and
  // read_idx returned a tensor claiming 2^64 elements over an empty buffer.
  const std::vector<uint8_t> wrap{0, 0, 8, 3, 0, 0x40, 0, 0, 0, 0x20, 0, 0, 0, 0x20, 0, 0};
  ASSERT_EQ(wrap.size(), 16u);
  write_bytes(dir.file("wrap.idx"), wrap);
  expect_error([&] { (void)read_idx(dir.file("wrap.idx")); },
               {"wrap.idx", "truncated", "[4194304, 2097152, 2097152]", "more than 2^64"});
  // Wrapping through the element size: 2^61 doubles = 2^64 bytes.
  write_bytes(dir.file("wrap8.idx"), idx_bytes(0x0E, {1u << 31, 1u << 30}, {}));
  expect_error([&] { (void)read_idx(dir.file("wrap8.idx")); }, {"wrap8.idx", "more than 2^64"});
  // Large without wrapping: bounded by the 8 bytes present, nothing allocated.
  write_bytes(dir.file("big.idx"), idx_bytes(0x0D, {0xFFFFFFFFu, 0x1000u}, std::vector<uint8_t>(8, 1)));
  expect_error([&] { (void)read_idx(dir.file("big.idx")); }, {"big.idx", "truncated", "after 8 of"});
}

TEST(DataIdx, ZeroDimsGiveEmptyTensorsAndAreStillChecked) {
  TempDir dir;
  write_bytes(dir.file("zero.idx"), idx_bytes(0x08, {0, 28, 28}, {}));
  Tensor t = read_idx(dir.file("zero.idx"));
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{0, 28, 28}));
  write_bytes(dir.file("zero_inner.idx"), idx_bytes(0x0C, {5, 0}, {}));
  Tensor u = read_idx(dir.file("zero_inner.idx"));
  EXPECT_EQ(u.sizes().vec(), (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(u.numel(), 0);
  // An empty tensor with data after it: header and data disagree.
  write_bytes(dir.file("zero_long.idx"), idx_bytes(0x08, {0, 4}, {1, 2}));
  expect_error([&] { (void)read_idx(dir.file("zero_long.idx")); }, {"zero_long.idx", "2 unexpected bytes"});
  // Empty, but the other dims multiply beyond int64: refused, naming the file.
  write_bytes(dir.file("zero_huge.idx"), idx_bytes(0x08, {0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, {}));
  expect_error([&] { (void)read_idx(dir.file("zero_huge.idx")); }, {"zero_huge.idx", "overflows"});
}

// .npy/.npz against files written by numpy 1.24 (tests/data/gen_npy.py).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "ember/io/atomic_file.h"
#include "ember/io/npy.h"
#include "ember/ops/factory.h"

using namespace ember;

namespace {

std::string npy(const std::string& name) { return std::string(EMBER_TEST_DATA_DIR) + "/npy/" + name; }
std::string tmp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  if (!v.empty()) std::memcpy(v.data(), t.contiguous().data_ptr(), t.nbytes());
  return v;
}

std::vector<float> f32_2x3() { return {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}; }

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one containing: " << needle;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Npy, LoadsEveryDtypeWrittenByNumpy) {
  Tensor f = io::load_npy(npy("f32_2x3.npy"));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(f), f32_2x3());
  Tensor d = io::load_npy(npy("f64_4.npy"));
  EXPECT_EQ(d.dtype(), kFloat64);
  std::vector<double> dv = values<double>(d);
  EXPECT_EQ(dv[0], 1.5); EXPECT_EQ(dv[1], -2.25); EXPECT_EQ(dv[2], 1e300);
  EXPECT_TRUE(dv[3] == 0.0 && std::signbit(dv[3]));
  Tensor h = io::load_npy(npy("f16_3.npy"));
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(values<uint16_t>(h), (std::vector<uint16_t>{0x3800, 0xBC00, 0x7BFF}));
  EXPECT_EQ(values<int32_t>(io::load_npy(npy("i32_2x2.npy"))), (std::vector<int32_t>{1, -2, INT32_MAX, INT32_MIN}));
  EXPECT_EQ(values<int64_t>(io::load_npy(npy("i64_3.npy"))), (std::vector<int64_t>{int64_t{1} << 62, -5, 7}));
  EXPECT_EQ(values<uint8_t>(io::load_npy(npy("u8_5.npy"))), (std::vector<uint8_t>{251, 252, 253, 254, 255}));
  EXPECT_EQ(values<int8_t>(io::load_npy(npy("i8_3.npy"))), (std::vector<int8_t>{-128, 0, 127}));
  for (const char* name : {"i16_3.npy", "big_i16_3.npy"}) {
    Tensor s = io::load_npy(npy(name));
    EXPECT_EQ(s.dtype(), kInt16) << name;
    EXPECT_EQ(values<int16_t>(s), (std::vector<int16_t>{-32768, 258, 32767})) << name;
  }
  Tensor b = io::load_npy(npy("bool_4.npy"));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values<uint8_t>(b), (std::vector<uint8_t>{1, 0, 0, 1}));
  Tensor bf = io::load_npy(npy("bf16_as_v2_3.npy"));
  EXPECT_EQ(bf.dtype(), kBFloat16);
  EXPECT_EQ(values<uint16_t>(bf), (std::vector<uint16_t>{0x3F80, 0xC000, 0x4049}));
}

TEST(Npy, ZeroDimAndZeroSize) {
  Tensor s = io::load_npy(npy("scalar_f64.npy"));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(values<double>(s), (std::vector<double>{3.25}));
  Tensor e = io::load_npy(npy("empty_0x3.npy"));
  EXPECT_EQ(e.sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(Npy, BigEndianAndFortranOrder) {
  Tensor f = io::load_npy(npy("big_f32_2x3.npy"));
  EXPECT_EQ(values<float>(f), f32_2x3());
  EXPECT_EQ(values<int64_t>(io::load_npy(npy("big_i64_3.npy"))), (std::vector<int64_t>{int64_t{1} << 62, -5, 7}));
  Tensor fo = io::load_npy(npy("fortran_f32_2x3.npy"));
  EXPECT_EQ(fo.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(fo), f32_2x3());
  Tensor f3 = io::load_npy(npy("fortran_i32_2x3x4.npy"));
  EXPECT_EQ(f3.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  std::vector<int32_t> want(24);
  for (int k = 0; k < 24; ++k) want[k] = k;
  EXPECT_EQ(values<int32_t>(f3), want);
}

TEST(Npy, SaveReproducesNumpyFilesBitwise) {
  for (const char* name : {"f32_2x3", "f64_4", "f16_3", "i32_2x2", "i64_3", "u8_5", "i8_3", "i16_3", "bool_4",
                           "scalar_f64", "empty_0x3", "bf16_as_v2_3"}) {
    const std::string file = npy(std::string(name) + ".npy");
    const std::string original = io::read_file(file);
    EXPECT_EQ(io::npy_to_bytes(io::load_npy(file)), original) << name;
  }
  // Big-endian and Fortran files are written back little-endian C-order, equal
  // to numpy's little-endian C-order file of the same values.
  EXPECT_EQ(io::npy_to_bytes(io::load_npy(npy("big_f32_2x3.npy"))), io::read_file(npy("f32_2x3.npy")));
  EXPECT_EQ(io::npy_to_bytes(io::load_npy(npy("fortran_f32_2x3.npy"))), io::read_file(npy("f32_2x3.npy")));
  const std::string p = tmp_path("rt.npy");
  Tensor t = io::load_npy(npy("i64_3.npy"));
  io::save_npy(p, t);
  EXPECT_EQ(io::read_file(p), io::read_file(npy("i64_3.npy")));
}

TEST(Npz, StoredAndDeflatedFromNumpy) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    StateDict sd = io::load_npz(npy(name));
    ASSERT_TRUE(sd.contains("a") && sd.contains("b")) << name;
    EXPECT_EQ(sd["a"].sizes().vec(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values<float>(sd["a"]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(values<int64_t>(sd["b"]), (std::vector<int64_t>{1, 2, 3}));
  }
  StateDict d = io::load_npz(npy("deflated.npz"));
  EXPECT_EQ(values<double>(d["z"]), std::vector<double>(100, 0.0));
}

TEST(Npz, RoundTripStoredAndDeflated) {
  StateDict sd = io::load_npz(npy("deflated.npz"));
  for (bool compressed : {false, true}) {
    const std::string p = tmp_path(compressed ? "rt_c.npz" : "rt_s.npz");
    io::save_npz(p, sd, compressed);
    StateDict back = io::load_npz(p);
    ASSERT_EQ(back.keys(), sd.keys());
    for (const auto& [k, t] : sd) EXPECT_EQ(io::npy_to_bytes(back[k]), io::npy_to_bytes(t)) << k;
  }
}

TEST(Npy, BadInputNamesFileAndProblem) {
  const std::string good = io::read_file(npy("f32_2x3.npy"));
  expect_error([] { io::npy_from_bytes("hello world", "x.npy"); }, "'x.npy': no \\x93NUMPY magic");
  expect_error([&] { io::npy_from_bytes(good.substr(0, good.size() - 4), "t.npy"); }, "truncated");
  expect_error([&] { io::npy_from_bytes(good + "x", "t.npy"); }, "trailing");
  std::string huge = good;
  huge.replace(huge.find("(2, 3)"), 6, "(99999999, 9999)");
  expect_error([&] { io::npy_from_bytes(huge, "h.npy"); }, "truncated");
  std::string over = good;
  over.replace(over.find("(2, 3)"), 6, "(4294967296, 4294967296)");
  expect_error([&] { io::npy_from_bytes(over, "o.npy"); }, "overflows");
  std::string obj = good;
  obj.replace(obj.find("'<f4'"), 5, "'|O' ");
  expect_error([&] { io::npy_from_bytes(obj, "o.npy"); }, "pickle");
  std::string neg = good;
  neg.replace(neg.find("(2, 3)"), 6, "(-2, 3)");
  expect_error([&] { io::npy_from_bytes(neg, "n.npy"); }, "non-integer");
  std::string badlen = good;
  badlen[8] = '\xff'; badlen[9] = '\xff';
  expect_error([&] { io::npy_from_bytes(badlen, "l.npy"); }, "overruns");
  expect_error([] { io::load_npy("/nonexistent/file.npy"); }, "/nonexistent/file.npy");
  // Found by fuzz_npy: a 19-digit dim past int64 threw std::out_of_range from
  // std::stoll (not an ember error), and a repeated key appended to the shape.
  auto v1 = [](const std::string& dict) {
    std::string h = dict;
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string f = std::string("\x93NUMPY\x01\x00", 8);
    f += static_cast<char>(h.size() & 0xff);
    f += static_cast<char>(h.size() >> 8);
    return f + h;
  };
  expect_error([&] { io::npy_from_bytes(v1("{'descr': '<f4', 'fortran_order': False, 'shape': (9999999999999999999,), }"), "big.npy"); },
               "out-of-range dim '9999999999999999999'");
  expect_error([&] { io::npy_from_bytes(v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': (0, 2), }"), "dup.npy"); },
               "header key 'shape' appears twice");
  EXPECT_EQ(io::npy_from_bytes(v1("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2), }"), "ok.npy").sizes().vec(),
            (std::vector<int64_t>{0, 2})) << "the helper writes a valid header";
}

TEST(Npz, CorruptArchivesAreRefused) {
  const std::string good = io::read_file(npy("deflated.npz"));
  const std::string p = tmp_path("bad.npz");
  auto with = [&](std::string bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  };
  expect_error([&] { io::load_npz(with("not a zip at all, not a zip at all")); }, "end-of-central-directory");
  expect_error([&] { io::load_npz(with(good.substr(0, good.size() / 2))); }, p);
  // Flip a byte inside the first member's deflate data: CRC or inflate fails.
  std::string flipped = good;
  flipped[60] = static_cast<char>(flipped[60] ^ 0x55);
  expect_error([&] { io::load_npz(with(flipped)); }, p);
}

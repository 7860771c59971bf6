// Whole-file reads through zlib's gz* API, which passes raw files through.
#include "file_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ember/core/error.h"

namespace ember::data::detail {

namespace {
struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};

void check_exists(const std::string& path) {
  std::error_code ec;
  EMBER_CHECK(std::filesystem::exists(path, ec),
              "cannot open '{}': no such file or directory; check the path (for Fashion-MNIST, "
              "install Debian's dataset-fashion-mnist package)", path);
  EMBER_CHECK(!std::filesystem::is_directory(path, ec),
              "cannot read '{}': it is a directory, expected a file", path);
}
}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  check_exists(path);
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  EMBER_CHECK(f, "cannot open '{}': {}", path, std::strerror(errno));
  gzbuffer(f.get(), 1 << 17);
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    int n = gzread(f.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
    if (n == 0 || gzeof(f.get())) break;
  }
  int err = Z_OK;
  const char* msg = gzerror(f.get(), &err);
  EMBER_CHECK(err == Z_OK || err == Z_STREAM_END,
              "cannot read '{}': corrupt or truncated gzip data after {} bytes ({})", path,
              out.size(), msg ? msg : "unknown zlib error");
  return out;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= bytes.size(); ++i) {
    if (i == bytes.size() || bytes[i] == '\n') {
      if (i == bytes.size() && start == i) break;  // no empty line after a final "\n"
      size_t end = i;
      if (end > start && bytes[end - 1] == '\r') --end;
      lines.emplace_back(reinterpret_cast<const char*>(bytes.data()) + start, end - start);
      start = i + 1;
    }
  }
  return lines;
}

}  // namespace ember::data::detail

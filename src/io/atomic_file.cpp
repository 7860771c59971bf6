#include "ember/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "ember/core/error.h"

namespace ember::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

// Owns the temporary file; unlinks it unless committed.
class TempFile {
 public:
  TempFile(const std::string& target, std::string_view what) : target_(target), what_(what) {
    std::random_device rd;
    path_ = fmt::format("{}.tmp.{}.{:08x}", target, static_cast<long>(::getpid()), rd());
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    EMBER_CHECK(fd_ >= 0, "{}: cannot create '{}' to write '{}': {}", what_, path_, target_, errno_text());
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_all(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t w = ::write(fd_, data.data() + done, data.size() - done);
      if (w < 0 && errno == EINTR) continue;
      EMBER_CHECK(w > 0, "{}: writing '{}' failed: {}", what_, target_, errno_text());
      done += static_cast<size_t>(w);
    }
  }

  void commit() {
    EMBER_CHECK(::fsync(fd_) == 0, "{}: fsync of '{}' failed: {}", what_, target_, errno_text());
    int rc = ::close(fd_);
    fd_ = -1;
    EMBER_CHECK(rc == 0, "{}: closing '{}' failed: {}", what_, target_, errno_text());
    EMBER_CHECK(::rename(path_.c_str(), target_.c_str()) == 0, "{}: renaming '{}' to '{}' failed: {}", what_, path_,
                target_, errno_text());
    committed_ = true;
    // Persist the rename itself.
    std::string dir = target_.find('/') == std::string::npos ? "." : target_.substr(0, target_.rfind('/') + 1);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::string target_, what_, path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_file_atomic(const std::string& path, std::string_view contents, std::string_view what) {
  TempFile tmp(path, what);
  tmp.write_all(contents);
  tmp.commit();
}

std::string read_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in.good(), "{}: cannot open '{}': {}", what, path, errno_text());
  std::ostringstream ss;
  ss << in.rdbuf();
  EMBER_CHECK(!in.bad(), "{}: reading '{}' failed: {}", what, path, errno_text());
  return ss.str();
}

}  // namespace ember::io

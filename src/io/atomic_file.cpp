#include "ember/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
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

namespace {

// The writer's PID when name is "<base>.tmp.<pid>.<8 hex>" (base non-empty,
// equal to `base` when given), else 0.
long temp_file_pid(std::string_view name, std::string_view base) {
  constexpr std::string_view kTmp = ".tmp.";
  if (name.size() < 9 + kTmp.size() + 2) return 0;
  const std::string_view hex = name.substr(name.size() - 8);
  if (name[name.size() - 9] != '.' ||
      !std::all_of(hex.begin(), hex.end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); }))
    return 0;
  std::string_view rest = name.substr(0, name.size() - 9);  // "<base>.tmp.<pid>"
  const size_t tmp = rest.rfind(kTmp);
  if (tmp == std::string_view::npos || tmp == 0) return 0;
  if (!base.empty() && rest.substr(0, tmp) != base) return 0;
  const std::string_view digits = rest.substr(tmp + kTmp.size());
  long pid = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return 0;
  return pid;
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

size_t remove_stale_temp_files(const std::string& dir, const std::string& target, std::chrono::seconds max_age) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? "." : dir, ec), end;
  if (ec) return 0;
  const std::string base = target.empty() ? std::string() : fs::path(target).filename().string();
  const auto now = fs::file_time_type::clock::now();
  size_t removed = 0;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const long pid = temp_file_pid(name, base);
    if (pid == 0 || !it->is_regular_file(ec)) continue;
    bool stale = pid != static_cast<long>(::getpid()) && !process_alive(pid);
    if (!stale) {
      const auto mtime = fs::last_write_time(it->path(), ec);
      stale = !ec && now - mtime > max_age;
    }
    if (stale && fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

void write_file_atomic(const std::string& path, std::string_view contents, std::string_view what) {
  // Leftovers of earlier writes of this file that were killed mid-way
  // (a crash between open and rename): one directory scan per write.
  const size_t slash = path.rfind('/');
  remove_stale_temp_files(slash == std::string::npos ? "." : path.substr(0, slash + 1), path);
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

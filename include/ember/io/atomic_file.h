// Crash-safe file replacement: write a temporary file beside the target,
// fsync it, rename it over the target, fsync the directory. A failure at any
// point (disk full, permissions) throws and leaves the previous file intact.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace ember::io {

// Throws ember::Error "<what>: ... '<path>' ...: <strerror>" on failure.
void write_file_atomic(const std::string& path, std::string_view contents, std::string_view what = "write");

// Removes the temporary files a killed write_file_atomic left in `dir`
// ("<name>.tmp.<pid>.<8 hex digits>"): those whose writer process is gone,
// and any older than max_age (a reused PID). Another live process's temp file
// is never touched. With target non-empty only target's temp files count.
// Returns how many were removed; errors removing a file are ignored (it may
// have just been renamed by its writer).
size_t remove_stale_temp_files(const std::string& dir, const std::string& target = "",
                               std::chrono::seconds max_age = std::chrono::hours(24));

// Whole file as bytes; throws ember::Error naming the path when unreadable.
std::string read_file(const std::string& path, std::string_view what = "read");

}  // namespace ember::io

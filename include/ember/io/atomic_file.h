// Crash-safe file replacement: write a temporary file beside the target,
// fsync it, rename it over the target, fsync the directory. A failure at any
// point (disk full, permissions) throws and leaves the previous file intact.
#pragma once

#include <string>
#include <string_view>

namespace ember::io {

// Throws ember::Error "<what>: ... '<path>' ...: <strerror>" on failure.
void write_file_atomic(const std::string& path, std::string_view contents, std::string_view what = "write");

// Whole file as bytes; throws ember::Error naming the path when unreadable.
std::string read_file(const std::string& path, std::string_view what = "read");

}  // namespace ember::io

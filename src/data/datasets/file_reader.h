// Reading whole files (gzip transparently) with errors that name the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::data::detail {

// The file's bytes, decompressed when it starts with the gzip magic 1f 8b.
// A missing/unreadable file or corrupt/truncated gzip data is an ember::Error
// naming the file.
std::vector<uint8_t> read_file_bytes(const std::string& path);

// The lines of a text file (without "\n" or "\r\n").
std::vector<std::string> read_lines(const std::string& path);

}  // namespace ember::data::detail

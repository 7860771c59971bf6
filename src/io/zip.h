// Minimal zip archive reader/writer for .npz and torch.save files (internal).
// Reading parses the central directory with every offset and size checked
// against the archive; members are stored or deflated (inflated with zlib).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::io::zip {

struct Member {
  std::string name;
  uint16_t method = 0;          // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t data_offset = 0;     // start of the member's bytes in the archive
};

// Parses the central directory of `bytes`; `source` names the file in errors.
std::vector<Member> list(std::string_view bytes, const std::string& source);
// The member's uncompressed bytes, CRC-checked. Allocation is bounded by the
// member's compressed size (deflate expands at most ~1032x).
std::string extract(std::string_view bytes, const Member& m, const std::string& source);

struct Entry {
  std::string name;
  std::string data;
};
// A whole archive; deflate=true compresses each member (zlib, raw deflate).
std::string write(const std::vector<Entry>& entries, bool deflate);

}  // namespace ember::io::zip

// JPEG marker walk (ITU T.81, B.1): segments carry a 2-byte big-endian length
// that includes itself; after a start-of-scan header the entropy-coded data
// runs until a marker other than a stuffed 0xFF00 or a restart marker.
#include "jpeg_check.h"

#include <cstddef>

#include "ember/core/error.h"

namespace ember::data::detail {

namespace {

constexpr unsigned char kSos = 0xDA, kDht = 0xC4, kEoi = 0xD9;

bool is_standalone(unsigned char m) { return m == 0x01 || m == 0xD8 || m == kEoi || (m >= 0xD0 && m <= 0xD7); }

// Tables in one DHT segment payload [begin, end); end may lie past the file's
// last byte, where stb reads zeros (so a missing count adds nothing).
void check_dht(const std::vector<unsigned char>& b, size_t begin, size_t end, const std::string& path) {
  size_t p = begin;
  while (p < end && p < b.size()) {
    size_t codes = 0;
    for (size_t i = 1; i <= 16 && p + i < b.size(); ++i) codes += b[p + i];
    EMBER_CHECK(codes <= 256, "read_image: '{}': JPEG Huffman table at byte {} declares {} codes, more than 256; "
                "the file is corrupt", path, p, codes);
    p += 17 + codes;
  }
}

}  // namespace

void check_jpeg_huffman_tables(const std::vector<unsigned char>& b, const std::string& path) {
  if (b.size() < 2 || b[0] != 0xFF || b[1] != 0xD8) return;  // not a JPEG
  size_t p = 2;
  bool in_scan = false;
  while (p + 1 < b.size()) {
    if (b[p] != 0xFF) {  // entropy-coded data, or garbage the decoder reports
      ++p;
      continue;
    }
    const unsigned char m = b[p + 1];
    if (m == 0xFF) {  // fill byte
      ++p;
      continue;
    }
    if (m == 0x00 || (in_scan && m >= 0xD0 && m <= 0xD7)) {  // stuffed byte or restart inside a scan
      p += 2;
      continue;
    }
    if (m == kEoi) return;
    if (is_standalone(m)) {
      p += 2;
      continue;
    }
    if (p + 4 > b.size()) return;  // truncated: the decoder says so
    const size_t len = (size_t{b[p + 2]} << 8) | b[p + 3];
    const size_t begin = p + 4, end = p + 2 + len;
    // A segment running past the end of the file is still read by stb (as
    // zeros beyond the last byte), so its tables are checked before giving up.
    if (m == kDht) check_dht(b, begin, end, path);
    if (len < 2 || end > b.size()) return;  // the decoder reports the bad length
    in_scan = m == kSos;
    p = end;
  }
}

}  // namespace ember::data::detail

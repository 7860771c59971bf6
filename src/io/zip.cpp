#include "zip.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "ember/core/error.h"

namespace ember::io::zip {

namespace {

#define EMBER_ZIP_CHECK(cond, ...) \
  EMBER_CHECK(cond, "zip: cannot read '{}': {}", source, fmt::format(__VA_ARGS__))

uint64_t rd(std::string_view b, uint64_t off, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + i]);
  return v;
}

void put(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

constexpr uint32_t kEocd = 0x06054b50, kEocd64 = 0x06064b50, kLoc64 = 0x07064b50, kCentral = 0x02014b50,
                   kLocal = 0x04034b50;

}  // namespace

std::vector<Member> list(std::string_view b, const std::string& source) {
  const uint64_t n = b.size();
  EMBER_ZIP_CHECK(n >= 22, "{} bytes is too short for a zip archive", n);
  // The end record is in the last 22 + 65535 bytes (its comment is at most 64 KiB).
  uint64_t eocd = UINT64_MAX;
  for (uint64_t p = n - 22 + 1; p-- > 0 && n - p <= 22 + 65535;) {
    if (rd(b, p, 4) == kEocd && p + 22 + rd(b, p + 20, 2) == n) {
      eocd = p;
      break;
    }
  }
  EMBER_ZIP_CHECK(eocd != UINT64_MAX, "no end-of-central-directory record; not a zip archive or truncated");
  uint64_t count = rd(b, eocd + 10, 2), cd_size = rd(b, eocd + 12, 4), cd_off = rd(b, eocd + 16, 4);
  if (count == 0xffff || cd_size == 0xffffffff || cd_off == 0xffffffff) {
    EMBER_ZIP_CHECK(eocd >= 20 && rd(b, eocd - 20, 4) == kLoc64, "zip64 end record locator missing");
    uint64_t e64 = rd(b, eocd - 20 + 8, 8);
    EMBER_ZIP_CHECK(e64 <= n && n - e64 >= 56 && rd(b, e64, 4) == kEocd64, "zip64 end record at {} is invalid", e64);
    count = rd(b, e64 + 32, 8);
    cd_size = rd(b, e64 + 40, 8);
    cd_off = rd(b, e64 + 48, 8);
  }
  EMBER_ZIP_CHECK(cd_off <= n && cd_size <= n - cd_off, "central directory [{}, +{}) lies outside the {}-byte file",
                  cd_off, cd_size, n);
  // Each central entry is at least 46 bytes: bounds the reservation by the file.
  EMBER_ZIP_CHECK(count <= cd_size / 46, "central directory claims {} entries in {} bytes", count, cd_size);
  std::vector<Member> out;
  out.reserve(count);
  uint64_t p = cd_off;
  const uint64_t end = cd_off + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    EMBER_ZIP_CHECK(end - p >= 46 && rd(b, p, 4) == kCentral, "central directory entry {} is malformed", i);
    Member m;
    const uint64_t flags = rd(b, p + 8, 2);
    m.method = static_cast<uint16_t>(rd(b, p + 10, 2));
    m.crc = static_cast<uint32_t>(rd(b, p + 16, 4));
    m.compressed_size = rd(b, p + 20, 4);
    m.size = rd(b, p + 24, 4);
    const uint64_t name_len = rd(b, p + 28, 2), extra_len = rd(b, p + 30, 2), comment_len = rd(b, p + 32, 2);
    uint64_t local = rd(b, p + 42, 4);
    EMBER_ZIP_CHECK(end - p - 46 >= name_len + extra_len + comment_len, "central directory entry {} overruns", i);
    m.name.assign(b.substr(p + 46, name_len));
    EMBER_ZIP_CHECK((flags & 1) == 0, "member '{}' is encrypted", m.name);
    // zip64 extra field: the 0xffffffff fields follow in order.
    uint64_t x = p + 46 + name_len;
    const uint64_t xend = x + extra_len;
    while (xend - x >= 4) {
      const uint64_t id = rd(b, x, 2), len = rd(b, x + 2, 2);
      EMBER_ZIP_CHECK(xend - x - 4 >= len, "member '{}' has a truncated extra field", m.name);
      if (id == 1) {
        uint64_t q = x + 4, qend = x + 4 + len;
        for (uint64_t* f : {&m.size, &m.compressed_size, &local}) {
          if (*f != 0xffffffff) continue;
          EMBER_ZIP_CHECK(qend - q >= 8, "member '{}' has a short zip64 extra field", m.name);
          *f = rd(b, q, 8);
          q += 8;
        }
      }
      x += 4 + len;
    }
    EMBER_ZIP_CHECK(m.method == 0 || m.method == 8, "member '{}' uses compression method {} (only stored and deflate)",
                    m.name, m.method);
    EMBER_ZIP_CHECK(local <= n && n - local >= 30 && rd(b, local, 4) == kLocal,
                    "member '{}' has no local header at offset {}", m.name, local);
    const uint64_t data = local + 30 + rd(b, local + 26, 2) + rd(b, local + 28, 2);
    EMBER_ZIP_CHECK(data <= n && m.compressed_size <= n - data,
                    "member '{}' data [{}, +{}) lies outside the {}-byte file", m.name, data, m.compressed_size, n);
    EMBER_ZIP_CHECK(m.method == 8 || m.size == m.compressed_size, "stored member '{}' has size {} != compressed {}",
                    m.name, m.size, m.compressed_size);
    EMBER_ZIP_CHECK(m.method == 0 || m.size / 1032 <= m.compressed_size + 1,
                    "deflated member '{}' claims {} bytes from {} (more than deflate can expand)", m.name, m.size,
                    m.compressed_size);
    m.data_offset = data;
    out.push_back(std::move(m));
    p += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

std::string extract(std::string_view b, const Member& m, const std::string& source) {
  std::string out;
  if (m.method == 0) {
    out.assign(b.substr(m.data_offset, m.size));
  } else {
    out.resize(m.size);
    z_stream zs{};
    EMBER_ZIP_CHECK(inflateInit2(&zs, -MAX_WBITS) == Z_OK, "zlib inflateInit failed");
    uint64_t in_left = m.compressed_size, out_done = 0;
    const unsigned char* in = reinterpret_cast<const unsigned char*>(b.data() + m.data_offset);
    int rc = Z_OK;
    unsigned char spare;
    while (rc == Z_OK) {
      const uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_left, UINT_MAX));
      zs.next_in = const_cast<unsigned char*>(in);
      zs.avail_in = in_chunk;
      const bool room = out_done < m.size;
      // Once full, a one-byte spare buffer detects output beyond the claimed size.
      zs.next_out = room ? reinterpret_cast<unsigned char*>(out.data()) + out_done : &spare;
      zs.avail_out = room ? static_cast<uInt>(std::min<uint64_t>(m.size - out_done, UINT_MAX)) : 1;
      const uInt out_before = zs.avail_out;
      rc = inflate(&zs, Z_NO_FLUSH);
      const uint64_t consumed = in_chunk - zs.avail_in, produced = out_before - zs.avail_out;
      in += consumed;
      in_left -= consumed;
      if (!room && produced > 0) {
        inflateEnd(&zs);
        EMBER_ZIP_CHECK(false, "member '{}' inflates to more than its stated {} bytes", m.name, m.size);
      }
      out_done += produced;
      if (rc == Z_BUF_ERROR && in_left == 0) break;
      if (rc == Z_OK && consumed == 0 && produced == 0 && in_left == 0) break;
    }
    inflateEnd(&zs);
    EMBER_ZIP_CHECK(rc == Z_STREAM_END, "member '{}' has corrupt deflate data", m.name);
    EMBER_ZIP_CHECK(out_done == m.size, "member '{}' inflates to {} bytes, expected {}", m.name, out_done, m.size);
  }
  uLong crc = crc32(0, nullptr, 0);
  for (uint64_t off = 0; off < out.size(); off += UINT_MAX)
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + off),
                static_cast<uInt>(std::min<uint64_t>(out.size() - off, UINT_MAX)));
  EMBER_ZIP_CHECK(crc == m.crc, "member '{}' fails its CRC-32 check (corrupt data)", m.name);
  return out;
}

std::string write(const std::vector<Entry>& entries, bool deflate_members) {
  std::string out, central;
  for (const Entry& e : entries) {
    EMBER_CHECK(e.data.size() < 0xffffffffULL && e.name.size() < 0xffff,
                "zip: member '{}' is too large (zip64 writing is not supported)", e.name);
    const uint32_t crc = static_cast<uint32_t>(
        crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    std::string body = e.data;
    uint16_t method = 0;
    if (deflate_members) {
      z_stream zs{};
      EMBER_CHECK(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                  "zip: zlib deflateInit failed");
      body.resize(deflateBound(&zs, static_cast<uLong>(e.data.size())));
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(e.data.data()));
      zs.avail_in = static_cast<uInt>(e.data.size());
      zs.next_out = reinterpret_cast<Bytef*>(body.data());
      zs.avail_out = static_cast<uInt>(body.size());
      const int rc = deflate(&zs, Z_FINISH);
      body.resize(zs.total_out);
      deflateEnd(&zs);
      EMBER_CHECK(rc == Z_STREAM_END, "zip: deflate of member '{}' failed", e.name);
      method = 8;
    }
    EMBER_CHECK(out.size() < 0xffffffffULL, "zip: archive beyond 4 GiB (zip64 writing is not supported)");
    const uint64_t local = out.size();
    put(out, kLocal, 4); put(out, 20, 2); put(out, 0, 2); put(out, method, 2);
    put(out, 0, 2); put(out, 0x21, 2);  // time 00:00, date 1980-01-01
    put(out, crc, 4); put(out, body.size(), 4); put(out, e.data.size(), 4);
    put(out, e.name.size(), 2); put(out, 0, 2);
    out += e.name;
    out += body;
    put(central, kCentral, 4); put(central, 20, 2); put(central, 20, 2); put(central, 0, 2);
    put(central, method, 2); put(central, 0, 2); put(central, 0x21, 2);
    put(central, crc, 4); put(central, body.size(), 4); put(central, e.data.size(), 4);
    put(central, e.name.size(), 2); put(central, 0, 2); put(central, 0, 2); put(central, 0, 2);
    put(central, 0, 2); put(central, 0, 4); put(central, local, 4);
    central += e.name;
  }
  EMBER_CHECK(entries.size() < 0xffff && out.size() + central.size() < 0xffffffffULL,
              "zip: archive too large (zip64 writing is not supported)");
  const uint64_t cd_off = out.size();
  out += central;
  put(out, kEocd, 4); put(out, 0, 2); put(out, 0, 2); put(out, entries.size(), 2); put(out, entries.size(), 2);
  put(out, central.size(), 4); put(out, cd_off, 4); put(out, 0, 2);
  return out;
}

}  // namespace ember::io::zip

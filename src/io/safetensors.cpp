// safetensors reader/writer with validation and atomic writes.
#include "ember/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ember/io/atomic_file.h"
#include "ember/ops/factory.h"

namespace ember::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors I/O copies raw bytes and assumes a little-endian host");

namespace {

using json = nlohmann::ordered_json;

// Same bound as the reference implementation: a header this large is a
// corrupt length field, not a real file.
constexpr uint64_t kMaxHeader = 100'000'000;

struct DtypeName {
  ScalarType type;
  const char* name;
};
constexpr DtypeName kDtypes[] = {{kFloat32, "F32"}, {kFloat64, "F64"}, {kBFloat16, "BF16"}, {kFloat16, "F16"},
                                 {kInt64, "I64"},   {kInt32, "I32"},   {kInt16, "I16"},     {kInt8, "I8"},       {kUInt8, "U8"},
                                 {kBool, "BOOL"}};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

const char* dtype_name(ScalarType t) {
  for (const DtypeName& d : kDtypes)
    if (d.type == t) return d.name;
  EMBER_ERROR("safetensors: dtype {} has no safetensors name", to_string(t));
}

ScalarType dtype_from_name(const std::string& name) {
  for (const DtypeName& d : kDtypes)
    if (name == d.name) return d.type;
  EMBER_ERROR("safetensors: unsupported dtype '{}' (Ember reads F32, F64, BF16, F16, I64, I32, I8, U8, BOOL)", name);
}

// ---- writing ----

std::string save(const StateDict& tensors, const Metadata& metadata) {
  json header = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  std::vector<Tensor> bodies;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(t.defined(), "safetensors: tensor '{}' is undefined", name);
    EMBER_CHECK(name != "__metadata__", "safetensors: '__metadata__' is reserved and cannot name a tensor");
    EMBER_CHECK(t.device().is_cpu(), "safetensors: tensor '{}' is on {}; move it to the CPU first", name,
                t.device().str());
    Tensor c = t.detach().contiguous();
    uint64_t n = c.nbytes();
    header[name] = {{"dtype", dtype_name(c.dtype())}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + n}}};
    offset += n;
    bodies.push_back(c);
  }
  std::string head = header.dump();
  // Pad with spaces so the data starts 8-byte aligned (as the reference
  // writer does); JSON ignores the trailing whitespace.
  head.append((8 - head.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + head.size() + offset);
  uint64_t len = head.size();
  out.append(reinterpret_cast<const char*>(&len), 8);
  out += head;
  for (const Tensor& c : bodies) out.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  return out;
}

void save_file(const StateDict& tensors, const std::string& path, const Metadata& metadata) {
  io::write_file_atomic(path, save(tensors, metadata), "safetensors");
}

// ---- reading ----

namespace {

struct Entry {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

struct Header {
  std::vector<Entry> entries;  // sorted by offset
  Metadata metadata;
  uint64_t data_start = 0;     // 8 + header length
};

#define EMBER_ST_CHECK(cond, ...) \
  EMBER_CHECK(cond, "safetensors: cannot load '{}': {}", source, fmt::format(__VA_ARGS__))

// prefix: at least the first 8 + N bytes; total: the whole size.
Header parse_header(const std::string& prefix, uint64_t total, const std::string& source) {
  EMBER_ST_CHECK(total >= 8, "file is truncated: {} bytes, shorter than the 8-byte header length", total);
  uint64_t n = 0;
  std::memcpy(&n, prefix.data(), 8);
  EMBER_ST_CHECK(n <= kMaxHeader, "header length {} is implausible (limit {}); the file is corrupt or not safetensors",
                 n, kMaxHeader);
  EMBER_ST_CHECK(8 + n <= total, "file is truncated: header says {} bytes of JSON, but only {} bytes follow", n,
                 total - 8);
  std::string_view text(prefix.data() + 8, n);
  EMBER_ST_CHECK(!text.empty() && text[0] == '{', "header does not start with '{{'; the file is not safetensors");
  json h = json::parse(text, nullptr, false);
  EMBER_ST_CHECK(!h.is_discarded() && h.is_object(), "header is not valid JSON");

  Header out;
  out.data_start = 8 + n;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      EMBER_ST_CHECK(v.is_object(), "__metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        EMBER_ST_CHECK(m.value().is_string(), "__metadata__ value for '{}' is not a string", m.key());
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    EMBER_ST_CHECK(v.is_object() && v.contains("dtype") && v.contains("shape") && v.contains("data_offsets") &&
                       v["dtype"].is_string() && v["shape"].is_array() && v["data_offsets"].is_array() &&
                       v["data_offsets"].size() == 2,
                   "entry '{}' needs dtype (string), shape (array) and data_offsets ([begin, end])", name);
    Entry e;
    e.name = name;
    e.dtype = dtype_from_name(v["dtype"].get<std::string>());
    // Every product is overflow-checked (a 92-byte file can declare a shape
    // whose element count wraps to the size of its data), and the byte count
    // must match data_offsets, which the checks below bound by the file size.
    // Zero dims count as 1 in `span` so that even an empty tensor's strides
    // fit int64 (Note [size checks] in tensor_impl.h).
    uint64_t numel = 1, span = 1;
    bool overflow = false;
    for (const json& d : v["shape"]) {
      EMBER_ST_CHECK(d.is_number_unsigned() || (d.is_number_integer() && d.get<int64_t>() >= 0),
                     "entry '{}' has a negative or non-integer dim in its shape", name);
      const uint64_t dim = d.get<uint64_t>();
      EMBER_ST_CHECK(dim <= static_cast<uint64_t>(INT64_MAX), "entry '{}' has dim {} in its shape, beyond int64",
                     name, dim);
      e.shape.push_back(static_cast<int64_t>(dim));
      overflow |= __builtin_mul_overflow(numel, dim, &numel);
      overflow |= __builtin_mul_overflow(span, std::max<uint64_t>(dim, 1), &span);
    }
    uint64_t nbytes = 0;
    overflow |= __builtin_mul_overflow(numel, uint64_t{element_size(e.dtype)}, &nbytes);
    overflow |= span > static_cast<uint64_t>(INT64_MAX) / element_size(e.dtype);
    EMBER_ST_CHECK(!overflow, "entry '{}' has {} shape [{}], whose size overflows int64 bytes; the file is corrupt",
                   name, v["dtype"].get<std::string>(), fmt::join(e.shape, ", "));
    for (const json& o : v["data_offsets"])
      EMBER_ST_CHECK(o.is_number_unsigned() || (o.is_number_integer() && o.get<int64_t>() >= 0),
                     "entry '{}' has invalid data_offsets", name);
    e.begin = v["data_offsets"][0].get<uint64_t>();
    e.end = v["data_offsets"][1].get<uint64_t>();
    EMBER_ST_CHECK(e.begin <= e.end && e.end - e.begin == nbytes,
                   "entry '{}' has data_offsets [{}, {}] but {} shape [{}] needs {} bytes", name, e.begin, e.end,
                   v["dtype"].get<std::string>(), fmt::join(e.shape, ", "), nbytes);
    out.entries.push_back(std::move(e));
  }
  // By (begin, end): an empty tensor shares its begin with the next one and
  // must come first, whatever order the sort would leave ties in.
  std::sort(out.entries.begin(), out.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expect = 0;
  for (const Entry& e : out.entries) {
    EMBER_ST_CHECK(e.begin == expect, "tensor '{}' starts at byte {} but the previous data ends at {} (overlap or gap)",
                   e.name, e.begin, expect);
    expect = e.end;
  }
  uint64_t have = total - out.data_start;
  EMBER_ST_CHECK(have >= expect, "file is truncated: tensors need {} bytes of data, only {} present", expect, have);
  EMBER_ST_CHECK(have == expect, "{} unexpected trailing bytes after the tensor data", have - expect);
  return out;
}

StateDict build(const Header& h, const char* data) {
  StateDict out;
  for (const Entry& e : h.entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (e.end > e.begin) std::memcpy(t.data_ptr(), data + e.begin, e.end - e.begin);
    out.insert(e.name, t);
  }
  return out;
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK(f.good(), "safetensors: cannot open '{}': {}", path, errno_text());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

StateDict load(const std::string& bytes, Metadata* metadata, const std::string& source) {
  Header h = parse_header(bytes, bytes.size(), source);
  if (metadata) *metadata = h.metadata;
  return build(h, bytes.data() + h.data_start);
}

StateDict load_file(const std::string& path, Metadata* metadata) { return load(read_file_bytes(path), metadata, path); }

Metadata load_metadata(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  EMBER_CHECK(f.good(), "safetensors: cannot open '{}': {}", path, errno_text());
  uint64_t total = static_cast<uint64_t>(f.tellg());
  f.seekg(0);
  std::string prefix(std::min<uint64_t>(total, 8), '\0');
  f.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  if (total >= 8) {
    uint64_t n = 0;
    std::memcpy(&n, prefix.data(), 8);
    if (n <= kMaxHeader && 8 + n <= total) {
      prefix.resize(8 + n);
      f.read(prefix.data() + 8, static_cast<std::streamsize>(n));
    }
  }
  return parse_header(prefix, total, path).metadata;
}

}  // namespace ember::safetensors

#include "ember/io/npy.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <climits>
#include <cstring>

#include "ember/io/atomic_file.h"
#include "ember/ops/factory.h"
#include "zip.h"

namespace ember::io {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace {

#define EMBER_NPY_CHECK(cond, ...) \
  EMBER_CHECK(cond, "npy: cannot load '{}': {}", source, fmt::format(__VA_ARGS__))

struct Descr {
  ScalarType type;
  const char* code;  // without the byte-order character
};
constexpr Descr kDescrs[] = {{kBool, "b1"}, {kUInt8, "u1"}, {kInt8, "i1"},     {kInt16, "i2"},   {kInt32, "i4"},   {kInt64, "i8"},
                             {kFloat16, "f2"}, {kBFloat16, "V2"}, {kFloat32, "f4"}, {kFloat64, "f8"}};

// A cursor over numpy's header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
struct Lexer {
  std::string_view s;
  const std::string& source;
  size_t i = 0;
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  void expect(char c) { EMBER_NPY_CHECK(eat(c), "header: expected '{}' at offset {} in {}", c, i, s); }
  std::string str() {
    ws();
    EMBER_NPY_CHECK(i < s.size() && (s[i] == '\'' || s[i] == '"'), "header: expected a string at offset {} in {}", i,
                    s);
    const char q = s[i++];
    const size_t b = i;
    while (i < s.size() && s[i] != q) ++i;
    EMBER_NPY_CHECK(i < s.size(), "header: unterminated string");
    return std::string(s.substr(b, i++ - b));
  }
  std::string word() {
    ws();
    const size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    return std::string(s.substr(b, i - b));
  }
};

std::vector<char> swap_copy(const char* p, size_t n, size_t el) {
  std::vector<char> v(p, p + n);
  for (size_t k = 0; k + el <= n; k += el) std::reverse(v.begin() + k, v.begin() + k + el);
  return v;
}

}  // namespace

Tensor npy_from_bytes(const std::string& b, const std::string& source) {
  EMBER_NPY_CHECK(b.size() >= 10 && std::memcmp(b.data(), "\x93NUMPY", 6) == 0,
                  "no \\x93NUMPY magic; not a .npy file");
  const int major = static_cast<unsigned char>(b[6]);
  EMBER_NPY_CHECK(major >= 1 && major <= 3, "format version {}.{} is not supported (1, 2, 3)", major,
                  static_cast<unsigned char>(b[7]));
  uint64_t hlen = 0, hstart = 10;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) | (static_cast<uint64_t>(static_cast<unsigned char>(b[9])) << 8);
  } else {
    EMBER_NPY_CHECK(b.size() >= 12, "truncated header length");
    for (int k = 3; k >= 0; --k) hlen = (hlen << 8) | static_cast<unsigned char>(b[8 + k]);
    hstart = 12;
  }
  EMBER_NPY_CHECK(hlen <= b.size() - hstart, "header of {} bytes overruns the {}-byte file", hlen, b.size());
  Lexer lx{std::string_view(b).substr(hstart, hlen), source};
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  std::vector<int64_t> shape;
  lx.expect('{');
  while (!lx.eat('}')) {
    const std::string key = lx.str();
    lx.expect(':');
    EMBER_NPY_CHECK(!(key == "descr" && have_descr) && !(key == "fortran_order" && have_order) &&
                        !(key == "shape" && have_shape),
                    "header key '{}' appears twice", key);
    if (key == "descr") {
      lx.ws();
      EMBER_NPY_CHECK(lx.i < lx.s.size() && lx.s[lx.i] != '[',
                      "structured dtype (descr is a list) is not supported; only plain numeric arrays");
      descr = lx.str();
      have_descr = true;
    } else if (key == "fortran_order") {
      const std::string w = lx.word();
      EMBER_NPY_CHECK(w == "True" || w == "False", "fortran_order must be True or False, got '{}'", w);
      fortran = w == "True";
      have_order = true;
    } else if (key == "shape") {
      lx.expect('(');
      while (!lx.eat(')')) {
        const std::string w = lx.word();
        int64_t dim = 0;
        const char* end = w.data() + w.size();
        // Digits only (from_chars would take a sign), and within int64 (19 nines is not).
        const bool digits = !w.empty() && std::all_of(w.begin(), w.end(), ::isdigit);
        const auto parsed = std::from_chars(w.data(), end, dim);
        EMBER_NPY_CHECK(digits && parsed.ec == std::errc() && parsed.ptr == end,
                        "shape has a non-integer or out-of-range dim '{}'", w);
        EMBER_NPY_CHECK(shape.size() < 64, "shape has more than 64 dims");
        shape.push_back(dim);
        if (!lx.eat(',')) {
          lx.expect(')');
          break;
        }
      }
      have_shape = true;
    } else {
      EMBER_NPY_CHECK(false, "unexpected header key '{}'", key);
    }
    if (!lx.eat(',')) {
      lx.expect('}');
      break;
    }
  }
  EMBER_NPY_CHECK(have_descr && have_order && have_shape, "header lacks descr, fortran_order or shape");
  EMBER_NPY_CHECK(descr.size() >= 2, "unsupported dtype descr '{}'", descr);
  const char order = descr[0];
  EMBER_NPY_CHECK(order == '<' || order == '>' || order == '|' || order == '=', "descr '{}' has no byte-order mark",
                  descr);
  const std::string code = descr.substr(1);
  const Descr* d = nullptr;
  for (const Descr& c : kDescrs)
    if (code == c.code) d = &c;
  EMBER_NPY_CHECK(d != nullptr, "dtype '{}' is not supported (Ember has bool, uint8, int8, int16, int32, int64, "
                  "float16, bfloat16 as V2, float32, float64){}", descr,
                  code == "O" ? "; object arrays need pickle, which is refused" : "");
  const size_t el = element_size(d->type);
  uint64_t numel = 1;
  for (int64_t s : shape)
    EMBER_NPY_CHECK(!__builtin_mul_overflow(numel, static_cast<uint64_t>(s), &numel), "shape ({}) overflows",
                    fmt::join(shape, ", "));
  uint64_t nbytes = 0;
  EMBER_NPY_CHECK(!__builtin_mul_overflow(numel, el, &nbytes) && nbytes <= static_cast<uint64_t>(INT64_MAX),
                  "shape ({}) overflows", fmt::join(shape, ", "));
  const uint64_t have = b.size() - hstart - hlen;
  EMBER_NPY_CHECK(have >= nbytes, "truncated: {} {} shape ({}) needs {} bytes of data, {} present", descr,
                  to_string(d->type), fmt::join(shape, ", "), nbytes, have);
  EMBER_NPY_CHECK(have == nbytes, "{} unexpected trailing bytes after the data", have - nbytes);
  const char* data = b.data() + hstart + hlen;
  std::vector<char> swapped;
  if (order == '>' && el > 1) {
    swapped = swap_copy(data, nbytes, el);
    data = swapped.data();
  }
  std::vector<int64_t> alloc = shape;
  if (fortran) std::reverse(alloc.begin(), alloc.end());
  Tensor t = empty(alloc, d->type);
  if (nbytes) std::memcpy(t.data_ptr(), data, nbytes);
  if (d->type == kBool) {
    // Any nonzero byte is numpy's True; Ember's bool is 0/1.
    auto* p = static_cast<uint8_t*>(t.data_ptr());
    for (uint64_t k = 0; k < numel; ++k) EMBER_NPY_CHECK(p[k] <= 1, "bool element {} has byte value {}", k, p[k]);
  }
  if (fortran && shape.size() > 1) {
    std::vector<int64_t> perm(shape.size());
    for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(perm.size() - 1 - k);
    t = t.permute(perm).contiguous();
  }
  return t;
}

std::string npy_to_bytes(const Tensor& t0) {
  EMBER_CHECK(t0.defined(), "npy: cannot save an undefined tensor");
  EMBER_CHECK(t0.device().is_cpu(), "npy: tensor is on {}; move it to the CPU first", t0.device().str());
  Tensor t = t0.detach().contiguous();
  const Descr* d = nullptr;
  for (const Descr& c : kDescrs)
    if (c.type == t.dtype()) d = &c;
  EMBER_CHECK(d != nullptr, "npy: dtype {} has no numpy descr", to_string(t.dtype()));
  const char order = (element_size(t.dtype()) == 1 || t.dtype() == kBFloat16) ? '|' : '<';
  // numpy 1.24's _write_array_header: sorted keys, repr values, then spare
  // room for the first dim to grow to 21 digits, padded to 64 with '\n'.
  std::string shape = "(";
  for (size_t k = 0; k < t.sizes().size(); ++k) shape += fmt::format("{}, ", t.sizes()[k]);
  if (t.sizes().size() == 1) shape.resize(shape.size() - 1);
  else if (t.sizes().size() > 1) shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': {}, }}", order, d->code, shape);
  if (!t.sizes().empty()) {
    const size_t digits = fmt::format("{}", t.sizes()[0]).size();
    header.append(digits < 21 ? 21 - digits : 0, ' ');
  }
  size_t hlen = header.size() + 1;
  int major = 1;
  size_t prefix = 10;
  if (hlen + (64 - (prefix + hlen) % 64) > 65535) major = 2, prefix = 12;
  const size_t pad = 64 - (prefix + hlen) % 64;
  header.append(pad, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const uint64_t n = header.size();
  for (size_t k = 0; k < prefix - 8; ++k) out.push_back(static_cast<char>((n >> (8 * k)) & 0xff));
  out += header;
  out.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
  return out;
}

Tensor load_npy(const std::string& path) { return npy_from_bytes(read_file(path, "npy"), path); }

void save_npy(const std::string& path, const Tensor& t) { write_file_atomic(path, npy_to_bytes(t), "npy"); }

StateDict load_npz(const std::string& path) { return npz_from_bytes(read_file(path, "npz"), path); }

StateDict npz_from_bytes(const std::string& bytes, const std::string& path) {
  StateDict out;
  for (const zip::Member& m : zip::list(bytes, path)) {
    const std::string source = path + ":" + m.name;
    EMBER_CHECK(m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".npy") == 0,
                "npz: cannot load '{}': member '{}' is not a .npy file", path, m.name);
    const std::string key = m.name.substr(0, m.name.size() - 4);
    EMBER_CHECK(!out.contains(key), "npz: cannot load '{}': member '{}' appears twice", path, m.name);
    out.insert(key, npy_from_bytes(zip::extract(bytes, m, path), source));
  }
  return out;
}

std::string npz_to_bytes(const StateDict& tensors, bool compressed) {
  std::vector<zip::Entry> entries;
  for (const auto& [name, t] : tensors) entries.push_back({name + ".npy", npy_to_bytes(t)});
  return zip::write(entries, compressed);
}

void save_npz(const std::string& path, const StateDict& tensors, bool compressed) {
  write_file_atomic(path, npz_to_bytes(tensors, compressed), "npz");
}

}  // namespace ember::io

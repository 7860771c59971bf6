// IDX reader and the MNIST / Fashion-MNIST datasets.
#include "ember/data/datasets/idx.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "ember/ops/factory.h"
#include "file_reader.h"

namespace ember::data {

namespace {
uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Element size and Ember dtype of an IDX type code.
bool idx_type(uint8_t code, size_t& bytes, ScalarType& dtype) {
  switch (code) {
    case 0x08: bytes = 1; dtype = kUInt8; return true;
    case 0x09: bytes = 1; dtype = kInt8; return true;
    case 0x0B: bytes = 2; dtype = kInt16; return true;
    case 0x0C: bytes = 4; dtype = kInt32; return true;
    case 0x0D: bytes = 4; dtype = kFloat32; return true;
    case 0x0E: bytes = 8; dtype = kFloat64; return true;
    default: return false;
  }
}

// File in root named base or base.gz.
std::string find_file(const std::string& root, const std::string& base) {
  namespace fs = std::filesystem;
  for (const char* suffix : {"", ".gz"}) {
    fs::path p = fs::path(root) / (base + suffix);
    if (fs::exists(p)) return p.string();
  }
  EMBER_ERROR("MNIST: cannot find '{}' or '{}.gz' in '{}'; pass the folder holding the IDX files "
              "(Debian's dataset-fashion-mnist installs them in {})",
              base, base, root, kDebianFashionMnistRoot);
}
}  // namespace

Tensor read_idx(const std::string& path) {
  std::vector<uint8_t> bytes = detail::read_file_bytes(path);
  EMBER_CHECK(bytes.size() >= 4, "read_idx: '{}' is truncated: {} bytes, shorter than the 4-byte "
              "IDX magic number", path, bytes.size());
  size_t elem = 0;
  ScalarType dtype = kUInt8;
  EMBER_CHECK(bytes[0] == 0 && bytes[1] == 0 && idx_type(bytes[2], elem, dtype) && bytes[3] >= 1,
              "read_idx: '{}' has wrong magic number 0x{:02x}{:02x}{:02x}{:02x}; expected "
              "0x0000TTNN (TT = 08 uint8, 09 int8, 0B int16, 0C int32, 0D float, 0E double; NN "
              "= number of dims), e.g. 0x00000803 for MNIST images; is this an IDX file?",
              path, bytes[0], bytes[1], bytes[2], bytes[3]);
  const size_t ndim = bytes[3];
  EMBER_CHECK(bytes.size() >= 4 + 4 * ndim,
              "read_idx: '{}' is truncated inside its header: {} dims need {} header bytes, the "
              "file has {}", path, ndim, 4 + 4 * ndim, bytes.size());
  // Every product is overflow-checked and bounded by the bytes actually
  // present before anything is allocated: a 16-byte file can declare dims whose
  // product wraps to a small number (or to 0).
  const size_t header = 4 + 4 * ndim;
  const size_t have = bytes.size() - header;
  std::vector<int64_t> shape;
  uint64_t record = 1;  // elements per record (per index along dim 0)
  bool overflow = false;
  for (size_t d = 0; d < ndim; ++d) {
    shape.push_back(big_endian_u32(bytes.data() + 4 + 4 * d));
    if (d > 0) overflow |= __builtin_mul_overflow(record, static_cast<uint64_t>(shape[d]), &record);
  }
  const uint64_t records = static_cast<uint64_t>(shape[0]);
  uint64_t record_bytes = 0, total = 0;
  overflow |= __builtin_mul_overflow(record, uint64_t{elem}, &record_bytes);
  overflow |= __builtin_mul_overflow(records, record_bytes, &total);
  // A zero dim makes the data empty whatever the others say; without one, an
  // overflowing product means more data than any file holds.
  const bool empty_data = std::find(shape.begin(), shape.end(), 0) != shape.end();
  EMBER_CHECK(empty_data || !overflow,
              "read_idx: '{}' is truncated: the header declares dims [{}] of {}-byte elements, more than 2^64 "
              "bytes, and the file holds {} data bytes",
              path, fmt::join(shape, ", "), elem, have);
  if (!empty_data && have < total) {
    const uint64_t complete = have / record_bytes;
    EMBER_ERROR("read_idx: '{}' is truncated: the header declares {} records of {} bytes (dims [{}]), the data "
                "ends inside record {} (index {}) after {} of {} bytes",
                path, records, record_bytes, fmt::join(shape, ", "), complete, complete, have, total);
  }
  if (empty_data) total = 0;
  EMBER_CHECK(have == total,
              "read_idx: '{}' has {} unexpected bytes after its {} records; the header and the "
              "data disagree", path, have - total, records);
  Tensor out;
  try {
    out = empty(shape, dtype);  // an empty shape can still overflow int64 (Note [size checks])
  } catch (const Error& e) {
    EMBER_ERROR("read_idx: '{}': {}", path, e.what());
  }
  const uint8_t* src = bytes.data() + header;
  const size_t n = static_cast<size_t>(out.numel());
  if (elem == 1) {
    std::memcpy(out.data_ptr(), src, n);
  } else {  // big-endian 2, 4 or 8 bytes
    auto* dst = static_cast<uint8_t*>(out.data_ptr());
    for (size_t i = 0; i < n; ++i)
      for (size_t b = 0; b < elem; ++b) dst[i * elem + b] = src[i * elem + elem - 1 - b];
  }
  return out;
}

MNIST::MNIST(const std::string& root, bool train, int64_t num_classes) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string images_path = find_file(root, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(root, prefix + "-labels-idx1-ubyte");
  images_ = read_idx(images_path);
  Tensor labels = read_idx(labels_path);
  EMBER_CHECK(images_.dim() == 3 && images_.dtype() == kUInt8,
              "MNIST: '{}' should hold uint8 images [N, H, W], it holds Tensor[{}] {}",
              images_path, fmt::join(images_.sizes(), ", "), to_string(images_.dtype()));
  EMBER_CHECK(labels.dim() == 1 && labels.dtype() == kUInt8,
              "MNIST: '{}' should hold uint8 labels [N], it holds Tensor[{}] {}", labels_path,
              fmt::join(labels.sizes(), ", "), to_string(labels.dtype()));
  EMBER_CHECK(labels.size(0) == images_.size(0),
              "MNIST: '{}' has {} images but '{}' has {} labels; the files must match",
              images_path, images_.size(0), labels_path, labels.size(0));
  const uint8_t* l = labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < labels.size(0); ++i)
    EMBER_CHECK(l[i] < num_classes,
                "MNIST: '{}': label {} at index {} is out of range for {} classes [0, {})",
                labels_path, l[i], i, num_classes, num_classes);
  targets_ = labels.to(kInt64);
}

Sample MNIST::get(int64_t index) const {
  EMBER_CHECK_INDEX(index >= 0 && index < size(),
                    "MNIST: index {} is out of range for a dataset of size {}", index, size());
  return Sample(images_.select(0, index), targets_.select(0, index));
}

}  // namespace ember::data

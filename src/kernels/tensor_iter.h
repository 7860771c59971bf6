// TensorIter: the one strided loop behind every elementwise op.
//
// Note [TensorIter]: operands (outputs first) are viewed with the common
// broadcast shape; dims are reordered so dim 0 is the fastest-moving one for
// the first output, then adjacent dims that can be walked with one stride are
// merged. A kernel is then a 1-D inner loop
//     loop(char** data, const int64_t* byte_strides, int64_t n)
// called for each position of the outer dims. Contiguous operands collapse to
// a single dim, so the common case is one call over n elements with strides
// equal to the element size (or 0 for a broadcast scalar).
#pragma once

#include <array>

#include "ember/core/parallel.h"
#include "ember/core/tensor.h"

namespace ember {

class TensorIter {
 public:
  static constexpr int kMaxOperands = 4;
  static constexpr int kMaxDims = 25;

  // operands[0..nout) are outputs, already allocated with the broadcast shape
  // of the inputs; inputs broadcast to it.
  TensorIter(std::initializer_list<const Tensor*> operands, int nout, const char* op);
  // For callers that know every operand is contiguous with one shape (a fresh
  // output and same-shaped contiguous inputs): one flat dim, nothing checked.
  // Skipping the checks is most of a 1-element op's iteration cost.
  struct Flat {};
  TensorIter(Flat, std::initializer_list<const Tensor*> operands, int nout);

  int ntensors() const { return ntensors_; }
  int noutputs() const { return nout_; }
  int ndim() const { return ndim_; }
  int64_t numel() const { return numel_; }
  const int64_t* shape() const { return shape_.data(); }
  ScalarType dtype(int i) const { return dtypes_[i]; }
  char* data(int i) const { return data_[i]; }
  // Byte stride of operand i in (reordered, coalesced) dim d.
  int64_t stride(int i, int d) const { return strides_[i][d]; }
  // True when the whole iteration is one dim with unit (or zero for inputs)
  // strides.
  bool is_contiguous() const;

  using Loop = FunctionRef<void(char** data, const int64_t* strides, int64_t n)>;
  // Walks linear positions [begin, end).
  void serial_for_each(Loop loop, int64_t begin, int64_t end) const;
  // Splits the positions across threads above grain.
  void for_each(Loop loop, int64_t grain = kGrainSize) const;

 private:
  void compute_strides(const Tensor* const* ops, IntArrayRef shape, const char* op);
  void reorder_and_coalesce();

  bool try_fast_setup(const Tensor* const* ops);

  int ntensors_ = 0;
  int nout_ = 0;
  int ndim_ = 0;
  int64_t numel_ = 1;
  // Left uninitialised on purpose: only the first ndim_ entries are used, and
  // zeroing 1 KB per op is measurable in per-op overhead.
  std::array<int64_t, kMaxDims> shape_;
  std::array<std::array<int64_t, kMaxDims>, kMaxOperands> strides_;
  std::array<char*, kMaxOperands> data_;
  std::array<ScalarType, kMaxOperands> dtypes_;
};

// The broadcast shape of two shapes, or an error naming op and both shapes.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);

}  // namespace ember

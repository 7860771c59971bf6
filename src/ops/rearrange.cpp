// Rearranging composites: fliplr/flipud, movedim/swapdims, roll, rot90, tile,
// repeat_interleave. Built on flip, permute, transpose, cat, repeat and
// index_select, whose derivatives they inherit.
#include <vector>

#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/view.h"
#include "ops/op_util.h"

namespace ember {

Tensor fliplr(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 2, "fliplr: input must be >= 2-d, got shape {}", shape_str(t.sizes()));
  return flip(t, {1});
}

Tensor flipud(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 1, "flipud: input must be >= 1-d, got shape {}", shape_str(t.sizes()));
  return flip(t, {0});
}

// Each source dim goes to its destination; the other dims keep their order
// in the remaining places.
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  EMBER_CHECK(source.size() == destination.size(),
              "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of "
              "dims as destination ({} dims)",
              shape_str(source), shape_str(destination));
  const int64_t n = t.dim();
  std::vector<int64_t> perm(static_cast<size_t>(n), -1);
  std::vector<bool> used_src(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    EMBER_CHECK(!used_src[s], "movedim: repeated dim in `source` ({})", shape_str(source));
    EMBER_CHECK(perm[d] < 0, "movedim: repeated dim in `destination` ({})", shape_str(destination));
    used_src[s] = true;
    perm[d] = s;
  }
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (used_src[next]) ++next;
    p = next++;
  }
  return permute(t, perm);
}

Tensor movedim(const Tensor& t, int64_t source, int64_t destination) {
  return movedim(t, IntArrayRef(source), IntArrayRef(destination));
}
Tensor moveaxis(const Tensor& t, int64_t source, int64_t destination) { return movedim(t, source, destination); }

Tensor swapdims(const Tensor& t, int64_t dim0, int64_t dim1) { return transpose(t, dim0, dim1); }
Tensor swapaxes(const Tensor& t, int64_t dim0, int64_t dim1) { return transpose(t, dim0, dim1); }

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align. shifts: {}, dims: 0", shifts.size());
    return roll(t.reshape({-1}), shifts, {0}).view(t.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align. shifts: {}, dims: {}",
              shifts.size(), dims.size());
  Tensor out = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], t.dim(), "roll"), size = t.dim() == 0 ? 1 : t.size(d);
    if (size == 0) continue;
    int64_t s = ((shifts[i] % size) + size) % size;
    if (s == 0) continue;
    out = cat({out.narrow(d, size - s, s), out.narrow(d, 0, size - s)}, d);
  }
  return out.is_same(t) ? t.clone() : out;
}

Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims) {
  EMBER_CHECK(dims.size() == 2, "rot90: expected total rotation dims == 2, but got dims = {}", dims.size());
  EMBER_CHECK(t.dim() >= 2, "rot90: expected total dims >= 2, but got total dims = {}", t.dim());
  int64_t d0 = wrap_dim(dims[0], t.dim(), "rot90"), d1 = wrap_dim(dims[1], t.dim(), "rot90");
  EMBER_CHECK(d0 != d1, "rot90: expected rotation dims to be different, but got dim0 = {} and dim1 = {}", d0, d1);
  switch (((k % 4) + 4) % 4) {
    case 1: return flip(t, {d1}).transpose(d0, d1);
    case 2: return flip(t, {d0, d1});
    case 3: return flip(t, {d0}).transpose(d0, d1);
    default: return t.clone();
  }
}

// repeat with the dims left-padded by ones to the input's rank.
Tensor tile(const Tensor& t, IntArrayRef dims) {
  DimVector reps(static_cast<size_t>(std::max<int64_t>(t.dim() - static_cast<int64_t>(dims.size()), 0)), 1);
  for (int64_t r : dims) reps.push_back(r);
  return repeat(t, reps);
}

Tensor repeat_interleave(const Tensor& repeats) {
  EMBER_CHECK_TYPE(repeats.dtype() == kInt64 || repeats.dtype() == kInt32,
                   "repeat_interleave: repeats has to be Long or Int tensor, got {}", to_string(repeats.dtype()));
  EMBER_CHECK(repeats.dim() <= 1, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape {}",
              shape_str(repeats.sizes()));
  std::vector<int64_t> r = repeats.to_vector<int64_t>(), idx;
  for (size_t i = 0; i < r.size(); ++i) {
    EMBER_CHECK(r[i] >= 0, "repeat_interleave: repeats can not be negative, got {} at position {}", r[i], i);
    idx.insert(idx.end(), static_cast<size_t>(r[i]), static_cast<int64_t>(i));
  }
  return tensor<int64_t>(idx, {static_cast<int64_t>(idx.size())}).to(repeats.dtype());
}

Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim) {
  Tensor x = dim ? t : t.reshape({-1});
  int64_t d = dim ? wrap_dim(*dim, t.dim(), "repeat_interleave") : 0;
  int64_t size = x.dim() == 0 ? 1 : x.size(d);
  Tensor r = repeats.to(kInt64);
  if (r.numel() == 1 && size != 1) r = r.reshape({1}).expand({size});
  EMBER_CHECK(r.dim() <= 1 && r.numel() == size,
              "repeat_interleave: repeats must have the same size as input along dim {}: repeats {} vs input {}", d,
              shape_str(repeats.sizes()), shape_str(t.sizes()));
  return index_select(x, d, repeat_interleave(r.reshape({size})));
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim) {
  EMBER_CHECK(repeats >= 0, "repeat_interleave: repeats can not be negative, got {}", repeats);
  return repeat_interleave(t, scalar_tensor(repeats, kInt64), dim);
}

// ---- Tensor methods ----
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::fliplr() const { return ember::fliplr(*this); }
Tensor Tensor::flipud() const { return ember::flipud(*this); }
Tensor Tensor::movedim(IntArrayRef source, IntArrayRef destination) const {
  return ember::movedim(*this, source, destination);
}
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return ember::movedim(*this, source, destination); }
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const { return ember::swapdims(*this, dim0, dim1); }
Tensor Tensor::swapaxes(int64_t dim0, int64_t dim1) const { return ember::swapaxes(*this, dim0, dim1); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return ember::roll(*this, shifts, dims); }
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return ember::rot90(*this, k, dims); }
Tensor Tensor::tile(IntArrayRef dims) const { return ember::tile(*this, dims); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return ember::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim) const {
  return ember::repeat_interleave(*this, repeats, dim);
}

}  // namespace ember

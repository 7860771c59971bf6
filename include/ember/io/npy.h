// NumPy .npy and .npz files (format 1.0/2.0/3.0 of numpy.lib.format).
//
// Loading accepts every Ember dtype in either byte order ('<', '>', '|', '='),
// C or Fortran order, 0-d and zero-size arrays, and returns a C-contiguous
// tensor in native (little-endian) order. NumPy has no bfloat16: Ember writes
// it as the 2-byte void descr '|V2' (what np.save makes of ml_dtypes.bfloat16)
// and reads '<V2'/'|V2' back as bfloat16. Saving writes the header byte for
// byte as numpy 1.24 does, so numpy-written C-order files round-trip bitwise.
// Bad input raises naming the file and the problem; nothing is allocated
// beyond the file's size.
#pragma once

#include <string>

#include "ember/io/state_dict.h"

namespace ember::io {

Tensor load_npy(const std::string& path);
void save_npy(const std::string& path, const Tensor& t);
// In-memory forms; `source` names the bytes in error messages.
Tensor npy_from_bytes(const std::string& bytes, const std::string& source = "<bytes>");
std::string npy_to_bytes(const Tensor& t);

// .npz: a zip of NAME.npy members, stored (np.savez) or deflated
// (np.savez_compressed). Keys are the member names without ".npy".
StateDict load_npz(const std::string& path);
void save_npz(const std::string& path, const StateDict& tensors, bool compressed = false);
StateDict npz_from_bytes(const std::string& bytes, const std::string& source = "<bytes>");
std::string npz_to_bytes(const StateDict& tensors, bool compressed = false);

}  // namespace ember::io

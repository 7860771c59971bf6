// Whether this CPU runs oneDNN's native bfloat16 kernels (AVX512_BF16 or
// AMX), as oneDNN itself reports it (so ONEDNN_MAX_CPU_ISA caps it too).
#pragma once

namespace ember {

bool cpu_has_native_bf16();

}  // namespace ember

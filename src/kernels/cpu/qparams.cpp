// quant::choose_qparams (ember/quant/qtensor.h): in kernels, since the
// dynamic int8 kernels choose activation parameters on every call.
#include <algorithm>
#include <cmath>

#include "ember/core/error.h"
#include "ember/quant/qtensor.h"

namespace ember::quant {

QParams choose_qparams(float min, float max, int64_t qmin, int64_t qmax) {
  EMBER_CHECK(!(min > max), "choose_qparams: min {} is greater than max {}", min, max);
  EMBER_CHECK(std::isfinite(min) && std::isfinite(max), "choose_qparams: the range [{}, {}] is not finite", min, max);
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  double scale = (static_cast<double>(max) - min) / static_cast<double>(qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  constexpr float kSmallScale = 6.1e-5f;  // fbgemm's SMALL_SCALE_THRESHOLD
  if (scale < kSmallScale) {
    const float org = static_cast<float>(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * static_cast<float>(qmax - qmin);
    } else {
      const float amp = kSmallScale / org;
      min *= amp;
      max *= amp;
    }
  }
  const double zp_min = static_cast<double>(qmin) - min / scale;
  const double zp_max = static_cast<double>(qmax) - max / scale;
  const double err_min = std::abs(static_cast<double>(qmin)) - std::abs(min / scale);
  const double err_max = std::abs(static_cast<double>(qmax)) - std::abs(max / scale);
  const double zp = err_min < err_max ? zp_min : zp_max;
  int64_t nudged = zp < qmin ? qmin : zp > qmax ? qmax : static_cast<int64_t>(std::nearbyint(zp));
  return {scale, nudged};
}

}  // namespace ember::quant

// Device parsing and the no-CUDA guard.
#include "ember/core/device.h"

#include <charconv>

#include "ember/core/error.h"

namespace ember {

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(-1) {
  auto colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  if (kind == "cpu") {
    type_ = DeviceType::CPU;
  } else if (kind == "cuda") {
    type_ = DeviceType::CUDA;
    index_ = 0;
  } else {
    EMBER_ERROR("Device: expected 'cpu', 'cuda' or 'cuda:N', got '{}'", spec);
  }
  if (colon != std::string_view::npos) {
    std::string_view num = spec.substr(colon + 1);
    int idx = -1;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
    EMBER_CHECK(ec == std::errc() && p == num.data() + num.size() && idx >= 0,
                "Device: invalid device index in '{}'", spec);
    index_ = static_cast<int8_t>(idx);
  }
}

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return fmt::format("cuda:{}", index_ < 0 ? 0 : index_);
}

bool cuda_is_available() { return false; }

void check_device_available(const Device& d) {
  EMBER_CHECK(!d.is_cuda(),
              "Ember was built without CUDA support; cannot use device {}. Rebuild with "
              "-DEMBER_CUDA=ON on a machine with the CUDA toolkit.",
              d.str());
}

}  // namespace ember

// Where a tensor lives: cpu or cuda:N.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = -1)  // NOLINT
      : type_(type), index_(static_cast<int8_t>(index)) {}
  // Parses "cpu", "cuda", "cuda:1".
  Device(std::string_view spec);       // NOLINT
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;

  bool operator==(const Device& o) const {
    return type_ == o.type_ && (index_ == o.index_ || (is_cpu() && o.is_cpu()));
  }

 private:
  DeviceType type_;
  int8_t index_;
};

const Device kCPU{DeviceType::CPU};
const Device kCUDA{DeviceType::CUDA, 0};

// True when Ember was built with EMBER_CUDA=ON and a GPU is visible.
bool cuda_is_available();
// Raises "Ember was built without CUDA support" for a CUDA device in a CPU build.
void check_device_available(const Device& d);

}  // namespace ember

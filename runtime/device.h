// Where a tensor lives and a kernel runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wok {

enum class DeviceType : uint8_t { kCPU = 0, kCUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

std::string_view device_type_name(DeviceType t);

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  static constexpr Device cpu() { return {DeviceType::kCPU, 0}; }
  static constexpr Device cuda(int i = 0) { return {DeviceType::kCUDA, i}; }

  // "cpu", "cuda", "cuda:1"; throws wok::DeviceError on anything else.
  static Device parse(std::string_view text);

  std::string str() const;  // "cpu", "cuda:0"
  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace wok

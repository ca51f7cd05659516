#include "wok/runtime/device.h"

#include <charconv>

#include "wok/runtime/error.h"

namespace wok {

std::string_view device_type_name(DeviceType t) {
  return t == DeviceType::kCPU ? "cpu" : "cuda";
}

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.substr(0, 5) == "cuda:") {
    int index = -1;
    std::string_view digits = text.substr(5);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0) return cuda(index);
  }
  throw DeviceError("unknown device '" + std::string(text) +
                    "': expected 'cpu', 'cuda' or 'cuda:N'");
}

std::string Device::str() const {
  if (type == DeviceType::kCPU) return "cpu";
  return "cuda:" + std::to_string(index);
}

}  // namespace wok

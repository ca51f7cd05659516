// 128-bit XXH3 keys for kernels and plans. The full signature is kept
// beside the hash and compared on every hit: a 128-bit hash makes
// collisions rare, not impossible to construct.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wok {

struct Key128 {
  uint64_t hi = 0, lo = 0;
  friend bool operator==(const Key128&, const Key128&) = default;
  std::string hex() const;  // 32 hex digits
};

struct Key128Hash {
  size_t operator()(const Key128& k) const { return static_cast<size_t>(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
};

Key128 hash128(std::string_view bytes);
uint64_t hash64(std::string_view bytes);  // 64-bit XXH3

// The version string baked into every signature: a new wok version never
// reuses kernels compiled by an old one.
std::string_view wok_version();

}  // namespace wok

// Files built into the library (cmake/embed_files.cmake): the CUDA source
// templates, the precompiled kernels' sources, and the fatbins nvcc built
// from them when the toolkit was found. Nothing is read from disk at run
// time.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace wok::embedded {

struct EmbeddedFile {
  const char* name;           // "templates/wok_device.cuh", "fatbin/misc", ...
  const unsigned char* data;  // followed by a 0 byte, so text can be used as a C string
  size_t size;                // without that 0

  std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};

std::span<const EmbeddedFile> files();

// The file of that name, or nullptr.
inline const EmbeddedFile* find(std::string_view name) {
  for (const EmbeddedFile& f : files())
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace wok::embedded

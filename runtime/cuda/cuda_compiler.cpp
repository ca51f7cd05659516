#include "wok/runtime/cuda/cuda_compiler.h"

#include <chrono>
#include <cstdlib>

#include "wok/runtime/cuda/embedded_files.h"
#include "wok/runtime/cuda/nvrtc_loader.h"
#include "wok/runtime/dump.h"
#include "wok/runtime/signature.h"

namespace wok::cuda {

namespace {

// The lines around the first "<name>(<line>): error" of the log, numbered:
// where the compile failed, without opening the dump.
std::string error_excerpt(const std::string& source, const std::string& name, const std::string& log) {
  const std::string marker = name + "(";
  size_t at = log.find(marker);
  while (at != std::string::npos) {
    size_t close = log.find(')', at);
    if (close != std::string::npos && log.compare(close, 8, "): error") == 0) break;
    at = log.find(marker, at + 1);
  }
  if (at == std::string::npos) return "";
  int line = std::atoi(log.c_str() + at + marker.size());
  if (line <= 0) return "";
  std::string out = "\nat " + name + " line " + std::to_string(line) + ":\n";
  int n = 1;
  for (size_t b = 0; b < source.size() && n <= line + 2; ++n) {
    size_t e = source.find('\n', b);
    if (e == std::string::npos) e = source.size();
    if (n >= line - 2) out += (n == line ? " >" : "  ") + std::to_string(n) + " | " + source.substr(b, e - b) + "\n";
    b = e + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> nvrtc_options(const std::string& target) {
  // -fmad=false: + - * / round like the CPU (which never contracts to FMA).
  // Accurate division, square root and denormals are NVRTC's defaults.
  return {"--gpu-architecture=" + target, "--std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true",
          "--prec-sqrt=true"};
}

absl::StatusOr<CudaBinary> compile_cuda(const std::string& source, const std::string& name, int arch) {
  absl::StatusOr<const Nvrtc*> loaded = nvrtc();
  if (!loaded.ok()) return loaded.status();
  const Nvrtc& nv = **loaded;
  const NvrtcApi& a = nv.api;

  CudaBinary bin;
  bin.is_cubin = nv.supports(arch);
  if (bin.is_cubin) {
    bin.target = "sm_" + std::to_string(arch);
  } else {
    int best = 0;
    for (int s : nv.supported_archs)
      if (s <= arch) best = s;
    if (best == 0)
      return absl::FailedPreconditionError("NVRTC " + nv.version_str() + " cannot compile for sm_" +
                                           std::to_string(arch));
    bin.target = "compute_" + std::to_string(best);
  }

  const std::string file = name + ".cu";
  if (dump_enabled()) write_dump(file, source);
  auto start = std::chrono::steady_clock::now();
  const EmbeddedHeaders& headers = device_headers();
  nvrtcProgram prog = nullptr;
  nvrtcResult r = a.nvrtcCreateProgram(&prog, source.c_str(), file.c_str(), static_cast<int>(headers.names.size()),
                                       headers.contents.data(), headers.names.data());
  if (r != kNvrtcSuccess)
    return absl::InternalError("nvrtcCreateProgram(" + file + "): " + a.nvrtcGetErrorString(r));
  std::vector<std::string> options = nvrtc_options(bin.target);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  r = a.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (a.nvrtcGetProgramLogSize(prog, &log_size) == kNvrtcSuccess && log_size > 1) {
    bin.log.resize(log_size);
    a.nvrtcGetProgramLog(prog, bin.log.data());
    bin.log.resize(log_size - 1);
  }
  if (dump_enabled()) write_dump(name + ".nvrtc.log", bin.log);
  if (r != kNvrtcSuccess) {
    a.nvrtcDestroyProgram(&prog);
    return absl::InvalidArgumentError("NVRTC " + nv.version_str() + " failed to compile " + file + " for " +
                                      bin.target + ": " + a.nvrtcGetErrorString(r) +
                                      error_excerpt(source, file, bin.log) + "\nNVRTC log:\n" + bin.log +
                                      (dump_enabled() ? "\n(source written to WOK_DUMP_DIR/" + file + ")"
                                                      : "\n(set WOK_DUMP_DIR to keep the source)"));
  }
  size_t size = 0;
  if (bin.is_cubin) {
    r = a.nvrtcGetCUBINSize(prog, &size);
    if (r == kNvrtcSuccess) {
      bin.image.resize(size);
      r = a.nvrtcGetCUBIN(prog, bin.image.data());
    }
  } else {
    r = a.nvrtcGetPTXSize(prog, &size);
    if (r == kNvrtcSuccess) {
      bin.image.resize(size);
      r = a.nvrtcGetPTX(prog, bin.image.data());
    }
  }
  a.nvrtcDestroyProgram(&prog);
  if (r != kNvrtcSuccess)
    return absl::InternalError("NVRTC could not return the binary of " + file + ": " + a.nvrtcGetErrorString(r));
  bin.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return bin;
}

const EmbeddedHeaders& device_headers() {
  static const EmbeddedHeaders* headers = [] {
    auto* h = new EmbeddedHeaders();
    for (const embedded::EmbeddedFile& f : embedded::files()) {
      std::string_view name = f.name;
      if (name.substr(0, 10) != "templates/" || name.size() < 4 || name.substr(name.size() - 4) != ".cuh") continue;
      h->names.push_back(f.name + 10);  // included as "wok_device.cuh"
      h->contents.push_back(reinterpret_cast<const char*>(f.data));
    }
    return h;
  }();
  return *headers;
}

const std::string& templates_fingerprint() {
  static const std::string* fp = [] {
    std::string all;
    for (const embedded::EmbeddedFile& f : embedded::files()) {
      std::string_view name = f.name;
      if (name.substr(0, 7) == "fatbin/") continue;
      all += name;
      all += f.text();
    }
    return new std::string(hash128(all).hex().substr(0, 16));
  }();
  return *fp;
}

}  // namespace wok::cuda

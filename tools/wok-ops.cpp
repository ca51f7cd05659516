// wok-ops: lists the registered ops, or describes one (wok::describe_op).
// Run `wok-ops --help`.
#include <wok/wok.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* kHelp =
    "usage: wok-ops            list every op: kind, devices with kernels, how the JITs treat it\n"
    "       wok-ops NAME...    describe each op: schema, attributes, dtypes, kernels, fusion\n"
    "       wok-ops --help\n"
    "\n"
    "Lists the ops built into wok. Ops a program registers itself exist only\n"
    "in that program: call wok::describe_op(name) or wok::op_names() there.\n"
    "An unknown NAME exits with status 1 and the nearest names.\n"
    "\n"
    "The cpu column is the x86 JIT (it needs AVX2+FMA; otherwise, and with the\n"
    "precompiled backend, every op runs its own kernel), the cuda column the\n"
    "CUDA JIT. '*': not at every dtype, `wok-ops NAME` says which.\n";

// The JIT column of one device: how it treats the op where it fuses it.
std::string jit_column(const wok::OpInfo& info, wok::DeviceType device) {
  bool has_kernel = info.output_aliases_input;
  for (const wok::KernelInfo& k : info.kernels) has_kernel = has_kernel || k.device == device;
  if (!has_kernel) return "-";
  const wok::JitInfo* best = nullptr;
  int entries = 0;
  for (const wok::JitInfo& j : info.jit) {
    if (j.device != device) continue;
    ++entries;
    if (!best || (best->treatment == wok::JitTreatment::kOwnKernel && j.treatment != wok::JitTreatment::kOwnKernel))
      best = &j;
  }
  if (!best) return "-";
  return std::string(wok::jit_treatment_label(best->treatment)) + (entries > 1 ? "*" : "");
}

int list_ops() {
  std::printf("%-20s %-12s %-9s %-15s %s\n", "op", "kind", "kernels", "jit on cpu", "jit on cuda");
  for (const std::string& name : wok::op_names()) {
    const wok::OpInfo info = wok::op_info(name);
    std::string devices;
    for (const wok::KernelInfo& k : info.kernels) {
      if (!devices.empty()) devices += ' ';
      devices += wok::device_type_name(k.device);
    }
    if (devices.empty()) devices = info.output_aliases_input ? "(view)" : "none";
    std::printf("%-20s %-12s %-9s %-15s %s\n", name.c_str(), std::string(wok::op_kind_name(info.kind)).c_str(),
                devices.c_str(), jit_column(info, wok::DeviceType::kCPU).c_str(),
                jit_column(info, wok::DeviceType::kCUDA).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return list_ops();
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h" || a == "help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "wok-ops: unknown option '%s'\n\n%s", a.c_str(), kHelp);
      return 2;
    }
  }
  int status = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    try {
      std::printf("%s%s", i ? "\n" : "", wok::describe_op(args[i]).c_str());
    } catch (const wok::Error& e) {
      std::fprintf(stderr, "wok-ops: %s\n", e.what());
      status = 1;
    }
  }
  return status;
}

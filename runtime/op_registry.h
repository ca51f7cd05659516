// The operator registry and the per-device kernel registry beside it.
//
// Ops are registered once by name; kernels separately per (op, device type).
// Built-in ops and CPU kernels are registered by register_builtin_ops() when
// the registry is first used: wok is a static library, and self-registering
// static objects in files nobody references would be dropped by the linker.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wok/runtime/device.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_def.h"
#include "wok/runtime/widening.h"

namespace wok {

class RegisteredOp {
 public:
  explicit RegisteredOp(OpDef def) : def_(std::move(def)) {}

  const OpDef& def() const { return def_; }
  const std::string& name() const { return def_.name; }
  bool is_elementwise() const { return def_.kind == OpKind::kElementwise; }

  // nullptr when no kernel is registered for that device type.
  const KernelFn* kernel(DeviceType device) const {
    return kernels_[static_cast<int>(device)].load(std::memory_order_acquire);
  }
  // The kernel for `device`, or a RegistryError naming the op, the device
  // and the devices that do have kernels.
  const KernelFn& kernel_or_throw(Device device) const;
  std::vector<DeviceType> kernel_devices() const;
  int attr_index(std::string_view name) const;  // -1 if none
  // Registered with the global registry's built-ins, not by a user.
  bool is_builtin() const { return builtin_; }

 private:
  friend class OpRegistry;
  OpDef def_;
  // Written under the registry's lock, read without it.
  std::array<std::atomic<const KernelFn*>, kNumDeviceTypes> kernels_{};
  // Whether kernels_[d] is the device's formula kernel, which a kernel
  // registered for a user op replaces (under the registry's lock).
  std::array<bool, kNumDeviceTypes> derived_{};
  bool builtin_ = false;  // registered with the global registry's built-ins
};

class OpRegistry {
 public:
  // The process-wide registry, with the built-in ops and kernels in it.
  static OpRegistry& global();

  // Throws RegistryError if an op of that name exists or the def is
  // incomplete (no shape or dtype rule, elementwise without formula ok).
  const RegisteredOp& add(OpDef def);
  // Throws RegistryError for an unknown op or a second kernel for the same
  // (op, device type). A user op's kernel replaces the one derived from its
  // formula (set_formula_kernel); a built-in op's cannot be replaced.
  // A kernel sees operands of the dtypes in `native` as they are and others
  // widened to their compute dtypes (Note [The widening adapter] in
  // runtime/widening.h), on the CPU and on every device that has set its
  // DeviceWidening; kernels of other devices see every dtype.
  void add_kernel(std::string_view op, DeviceType device, KernelFn fn, DTypeMask native = kComputeDTypeMask);
  // How kernels registered for `device` from now on get the dtypes they do
  // not take (the CPU's is host_widening()). Throws RegistryError when the
  // device has one already.
  void set_device_widening(DeviceType device, DeviceWidening widening);
  // The kernel that every op with a formula gets on `device` unless it has
  // its own: the one that evaluates the formula (runtime/kernels/cpu/
  // formula_kernel.cpp). So an op written as a formula alone runs
  // everywhere, before and after this call.
  void set_formula_kernel(DeviceType device, KernelFn fn, DTypeMask native = kComputeDTypeMask);

  // Whether `op`'s kernel on `device` is the device's formula kernel rather
  // than one registered for the op (false when it has none there).
  bool kernel_from_formula(const RegisteredOp& op, DeviceType device) const;

  const RegisteredOp* find(std::string_view name) const;
  // Throws RegistryError for an unknown name, suggesting the nearest ones.
  const RegisteredOp& get(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  OpRegistry();
  void seal_builtins();  // marks every op registered so far as built-in

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<RegisteredOp>> ops_;
  std::vector<std::unique_ptr<KernelFn>> kernels_;  // owned here, never freed
  std::array<const KernelFn*, kNumDeviceTypes> formula_kernels_{};
  std::array<std::unique_ptr<DeviceWidening>, kNumDeviceTypes> widenings_{};
};

// Registers the built-in ops and their CPU kernels (runtime/ops/*.cpp,
// runtime/kernels/cpu/*.cpp). Called once, by OpRegistry::global().
void register_builtin_ops(OpRegistry& registry);
void register_builtin_cpu_kernels(OpRegistry& registry);
void register_builtin_cuda_kernels(OpRegistry& registry);  // runtime/cuda/cuda_kernels.cpp

// Public shorthands on the global registry.
const RegisteredOp& register_op(OpDef def);
void register_kernel(std::string_view op, DeviceType device, KernelFn fn, DTypeMask native = kComputeDTypeMask);
const RegisteredOp& get_op(std::string_view name);

}  // namespace wok

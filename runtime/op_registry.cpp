#include "wok/runtime/op_registry.h"

#include <algorithm>

#include "wok/runtime/error.h"
#include "wok/runtime/op_catalog.h"
#include "wok/runtime/widening.h"

namespace wok {

namespace {
std::string device_list(const std::vector<DeviceType>& devices) {
  if (devices.empty()) return "none";
  std::string s;
  for (DeviceType d : devices) s += (s.empty() ? "" : ", ") + std::string(device_type_name(d));
  return s;
}
}  // namespace

const KernelFn& RegisteredOp::kernel_or_throw(Device device) const {
  if (const KernelFn* k = kernel(device.type)) return *k;
  throw RegistryError("op '" + name() + "' has no kernel for device " + device.str() +
                      "; kernels exist for: " + device_list(kernel_devices()));
}

std::vector<DeviceType> RegisteredOp::kernel_devices() const {
  std::vector<DeviceType> out;
  for (int i = 0; i < kNumDeviceTypes; ++i)
    if (kernels_[i].load(std::memory_order_acquire)) out.push_back(static_cast<DeviceType>(i));
  return out;
}

int RegisteredOp::attr_index(std::string_view name) const {
  for (size_t i = 0; i < def_.attrs.size(); ++i)
    if (def_.attrs[i].name == name) return static_cast<int>(i);
  return -1;
}

OpRegistry& OpRegistry::global() {
  // Leaked: ops must outlive every tensor, including static ones.
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_builtin_ops(*r);
    register_builtin_cpu_kernels(*r);
    register_builtin_cuda_kernels(*r);  // no driver is touched until one runs
    r->seal_builtins();
    return r;
  }();
  return *registry;
}

const RegisteredOp& OpRegistry::add(OpDef def) {
  if (def.name.empty()) throw RegistryError("cannot register an op with an empty name");
  if (!def.infer_shape) throw RegistryError("op '" + def.name + "' has no shape-inference function");
  if (!def.infer_dtype) throw RegistryError("op '" + def.name + "' has no dtype-inference function");
  if (def.outputs.empty()) throw RegistryError("op '" + def.name + "' declares no outputs");
  std::lock_guard lock(mu_);
  auto [it, inserted] = ops_.try_emplace(def.name, nullptr);
  if (!inserted) throw RegistryError("op '" + def.name + "' is already registered");
  it->second = std::make_unique<RegisteredOp>(std::move(def));
  RegisteredOp& op = *it->second;
  if (op.def_.formula)
    for (int d = 0; d < kNumDeviceTypes; ++d)
      if (formula_kernels_[d]) {
        op.kernels_[d].store(formula_kernels_[d], std::memory_order_release);
        op.derived_[d] = true;
      }
  return op;
}

void OpRegistry::add_kernel(std::string_view op, DeviceType device, KernelFn fn, DTypeMask native) {
  if (!fn) throw RegistryError("empty kernel for op '" + std::string(op) + "'");
  std::lock_guard lock(mu_);
  auto it = ops_.find(std::string(op));
  if (it == ops_.end())
    throw RegistryError("cannot register a " + std::string(device_type_name(device)) + " kernel for unknown op '" +
                        std::string(op) + "': register the op first");
  if (const DeviceWidening* widening = widenings_[static_cast<int>(device)].get()) {
    // A dtype the kernel cannot widen (uint64) runs the op's formula, in
    // the formula kernel's loops, where the op has one.
    std::function<const KernelFn*()> formula;
    if (it->second->def_.formula) formula = [this, device] { return formula_kernels_[static_cast<int>(device)]; };
    fn = widening_kernel(std::move(fn), native, std::move(formula), *widening);
  }
  auto& slot = it->second->kernels_[static_cast<int>(device)];
  bool& derived = it->second->derived_[static_cast<int>(device)];
  // A user op's own kernel replaces the one derived from its formula; a
  // built-in op's kernels are fixed.
  if (slot.load() && !(derived && !it->second->builtin_))
    throw RegistryError("a kernel for op '" + std::string(op) + "' on " + std::string(device_type_name(device)) +
                        " is already registered" + (derived ? " (the one that evaluates its formula)" : ""));
  kernels_.push_back(std::make_unique<KernelFn>(std::move(fn)));
  slot.store(kernels_.back().get(), std::memory_order_release);
  derived = false;
}

OpRegistry::OpRegistry() {
  widenings_[static_cast<int>(DeviceType::kCPU)] = std::make_unique<DeviceWidening>(host_widening());
}

void OpRegistry::set_device_widening(DeviceType device, DeviceWidening widening) {
  std::lock_guard lock(mu_);
  auto& slot = widenings_[static_cast<int>(device)];
  if (slot)
    throw RegistryError("the dtype widening of " + std::string(device_type_name(device)) + " kernels is already set");
  slot = std::make_unique<DeviceWidening>(std::move(widening));
}

void OpRegistry::seal_builtins() {
  std::lock_guard lock(mu_);
  for (auto& [name, op] : ops_) op->builtin_ = true;
}

void OpRegistry::set_formula_kernel(DeviceType device, KernelFn fn, DTypeMask native) {
  if (!fn) throw RegistryError("empty formula kernel");
  if (device == DeviceType::kCPU) fn = widening_kernel(std::move(fn), native);
  std::lock_guard lock(mu_);
  const int d = static_cast<int>(device);
  if (formula_kernels_[d])
    throw RegistryError("the formula kernel for " + std::string(device_type_name(device)) + " is already set");
  kernels_.push_back(std::make_unique<KernelFn>(std::move(fn)));
  formula_kernels_[d] = kernels_.back().get();
  for (auto& [name, op] : ops_)
    if (op->def_.formula && !op->kernels_[d].load()) {
      op->kernels_[d].store(formula_kernels_[d], std::memory_order_release);
      op->derived_[d] = true;
    }
}

const RegisteredOp* OpRegistry::find(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = ops_.find(std::string(name));
  return it == ops_.end() ? nullptr : it->second.get();
}

const RegisteredOp& OpRegistry::get(std::string_view name) const {
  if (const RegisteredOp* op = find(name)) return *op;
  throw RegistryError(unknown_op_message(name, nearest_names(name, names())));
}

bool OpRegistry::kernel_from_formula(const RegisteredOp& op, DeviceType device) const {
  std::lock_guard lock(mu_);  // derived_ changes when a user op gets its own kernel
  const int d = static_cast<int>(device);
  return op.kernels_[d].load(std::memory_order_relaxed) && op.derived_[d];
}

std::vector<std::string> OpRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, op] : ops_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const RegisteredOp& register_op(OpDef def) { return OpRegistry::global().add(std::move(def)); }

void register_kernel(std::string_view op, DeviceType device, KernelFn fn, DTypeMask native) {
  OpRegistry::global().add_kernel(op, device, std::move(fn), native);
}

const RegisteredOp& get_op(std::string_view name) { return OpRegistry::global().get(name); }

}  // namespace wok

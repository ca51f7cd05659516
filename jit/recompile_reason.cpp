#include "wok/jit/recompile_reason.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wok/jit/plan_cache.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/signature.h"

namespace wok::jit {

namespace {

struct Seen {
  std::vector<TensorMeta> values;
  std::vector<std::string> attrs;  // per node; "" for constants (their values are parameters)
  CpuIsa isa;
};

struct Tracker {
  std::mutex mu;
  std::unordered_map<uint64_t, Seen> programs;
};

Tracker& tracker() {
  static Tracker* t = new Tracker();  // leaked, like the plan cache it explains
  return *t;
}

std::string program_key(const Fragment& f) {
  std::string s;
  append_fragment_wiring(s, f, /*with_attrs=*/false);
  return s;
}

// "input 0", or "%3 (exp)" for an intermediate.
std::string value_name(const Fragment& f, int v) {
  for (size_t i = 0; i < f.inputs.size(); ++i)
    if (f.inputs[i] == v) return "input " + std::to_string(i);
  for (const FragmentNode& n : f.nodes)
    for (int o : n.outputs)
      if (o == v) return "%" + std::to_string(v) + " (" + n.op->name() + ")";
  return "%" + std::to_string(v);
}

Seen seen_of(const Fragment& f, CpuIsa isa) {
  Seen s{f.values, {}, isa};
  for (const FragmentNode& n : f.nodes) {
    std::string a;
    if (n.op->def().kind != OpKind::kCreation) a = n.attrs->str();
    s.attrs.push_back(std::move(a));
  }
  return s;
}

std::string diff(const Fragment& f, const Seen& old, const Seen& now) {
  // Inputs first: they are what a user changes.
  std::vector<int> order(f.inputs.begin(), f.inputs.end());
  for (size_t v = 0; v < f.values.size(); ++v) order.push_back(static_cast<int>(v));
  for (int v : order)
    if (old.values[v].dtype != now.values[v].dtype)
      return "dtype of " + value_name(f, v) + " changed: " + std::string(dtype_name(old.values[v].dtype)) + " -> " +
             std::string(dtype_name(now.values[v].dtype));
  for (int v : order)
    if (old.values[v].shape != now.values[v].shape)
      return "shape of " + value_name(f, v) + " changed: " + shape_str(old.values[v].shape) + " -> " +
             shape_str(now.values[v].shape);
  for (int v : order)
    if (old.values[v].device != now.values[v].device)
      return "device of " + value_name(f, v) + " changed: " + old.values[v].device.str() + " -> " +
             now.values[v].device.str();
  for (size_t n = 0; n < now.attrs.size(); ++n)
    if (old.attrs[n] != now.attrs[n])
      return "attributes of node " + std::to_string(n) + " (" + f.nodes[n].op->name() + ") changed: " + old.attrs[n] +
             " -> " + now.attrs[n];
  if (old.isa != now.isa)
    return std::string("instruction set changed: ") + std::string(cpu_isa_name(old.isa)) + " -> " +
           std::string(cpu_isa_name(now.isa));
  return "same signature as before: the plan cache was cleared";
}

}  // namespace

PlanMiss explain_plan_miss(const Fragment& f, CpuIsa isa) {
  PlanMiss m;
  m.program = hash128(program_key(f)).lo;
  m.name = program_name(f, m.program);
  Seen now = seen_of(f, isa);
  Tracker& t = tracker();
  std::lock_guard lock(t.mu);
  auto [it, fresh] = t.programs.try_emplace(m.program, now);
  if (fresh) {
    m.reason = "first trace of this program";
  } else {
    m.reason = diff(f, it->second, now);
    it->second = std::move(now);
  }
  return m;
}

}  // namespace wok::jit

#include "wok/jit/cuda/cuda_jit_runner.h"

#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "wok/jit/cuda/cuda_kernel_cache.h"
#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/once_cache.h"
#include "wok/jit/plan.h"
#include "wok/jit/plan_cache.h"
#include "wok/jit/plan_order_check.h"
#include "wok/runtime/backend.h"
#include "wok/runtime/cuda/cuda_executor.h"
#include "wok/runtime/cuda/cuda_kernels.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/cuda/nvrtc_loader.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"

namespace wok::jit::cuda {

namespace dev = wok::cuda;

namespace {

struct CudaStep {
  std::shared_ptr<const CudaKernelBinary> binary;
  dev::CUfunction fn = nullptr;
};

// A plan with its kernels compiled and loaded on one device, or the reason
// it runs on the precompiled kernels.
struct CudaPlan {
  std::shared_ptr<const Plan> plan;
  std::vector<CudaStep> steps;  // per plan step; fn set for kernel steps
  std::string fallback;         // non-empty: run precompiled, and why
};

// Loaded kernels by (binary, device): a module per fused kernel, loaded once.
dev::CUfunction load_kernel(const CudaKernelBinary& bin, int device) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::pair<const CudaKernelBinary*, int>, dev::CUfunction>();  // leaked
  std::lock_guard lock(mu);
  auto key = std::make_pair(&bin, device);
  if (auto it = loaded->find(key); it != loaded->end()) return it->second;
  dev::set_device(device);
  const dev::DriverApi& d = dev::driver();
  dev::CUmodule module = nullptr;
  dev::check(d.cuModuleLoadData(&module, bin.binary.image.data()), ("cuModuleLoadData(" + bin.name + ")").c_str());
  dev::CUfunction fn = nullptr;
  dev::check(d.cuModuleGetFunction(&fn, module, bin.name.c_str()), ("cuModuleGetFunction(" + bin.name + ")").c_str());
  loaded->emplace(key, fn);
  return fn;
}

void notice_once(const std::string& what) {
  static std::mutex mu;
  static auto* seen = new std::unordered_set<std::string>();
  std::lock_guard lock(mu);
  if (seen->insert(what).second) std::fprintf(stderr, "wok: %s\n", what.c_str());
}

using CudaPlanResult = absl::StatusOr<std::shared_ptr<const CudaPlan>>;

CudaPlanResult build_cuda_plan(const Fragment& f, int device) {
  auto cp = std::make_shared<CudaPlan>();
  std::shared_ptr<Plan> plan = plan_structure(f, cuda_target());
  const int arch = dev::device_info(device).arch();
  cp->steps.resize(plan->steps.size());
  // Compile the plan's kernels concurrently: NVRTC takes tens of
  // milliseconds each, and kernels of one plan are independent.
  std::vector<std::pair<size_t, std::future<absl::StatusOr<std::shared_ptr<const CudaKernelBinary>>>>> pending;
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const PlanStep& st = plan->steps[s];
    if (st.kind != PlanStep::Kind::kKernel) continue;
    const FusedKernelSpec& spec = st.lowered.spec;
    pending.emplace_back(s, std::async(pending.empty() ? std::launch::deferred : std::launch::async,
                                       [&spec, arch] { return CudaKernelCache::global().get(spec, arch); }));
  }
  for (auto& [s, fut] : pending) {
    absl::StatusOr<std::shared_ptr<const CudaKernelBinary>> bin = fut.get();
    if (!bin.ok()) {
      if (absl::IsUnimplemented(bin.status()) || absl::IsResourceExhausted(bin.status())) {
        if (cp->fallback.empty()) cp->fallback = std::string(bin.status().message());
        continue;
      }
      return absl::Status(bin.status().code(), "cannot compile a fused kernel for sm_" + std::to_string(arch) +
                                                   ": " + std::string(bin.status().message()));
    }
    cp->steps[s].binary = *bin;
  }
  if (cp->fallback.empty())
    for (size_t s = 0; s < plan->steps.size(); ++s)
      if (cp->steps[s].binary) cp->steps[s].fn = load_kernel(*cp->steps[s].binary, device);
  cp->plan = std::move(plan);
  return std::shared_ptr<const CudaPlan>(std::move(cp));
}

// CUDA plans by fragment and device, built once per key (Note [Compile once
// per key] in jit/once_cache.h); a failed build is every waiter's error.
class CudaPlanCache {
 public:
  CudaPlanResult get_or_build(const Fragment& f, int device) {
    std::string signature = fragment_signature(f);
    signature += " cuda:" + std::to_string(device);
    auto& counters = detail::counters();
    OnceCache<CudaPlanResult>::Outcome outcome;
    CudaPlanResult plan = plans_.get(
        hash128(signature), signature,
        [&]() -> CudaPlanResult {
          counters.plan_cache_misses.fetch_add(1, std::memory_order_relaxed);
          return build_cuda_plan(f, device);
        },
        &outcome);
    if (outcome == OnceCache<CudaPlanResult>::Outcome::kHit)
      counters.plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
    return plan;
  }
  size_t size() const { return plans_.size(); }
  void clear() { plans_.clear(); }

 private:
  OnceCache<CudaPlanResult> plans_;
};

CudaPlanCache& plan_cache() {
  static CudaPlanCache* c = new CudaPlanCache();  // leaked: plans hold loaded kernels
  return *c;
}

// One replay's buffers (Note [Memory planned once] in jit/plan.h).
struct Buffers {
  const Plan& plan;
  std::span<const StoragePtr> inputs;
  StoragePtr arena;
  std::vector<StoragePtr> outputs;

  void* address(int v) const { return placement_address(plan, v, inputs, outputs, arena.get()); }
};

void launch_fused(const PlanStep& st, const CudaStep& cs, const Fragment& f, const Buffers& buf, int device,
                  dev::CudaStream& stream) {
  const LoweredKernel& k = st.lowered;
  if (k.numel == 0) return;
  const FusedKernelSpec& spec = k.spec;
  const int nin = spec.num_inputs(), nout = spec.num_outputs(), rank = spec.rank;
  std::vector<void*> ptrs;
  ptrs.reserve(nin + nout);
  for (int v : k.input_values) ptrs.push_back(buf.address(v));
  for (int v : k.output_values) ptrs.push_back(buf.address(v));
  std::vector<uint64_t> params;
  params.reserve(k.param_nodes.size());
  for (size_t i = 0; i < k.param_nodes.size(); ++i)
    params.push_back(param_bits(spec.param_dtypes[i], f.nodes[k.param_nodes[i]].attrs->get_scalar("value")));
  // wok::Layout<rank, inputs>: the shape, then each input's strides.
  std::vector<int64_t> layout(static_cast<size_t>(rank + rank * std::max(nin, 1)), 0);
  for (int d = 0; d < rank; ++d) layout[d] = k.shape[d];
  for (int i = 0; i < nin; ++i)
    for (int d = 0; d < rank; ++d) layout[rank + i * rank + d] = k.strides[static_cast<size_t>(i * rank + d)];
  long long n = k.numel;
  // Vector tiles need every pointer that is read or written per element
  // aligned to a whole tile.
  int vec_ok = rank == 1;
  for (int i = 0; i < nin + nout && vec_ok; ++i) {
    const bool scalar = i < nin && spec.input_broadcast[i][0];
    const size_t bytes = kTileElements * itemsize(i < nin ? spec.input_dtypes[i] : spec.output_dtype(i - nin));
    if (!scalar && reinterpret_cast<uintptr_t>(ptrs[i]) % bytes != 0) vec_ok = 0;
  }
  std::vector<void*> args;
  args.reserve(ptrs.size() + params.size() + 3);
  for (void*& p : ptrs) args.push_back(&p);
  for (uint64_t& p : params) args.push_back(&p);
  args.push_back(layout.data());
  args.push_back(&n);
  args.push_back(&vec_ok);
  const int64_t work = vec_ok ? (n + kTileElements - 1) / kTileElements : n;
  dev::CUresult r = dev::driver().cuLaunchKernel(cs.fn, dev::grid_for(device, work), 1, 1, kBlockSize, 1, 1, 0,
                                                 stream.handle(), args.data(), nullptr);
  if (r != dev::kSuccess)
    throw DeviceError("launching generated CUDA kernel " + cs.binary->name + ": " + dev::error_text(r));
  detail::counters().kernel_launches.fetch_add(1, std::memory_order_relaxed);
}

std::vector<StoragePtr> replay(const CudaPlan& cp, const Fragment& f, std::span<const StoragePtr> inputs, int device) {
  const Plan& plan = *cp.plan;
  Buffers buf{plan, inputs, nullptr, {}};
  const Device d = Device::cuda(device);
  if (plan.arena_bytes > 0) buf.arena = Storage::allocate(static_cast<size_t>(plan.arena_bytes), d);
  buf.outputs.reserve(plan.output_storage_bytes.size());
  for (size_t bytes : plan.output_storage_bytes) buf.outputs.push_back(Storage::allocate(bytes, d));

  dev::CudaStreamPool& pool = dev::CudaStreamPool::for_device(device);
  const int lanes = std::max(1, std::min(plan.lanes, pool.size()));
  dev::CudaStream& first = pool.next();
  std::vector<dev::CudaStream*> stream(lanes);
  for (int l = 0; l < lanes; ++l) stream[l] = &pool.at(first.id() + l);
  std::vector<std::unique_ptr<dev::CudaEvent>> done(plan.steps.size());
  std::vector<StoragePtr> keep;
  auto sync_all = [&] {
    for (dev::CudaStream* s : stream) s->synchronize();
  };
  // WOK_CHECK_STREAMS: the checker sees each wait, launch and event as it
  // is issued (Note [Checking stream order]).
  std::optional<PlanOrderCheck> check;
  if (check_streams_enabled()) {
    std::vector<int> ids(lanes);
    for (int l = 0; l < lanes; ++l) ids[l] = stream[l]->id();
    check.emplace(plan, f, std::move(ids), "CUDA stream");
  }
  try {
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const PlanStep& st = plan.steps[s];
      const int slot = st.lane % lanes;
      dev::CudaStream& on = *stream[slot];
      for (int dep : st.deps)
        if (done[dep]) {
          done[dep]->block(on);
          if (check) check->wait_for_step(slot, dep);
        }
      if (check) check->step(slot, static_cast<int>(s));
      // Scratch buffers of precompiled steps are held until the end of the run.
      dev::StreamGuard guard(on, &keep);
      if (st.kind == PlanStep::Kind::kKernel) launch_fused(st, cp.steps[s], f, buf, device, on);
      else run_node_step(st, plan, f, buf.inputs, buf.outputs, buf.arena.get());
      if (st.signals) {
        done[s] = std::make_unique<dev::CudaEvent>(device);
        done[s]->record(on);
        if (check) check->signal(slot, static_cast<int>(s));
      }
    }
    sync_all();
  } catch (...) {
    try {
      sync_all();  // launched work must finish before its buffers go back
    } catch (...) {
    }
    throw;
  }
  std::vector<StoragePtr> result;
  result.reserve(f.outputs.size());
  for (int v : f.outputs) {
    const Placement& p = plan.placement[plan.canonical[v]];
    if (p.where == Placement::Where::kOutput) result.push_back(buf.outputs[p.index]);
    else if (p.where == Placement::Where::kInput) result.push_back(inputs[p.index]);
    else throw Error("wok CUDA JIT: fragment output not planned (internal error)");
  }
  return result;
}

}  // namespace

std::vector<StoragePtr> CudaJitRunner::run(const Fragment& fragment, std::span<const StoragePtr> input_storage) {
  const Device device = fragment.values[fragment.outputs[0]].device;
  dev::require_device(device.index);
  if (!wok::cuda::nvrtc_available()) {
    notice_once("no CUDA JIT (" + wok::cuda::nvrtc_unavailable_reason() + "); using precompiled CUDA kernels");
    return dev::cuda_precompiled_executor().run(fragment, input_storage);
  }
  dev::set_device(device.index);
  // Where the CUDA JIT's errors become the API's exception (Note [Errors
  // inside the JIT] in jit/plan.h).
  CudaPlanResult built = plan_cache().get_or_build(fragment, device.index);
  if (!built.ok()) throw Error("wok CUDA JIT: " + std::string(built.status().message()));
  std::shared_ptr<const CudaPlan> cp = *std::move(built);
  if (!cp->fallback.empty()) {
    notice_once("CUDA JIT: " + cp->fallback + "; such fragments run on precompiled CUDA kernels");
    return dev::cuda_precompiled_executor().run(fragment, input_storage);
  }
  return replay(*cp, fragment, input_storage, device.index);
}

void install_cuda_runners() {
  install_runner(Backend::kPrecompiled, DeviceType::kCUDA, &dev::cuda_precompiled_executor());
  static CudaJitRunner* jit = new CudaJitRunner();  // leaked: Note [CUDA teardown]
  install_runner(Backend::kJit, DeviceType::kCUDA, jit);
}

size_t cuda_plan_cache_size() { return plan_cache().size(); }
void clear_cuda_plan_cache() { plan_cache().clear(); }

PendingFragment pending_fragment(std::span<const TensorImplPtr> targets) {
  PendingFragment pf;
  Fragment& f = pf.fragment;
  std::unordered_map<const Node*, int> first_value;
  std::unordered_map<const TensorImpl*, int> leaf_value;
  std::unordered_set<const Node*> seen;
  std::function<void(const std::shared_ptr<Node>&)> visit = [&](const std::shared_ptr<Node>& n) {
    if (!seen.insert(n.get()).second) return;
    for (const TensorImplPtr& in : n->inputs)
      if (!in->ready()) visit(in->node());
    pf.nodes.push_back(n);
  };
  for (const TensorImplPtr& t : targets)
    if (!t->ready()) visit(t->node());
  for (const auto& n : pf.nodes) {
    first_value[n.get()] = static_cast<int>(f.values.size());
    for (const TensorMeta& m : n->output_meta) f.values.push_back(m);
  }
  for (const auto& n : pf.nodes) {
    FragmentNode fn{n->op, &n->attrs, {}, {}, n->site};
    for (const TensorImplPtr& in : n->inputs) {
      int v;
      if (in->ready()) {
        auto [it, inserted] = leaf_value.try_emplace(in.get(), static_cast<int>(f.values.size()));
        if (inserted) {
          f.values.push_back(in->meta());
          f.inputs.push_back(it->second);
        }
        v = it->second;
      } else {
        v = first_value.at(in->node().get()) + in->output_index();
      }
      fn.inputs.push_back(v);
    }
    for (size_t k = 0; k < n->output_meta.size(); ++k) fn.outputs.push_back(first_value.at(n.get()) + static_cast<int>(k));
    f.nodes.push_back(std::move(fn));
  }
  for (const TensorImplPtr& t : targets)
    if (!t->ready()) f.outputs.push_back(first_value.at(t->node().get()) + t->output_index());
  return pf;
}

}  // namespace wok::jit::cuda

#include "wok/runtime/cuda/cuda_kernels.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/cuda/cuda_formula_kernel.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/cuda/embedded_files.h"
#include "wok/runtime/cuda/ew_args.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_registry.h"

namespace wok {
namespace cuda {

namespace {

// ---- argument structs: the device side declares the same layouts -------------------------
// (EwArgs, of templates/wok_elementwise.cuh, is in ew_args.h.)

// templates/wok_reduce.cuh
struct RedArgs {
  const void* in;
  void* out;
  void* partial;
  int64_t n_out, n_red, chunk;
  int32_t splits, kept_rank, red_rank, pad;
  int64_t kept_shape[kMaxRank], kept_stride[kMaxRank];
  int64_t red_shape[kMaxRank], red_stride[kMaxRank];
};
static_assert(sizeof(RedArgs) == 320, "RedArgs must match templates/wok_reduce.cuh");

// runtime/kernels/cuda/misc.cu
struct MmArgs {
  const void* a;
  const void* b;
  void* c;
  int64_t m, n, k, batch;
  int32_t batch_rank, pad;
  int64_t batch_shape[kMaxRank], a_batch_stride[kMaxRank], b_batch_stride[kMaxRank];
};
static_assert(sizeof(MmArgs) == 256, "MmArgs must match runtime/kernels/cuda/misc.cu");

// ---- modules ------------------------------------------------------------------------------

struct Module {
  std::mutex mu;
  CUmodule handle = nullptr;
  std::string origin;
  std::unordered_map<std::string, CUfunction> functions;
};

struct Modules {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::unique_ptr<Module>> all;

  Module& get(int device, const std::string& name) {
    std::lock_guard lock(mu);
    auto& m = all[{device, name}];
    if (!m) m = std::make_unique<Module>();
    return *m;
  }
};

Modules& modules() {
  static Modules* m = new Modules();  // leaked: Note [CUDA teardown] in cuda_allocator.h
  return *m;
}

// Loads `name` into m: the embedded fatbin when it has code for this GPU,
// else the embedded source compiled by NVRTC for the GPU's architecture.
void load_module(Module& m, int device, const std::string& name) {
  set_device(device);
  const DriverApi& d = driver();
  const DeviceInfo& info = device_info(device);
  std::string fatbin_error;
  if (const embedded::EmbeddedFile* f = embedded::find("fatbin/" + name)) {
    CUresult r = d.cuModuleLoadData(&m.handle, f->data);
    if (r == kSuccess) {
      m.origin = "fatbin";
      return;
    }
    fatbin_error = "the built-in fatbin does not load (" + error_text(r) + "); ";
  }
  const embedded::EmbeddedFile* src = embedded::find("kernels/" + name);
  if (!src) throw DeviceError("no precompiled CUDA module '" + name + "' in this build");
  absl::StatusOr<cuda::CudaBinary> bin =
      cuda::compile_cuda(std::string(src->text()), "wok_precompiled_" + name, info.arch());
  if (!bin.ok())
    throw DeviceError("cuda:" + std::to_string(device) + ": cannot load the precompiled CUDA kernels '" + name +
                      "': " + fatbin_error + "building them with NVRTC failed: " + std::string(bin.status().message()));
  check(d.cuModuleLoadData(&m.handle, bin->image.data()), ("cuModuleLoadData(" + name + ")").c_str());
  m.origin = "NVRTC (" + bin->target + ")";
}

// The value's bits in dtype t, converted as the CPU's full kernel does.
uint64_t bits_of(DType t, const Scalar& value) {
  uint64_t bits = 0;
  visit_any_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    T v = value.to<T>();
    std::memcpy(&bits, &v, sizeof v);
  });
  return bits;
}

int device_of(const KernelContext& ctx) { return ctx.device.index; }

CUstream stream_of(const KernelContext& ctx) { return current_stream(device_of(ctx)).handle(); }

void* ptr(const TensorRef& t) { return t.data; }

// ---- full ---------------------------------------------------------------------------------

void full_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  EwArgs a{};
  a.out = ptr(y);
  a.n = y.numel();
  a.rank = 1;
  a.flat = 1;
  a.shape[0] = a.n;
  a.attr[0] = bits_of(y.dtype, ctx.attrs.get_scalar("value"));
  if (a.n == 0) return;
  const std::string kernel = "wok_full_" + dtype_abbr(y.dtype);
  launch_ew(ctx, precompiled_function(device_of(ctx), "misc", kernel), a, kernel);
}

// ---- movement: strided copies -------------------------------------------------------------

// out[view] = in[view] over `shape`, with element strides per side (the
// pointers already at the views' first elements).
void strided_copy(const KernelContext& ctx, void* out, Strides out_st, const void* in, Strides in_st, Shape shape,
                  size_t itemsize) {
  // Drop size-1 dims, merge neighbours both sides step through as one.
  Shape s;
  Strides so, si;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && so.back() == out_st[d] * shape[d] && si.back() == in_st[d] * shape[d]) {
      s.back() *= shape[d];
      so.back() = out_st[d];
      si.back() = in_st[d];
      continue;
    }
    s.push_back(shape[d]);
    so.push_back(out_st[d]);
    si.push_back(in_st[d]);
  }
  const int64_t n = numel(shape);
  if (n == 0) return;
  if (s.empty()) s = {1}, so = {0}, si = {0};
  const int dev = device_of(ctx);
  if (s.size() == 1 && so[0] == 1 && si[0] == 1) {  // contiguous: a plain device copy
    check(driver().cuMemcpyAsync(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(out)),
                                 static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(in)), n * itemsize,
                                 stream_of(ctx)),
          "cuMemcpyAsync");
    return;
  }
  if (s.size() > static_cast<size_t>(kMaxRank))
    throw DeviceError("CUDA copy kernel for '" + ctx.op.name() + "': more than " + std::to_string(kMaxRank) +
                      " dims remain after merging");
  EwArgs a{};
  a.out = out;
  a.in[0] = in;
  a.n = n;
  a.rank = static_cast<int32_t>(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    a.shape[d] = s[d];
    a.stride[0][d] = si[d];
    a.stride[1][d] = so[d];
  }
  CUfunction fn = precompiled_function(dev, "misc", "wok_copy_" + std::to_string(itemsize));
  launch(fn, grid_for(dev, n), 1, 1, kThreads, 1, stream_of(ctx), &a, "wok_copy");
}

void permute_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const auto& dims = ctx.attrs.get_ints("dims");
  Strides in_st = contiguous_strides(*x.shape), st(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) st[i] = in_st[dims[i]];
  strided_copy(ctx, y.data, contiguous_strides(*y.shape), x.data, st, *y.shape, itemsize(x.dtype));
}

void broadcast_to_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  strided_copy(ctx, y.data, contiguous_strides(*y.shape), x.data, broadcast_strides(*x.shape, *y.shape), *y.shape,
               itemsize(x.dtype));
}

void slice_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const auto& starts = ctx.attrs.get_ints("starts");
  const auto& steps = ctx.attrs.get_ints("steps");
  const Strides st = contiguous_strides(*x.shape);
  int64_t base = 0;
  Strides in_st(st.size());
  for (size_t i = 0; i < st.size(); ++i) {
    base += starts[i] * st[i];
    in_st[i] = steps[i] * st[i];
  }
  const size_t isz = itemsize(x.dtype);
  strided_copy(ctx, y.data, contiguous_strides(*y.shape), static_cast<const char*>(x.data) + base * isz, in_st,
               *y.shape, isz);
}

void concat_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const Strides out_st = contiguous_strides(*y.shape);
  const size_t isz = itemsize(y.dtype);
  int64_t offset = 0;  // along axis
  for (const TensorRef& x : ctx.inputs) {
    strided_copy(ctx, static_cast<char*>(y.data) + offset * out_st[axis] * isz, out_st, x.data,
                 contiguous_strides(*x.shape), *x.shape, isz);
    offset += (*x.shape)[axis];
  }
}

// ---- widening: the dtypes a kernel does not take (Note [The widening adapter]) ------------

// Device scratch, kept until the stream has run the work queued on it.
DeviceWidening::Buffer device_scratch(const KernelContext& ctx, size_t bytes) {
  StoragePtr s = Storage::allocate(bytes == 0 ? 1 : bytes, ctx.device);
  void* data = s->data();
  return {std::move(s), data};
}

// `to` = cast(`from`) by the cast op's formula kernel, on ctx's stream.
void device_convert(const KernelContext& ctx, const TensorRef& from, const TensorRef& to) {
  static const RegisteredOp& cast = OpRegistry::global().get("cast");
  const Attrs attrs(&cast.def().attrs, {to.dtype});
  formula_kernel(KernelContext{cast, attrs, std::span<const TensorRef>(&from, 1), std::span<const TensorRef>(&to, 1),
                               ctx.device});
}

void release_after_stream(const KernelContext&, std::vector<std::shared_ptr<void>>& holders) {
  for (std::shared_ptr<void>& h : holders)
    if (h) keep_alive(std::static_pointer_cast<Storage>(std::move(h)));
  holders.clear();
}

// ---- matmul ---------------------------------------------------------------------------------

void matmul_kernel(const KernelContext& ctx) {
  const TensorRef& A = ctx.inputs[0];
  const TensorRef& B = ctx.inputs[1];
  const TensorRef& C = ctx.outputs[0];
  const Shape& as = *A.shape;
  const Shape& bs = *B.shape;
  const Shape& cs = *C.shape;
  MmArgs p{};
  p.a = A.data;
  p.b = B.data;
  p.c = C.data;
  p.m = as[as.size() - 2];
  p.k = as[as.size() - 1];
  p.n = bs[bs.size() - 1];
  Shape batch(cs.begin(), cs.end() - 2);
  if (batch.size() > static_cast<size_t>(kMaxRank))
    throw DeviceError("CUDA matmul: more than " + std::to_string(kMaxRank) + " batch dims");
  Strides sa = broadcast_strides(Shape(as.begin(), as.end() - 2), batch);
  Strides sb = broadcast_strides(Shape(bs.begin(), bs.end() - 2), batch);
  p.batch = numel(batch);
  p.batch_rank = static_cast<int32_t>(batch.size());
  for (size_t d = 0; d < batch.size(); ++d) {
    p.batch_shape[d] = batch[d];
    p.a_batch_stride[d] = sa[d] * p.m * p.k;
    p.b_batch_stride[d] = sb[d] * p.k * p.n;
  }
  if (C.numel() == 0) return;
  if (p.k == 0) {  // sums of nothing
    check(driver().cuMemsetD8Async(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(C.data)), 0,
                                   C.numel() * itemsize(C.dtype), stream_of(ctx)),
          "cuMemsetD8Async");
    return;
  }
  const int dev = device_of(ctx);
  CUfunction fn = precompiled_function(dev, "misc", "wok_matmul_" + dtype_abbr(A.dtype));
  constexpr unsigned kTile = 16;
  launch(fn, static_cast<unsigned>((p.n + kTile - 1) / kTile), static_cast<unsigned>((p.m + kTile - 1) / kTile),
         static_cast<unsigned>(std::min<int64_t>(p.batch, 65535)), kTile, kTile, stream_of(ctx), &p, "wok_matmul");
}

// ---- reductions -----------------------------------------------------------------------------

// Bytes of one partial result (the accumulator of templates/wok_reduce.cuh).
size_t partial_bytes(const std::string& op, DType in) {
  if (op == "argmax") return 16;  // ArgP<T>: value, int64 index
  if (op == "max" || op == "min") return itemsize(in);
  if (op == "mean" && in == DType::kInt64) return 8;  // double
  return is_floating(in) ? itemsize(in) : 8;          // int64 accumulators
}

KernelFn reduction(const std::string& op) {
  return [op](const KernelContext& ctx) {
    const TensorRef& x = ctx.inputs[0];
    const TensorRef& y = ctx.outputs[0];
    const Shape& shape = *x.shape;
    const auto& axes = ctx.attrs.get_ints("axes");
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t a : axes) reduced[a] = true;
    // Kept and reduced dims of the contiguous input, size-1 dims dropped and
    // neighbours of one kind merged (row-major order within each is kept,
    // which argmax's index needs).
    const Strides st = contiguous_strides(shape);
    struct Dim {
      int64_t size, stride;
      bool red;
    };
    std::vector<Dim> dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (!dims.empty() && dims.back().red == reduced[d]) {
        dims.back().size *= shape[d];
        dims.back().stride = st[d];
        continue;
      }
      dims.push_back({shape[d], st[d], static_cast<bool>(reduced[d])});
    }
    RedArgs a{};
    a.in = x.data;
    a.out = y.data;
    a.n_out = y.numel();
    a.n_red = 1;
    for (const Dim& d : dims) {
      int64_t* sh = d.red ? a.red_shape : a.kept_shape;
      int64_t* sd = d.red ? a.red_stride : a.kept_stride;
      int32_t& rank = d.red ? a.red_rank : a.kept_rank;
      if (rank == kMaxRank)
        throw DeviceError("CUDA reduction '" + op + "': more than " + std::to_string(kMaxRank) + " dims remain");
      sh[rank] = d.size;
      sd[rank] = d.stride;
      ++rank;
      if (d.red) a.n_red *= d.size;
    }
    if (a.n_out == 0) return;
    if (a.kept_rank == 0) a.kept_rank = 1, a.kept_shape[0] = 1, a.kept_stride[0] = 0;
    if (a.red_rank == 0) a.red_rank = 1, a.red_shape[0] = a.n_red, a.red_stride[0] = 0;
    // Block per output when the innermost dim is reduced (threads read
    // contiguous memory), else thread per output (neighbouring outputs are
    // neighbours in memory). Splits depend on the shape only.
    const bool block = !dims.empty() && dims.back().red && a.n_red > 0;
    int64_t splits = 1;
    if (a.n_red > 0) {
      splits = block ? std::min<int64_t>((a.n_red + 4095) / 4096, std::max<int64_t>(1, 2048 / a.n_out))
                     : std::min<int64_t>((a.n_red + 255) / 256, std::max<int64_t>(1, 65536 / a.n_out));
      splits = std::max<int64_t>(splits, 1);
    }
    a.chunk = a.n_red > 0 ? (a.n_red + splits - 1) / splits : 0;
    if (a.chunk > 0) splits = (a.n_red + a.chunk - 1) / a.chunk;
    a.splits = static_cast<int32_t>(splits);
    StoragePtr partial;
    if (splits > 1) {
      partial = Storage::allocate(static_cast<size_t>(a.n_out * splits) * partial_bytes(op, x.dtype), ctx.device);
      a.partial = partial->data();
    }
    const int dev = device_of(ctx);
    const std::string base = "wok_" + op + "_" + dtype_abbr(x.dtype);
    const int64_t groups = a.n_out * splits;
    CUstream stream = stream_of(ctx);
    if (block) {
      launch(precompiled_function(dev, "reduce", base + "_block"),
             static_cast<unsigned>(std::min<int64_t>(groups, int64_t{1} << 20)), 1, 1, kThreads, 1, stream, &a,
             (base + "_block").c_str());
    } else {
      launch(precompiled_function(dev, "reduce", base + "_thread"), grid_for(dev, groups), 1, 1, kThreads, 1, stream,
             &a, (base + "_thread").c_str());
    }
    if (splits > 1) {
      launch(precompiled_function(dev, "reduce", base + "_merge"), grid_for(dev, a.n_out), 1, 1, kThreads, 1, stream,
             &a, (base + "_merge").c_str());
      keep_alive(std::move(partial));  // until the merge has run
    }
  };
}

}  // namespace

std::string dtype_abbr(DType t) {
  switch (t) {
    case DType::kBool: return "b8";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat32: return "f32";
    case DType::kFloat64: return "f64";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kInt8: return "i8";
    case DType::kUInt8: return "u8";
    case DType::kInt16: return "i16";
    case DType::kUInt16: return "u16";
    case DType::kUInt32: return "u32";
    case DType::kUInt64: return "u64";
  }
  return "?";
}

void fill_layout(EwArgs& a, const Shape& out, std::span<const TensorRef> ins, const std::string& op) {
  std::vector<const Shape*> shapes;
  for (const TensorRef& t : ins) shapes.push_back(t.shape);
  CollapsedLayout l = collapse_layout(out, shapes);
  if (l.shape.size() > static_cast<size_t>(kMaxRank))
    throw DeviceError("CUDA kernel for '" + op + "': more than " + std::to_string(kMaxRank) +
                      " dims remain after merging (shape " + shape_str(out) + ")");
  a.n = numel(out);
  a.rank = static_cast<int32_t>(l.shape.size());
  bool flat = a.rank == 1;
  for (int d = 0; d < a.rank; ++d) a.shape[d] = l.shape[d];
  for (size_t k = 0; k < ins.size(); ++k) {
    a.in[k] = ins[k].data;
    for (int d = 0; d < a.rank; ++d) a.stride[k][d] = l.strides[1 + k][d];
    flat = flat && (a.stride[k][0] == 0 || a.stride[k][0] == 1);
  }
  a.flat = flat ? 1 : 0;
}

void launch_ew(const KernelContext& ctx, CUfunction fn, EwArgs& a, const std::string& what) {
  if (a.n == 0) return;
  const int dev = device_of(ctx);
  launch(fn, grid_for(dev, a.n), 1, 1, kThreads, 1, stream_of(ctx), &a, what.c_str());
}

CUfunction precompiled_function(int device, const std::string& module, const std::string& kernel) {
  Module& m = modules().get(device, module);
  std::lock_guard lock(m.mu);
  if (auto it = m.functions.find(kernel); it != m.functions.end()) return it->second;
  if (!m.handle) load_module(m, device, module);
  set_device(device);
  CUfunction fn = nullptr;
  CUresult r = driver().cuModuleGetFunction(&fn, m.handle, kernel.c_str());
  if (r != kSuccess)
    throw DeviceError("no precompiled CUDA kernel " + kernel + " in module '" + module + "' (" + error_text(r) +
                      "): this op does not take these dtypes on CUDA");
  m.functions.emplace(kernel, fn);
  return fn;
}

std::string precompiled_module_origin(int device, const std::string& module) {
  Module& m = modules().get(device, module);
  std::lock_guard lock(m.mu);
  return m.origin;
}

unsigned grid_for(int device, int64_t n) {
  // One full wave: 2048 threads per SM on every architecture wok targets.
  const int64_t wave = static_cast<int64_t>(device_info(device).multiprocessors) * (2048 / kThreads);
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, wave)));
}

void launch(CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
            CUstream stream, void* args, const char* what) {
  void* params[] = {args};
  CUresult r = driver().cuLaunchKernel(fn, grid_x, grid_y, grid_z, block_x, block_y, 1, 0, stream, params, nullptr);
  if (r != kSuccess) throw DeviceError(std::string("launching CUDA kernel ") + what + ": " + error_text(r));
}

}  // namespace cuda

void register_builtin_cuda_kernels(OpRegistry& r) {
  constexpr DeviceType kCuda = DeviceType::kCUDA;
  // Matmul and the reductions take the compute dtypes; the others are
  // widened on the device as the CPU widens them (the formula kernels
  // render every dtype themselves, and the copies move bytes of any width).
  r.set_device_widening(kCuda, DeviceWidening{"CUDA", cuda::device_scratch, cuda::device_convert,
                                              cuda::release_after_stream});
  // Every op with a formula (the elementwise ones, cast, where and clamp
  // included): Note [CUDA formula kernels] in cuda_formula_kernel.cpp.
  r.set_formula_kernel(kCuda, cuda::formula_kernel);
  r.add_kernel("full", kCuda, cuda::full_kernel, kAllDTypeMask);
  r.add_kernel("permute", kCuda, cuda::permute_kernel, kAllDTypeMask);
  r.add_kernel("broadcast_to", kCuda, cuda::broadcast_to_kernel, kAllDTypeMask);
  r.add_kernel("slice", kCuda, cuda::slice_kernel, kAllDTypeMask);
  r.add_kernel("concat", kCuda, cuda::concat_kernel, kAllDTypeMask);
  r.add_kernel("matmul", kCuda, cuda::matmul_kernel, kComputeDTypeMask & ~dtype_bit(DType::kBool));
  for (const char* op : {"sum", "mean", "max", "min", "prod", "argmax"}) r.add_kernel(op, kCuda, cuda::reduction(op));
}

}  // namespace wok

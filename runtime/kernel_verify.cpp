#include "wok/runtime/kernel_verify.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/fragment.h"
#include "wok/runtime/observe/log.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/storage.h"

namespace wok {

namespace {

// -1: not decided yet (read WOK_VERIFY_KERNELS on first use); 0 off; 1 on.
// Constant-initialised, so it is valid before any static constructor runs.
std::atomic<int> g_verify{-1};

int verify_from_env() {
  const char* s = std::getenv("WOK_VERIFY_KERNELS");
  int on = s != nullptr && *s != '\0' && std::strcmp(s, "0") != 0;
  int expected = -1;
  // A set_verify_kernels_enabled that got there first wins.
  if (!g_verify.compare_exchange_strong(expected, on, std::memory_order_relaxed)) return expected;
  return on;
}

// Canary zone on each side of an output: a cache line, which also keeps the
// interior 64-byte aligned like every other buffer.
constexpr size_t kCanaryBytes = 64;
// Per-byte patterns (Note [Verifying kernel outputs]); none is 0x00 or 0x01.
constexpr uint8_t kFill1 = 0xA5, kFill2 = 0x5A;
constexpr uint8_t kCanary1 = 0xC3, kCanary2 = 0x3C;

struct GuardedOutput {
  StoragePtr block;          // null for an output with no elements
  uint8_t* interior = nullptr;
  size_t nbytes = 0;
  std::vector<int64_t> suspects;  // elements equal to the fill after the first run
};

void fill(const GuardedOutput& g, uint8_t canary, uint8_t pattern) {
  uint8_t* base = static_cast<uint8_t*>(g.block->data());
  std::memset(base, canary, kCanaryBytes);
  std::memset(g.interior, pattern, g.nbytes);
  std::memset(g.interior + g.nbytes, canary, kCanaryBytes);
}

std::string inferred_str(const TensorRef& ref) {
  return std::string(dtype_name(ref.dtype)) + shape_str(*ref.shape);
}

std::string defect_prefix(const KernelContext& ctx) {
  return "WOK_VERIFY_KERNELS: the cpu kernel of op '" + ctx.op.name() + "' ";
}

std::string defect_suffix(const FragmentNode* node) {
  std::string s = "; the op's shape rule and its kernel disagree";
  if (node) {
    std::string site = observe::site_str(node->site, node->caller);
    if (!site.empty()) s += " (recorded at " + site + ")";
  }
  return s;
}

// Throws if a canary byte of output `o` changed.
void check_canaries(const GuardedOutput& g, uint8_t canary, const KernelContext& ctx, size_t o,
                    const FragmentNode* node) {
  const uint8_t* before = static_cast<const uint8_t*>(g.block->data());
  const uint8_t* after = g.interior + g.nbytes;
  std::optional<size_t> first_before, first_after, last_after;
  for (size_t i = 0; i < kCanaryBytes; ++i) {
    if (before[i] != canary && !first_before) first_before = i;
    if (after[i] != canary) {
      if (!first_after) first_after = i;
      last_after = i;
    }
  }
  if (!first_before && !first_after) return;
  const TensorRef& ref = ctx.outputs[o];
  std::string what;
  int64_t offset;
  if (first_after) {  // the usual case: a shape rule that says too few elements
    size_t extent = *last_after + 1;
    what = "wrote " + std::string(extent == kCanaryBytes ? "at least " : "") + std::to_string(extent) +
           " bytes past the end";
    offset = static_cast<int64_t>(g.nbytes + *first_after);
  } else {
    size_t extent = kCanaryBytes - *first_before;
    what = "wrote " + std::string(extent == kCanaryBytes ? "at least " : "") + std::to_string(extent) +
           " bytes before the start";
    offset = static_cast<int64_t>(*first_before) - static_cast<int64_t>(kCanaryBytes);
  }
  throw CheckError(defect_prefix(ctx) + what + " of output " + std::to_string(o) + " (inferred " + inferred_str(ref) +
                   ", " + std::to_string(g.nbytes) + " bytes): first bad byte at offset " + std::to_string(offset) +
                   defect_suffix(node));
}

// The elements (of `itemsize` bytes) whose every byte is `pattern`: all of
// them, or (with `among`) those of `among`.
template <typename U>
std::vector<int64_t> matching(const uint8_t* data, size_t n, uint8_t pattern, const std::vector<int64_t>* among) {
  U want;
  std::memset(&want, pattern, sizeof(U));
  auto at = [&](size_t i) {
    U v;
    std::memcpy(&v, data + i * sizeof(U), sizeof(U));
    return v == want;
  };
  std::vector<int64_t> out;
  if (among) {
    for (int64_t i : *among)
      if (at(static_cast<size_t>(i))) out.push_back(i);
  } else {
    for (size_t i = 0; i < n; ++i)
      if (at(i)) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

std::vector<int64_t> matching(const GuardedOutput& g, DType dtype, uint8_t pattern, const std::vector<int64_t>* among) {
  const size_t n = g.nbytes / itemsize(dtype);
  switch (itemsize(dtype)) {
    case 1: return matching<uint8_t>(g.interior, n, pattern, among);
    case 2: return matching<uint16_t>(g.interior, n, pattern, among);
    case 4: return matching<uint32_t>(g.interior, n, pattern, among);
    case 8: return matching<uint64_t>(g.interior, n, pattern, among);
  }
  throw Error("WOK_VERIFY_KERNELS: unexpected itemsize (internal error)");
}

}  // namespace

bool verify_kernels_enabled() {
  int v = g_verify.load(std::memory_order_relaxed);
  return (v < 0 ? verify_from_env() : v) != 0;
}

void set_verify_kernels_enabled(bool on) { g_verify.store(on ? 1 : 0, std::memory_order_relaxed); }

void run_kernel_verified(const KernelFn& kernel, const KernelContext& ctx, const FragmentNode* node) {
  if (!ctx.device.is_cpu()) {  // Note [Verifying kernel outputs]: CUDA is not covered
    kernel(ctx);
    return;
  }
  const size_t n_out = ctx.outputs.size();
  std::vector<GuardedOutput> guards(n_out);
  std::vector<TensorRef> refs(ctx.outputs.begin(), ctx.outputs.end());
  for (size_t o = 0; o < n_out; ++o) {
    GuardedOutput& g = guards[o];
    g.nbytes = static_cast<size_t>(refs[o].numel()) * itemsize(refs[o].dtype);
    if (g.nbytes == 0) continue;  // nothing to write; keep the real (empty) address
    g.block = Storage::allocate(kCanaryBytes + g.nbytes + kCanaryBytes, Device::cpu());
    g.interior = static_cast<uint8_t*>(g.block->data()) + kCanaryBytes;
    fill(g, kCanary1, kFill1);
    refs[o].data = g.interior;
  }
  KernelContext guarded{ctx.op, ctx.attrs, ctx.inputs, refs, ctx.device};

  kernel(guarded);
  bool any_suspect = false;
  for (size_t o = 0; o < n_out; ++o) {
    if (!guards[o].block) continue;
    check_canaries(guards[o], kCanary1, ctx, o, node);
    guards[o].suspects = matching(guards[o], refs[o].dtype, kFill1, nullptr);
    any_suspect = any_suspect || !guards[o].suspects.empty();
  }

  if (any_suspect) {  // P1 may be real values: a second run with P2 tells
    for (const GuardedOutput& g : guards)
      if (g.block) fill(g, kCanary2, kFill2);
    kernel(guarded);
    for (size_t o = 0; o < n_out; ++o) {
      const GuardedOutput& g = guards[o];
      if (!g.block) continue;
      check_canaries(g, kCanary2, ctx, o, node);
      if (g.suspects.empty()) continue;
      std::vector<int64_t> unwritten = matching(g, refs[o].dtype, kFill2, &g.suspects);
      if (unwritten.empty()) continue;
      const int64_t first = unwritten.front();
      throw CheckError(defect_prefix(ctx) + "left " + std::to_string(unwritten.size()) + " of " +
                       std::to_string(refs[o].numel()) + " elements of output " + std::to_string(o) + " (inferred " +
                       inferred_str(refs[o]) + ") unwritten: first at element " + std::to_string(first) +
                       " (byte offset " + std::to_string(first * static_cast<int64_t>(itemsize(refs[o].dtype))) +
                       ")" + defect_suffix(node));
    }
  }

  for (size_t o = 0; o < n_out; ++o)
    if (guards[o].block) std::memcpy(ctx.outputs[o].data, guards[o].interior, guards[o].nbytes);
}

}  // namespace wok

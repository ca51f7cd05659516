// One build per key, shared by the kernel, CUDA-kernel, plan and CUDA-plan
// caches.
//
// Note [Compile once per key]
// Entries are found by a 128-bit hash and confirmed by the full signature
// (a collision is not ours). The first caller to miss on a signature builds
// the value outside the lock; callers racing on the same signature wait for
// that one build instead of starting their own. What the build produced is
// delivered to every waiter, also when it failed: an error value is handed
// to each of them, and an exception thrown by the build is rethrown in each
// of them (never a broken promise). A failed build is not kept, so a later
// call (strict mode lifted, space freed, a bug fixed) tries again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wok/runtime/signature.h"

namespace wok::jit {

// Result: the value a build produces, with `ok()` telling success
// (absl::StatusOr<...>).
template <typename Result>
class OnceCache {
 public:
  enum class Outcome { kHit, kBuilt };

  // The value for `signature` (hashed to `key`); on a miss, `build()` runs
  // once, here, while other callers of the same signature wait for it.
  template <typename Build>
  Result get(const Key128& key, std::string_view signature, Build&& build, Outcome* outcome = nullptr) {
    std::promise<Result> promise;
    uint64_t id = 0;
    {
      std::unique_lock lock(mu_);
      auto& bucket = entries_[key];
      for (const Entry& e : bucket) {
        if (e.signature != signature) continue;
        std::shared_future<Result> result = e.result;
        lock.unlock();
        if (outcome) *outcome = Outcome::kHit;
        return result.get();  // waits for a build in progress; rethrows its exception
      }
      id = ++next_id_;
      bucket.push_back({std::string(signature), promise.get_future().share(), id});
      ++count_;
    }
    if (outcome) *outcome = Outcome::kBuilt;
    try {
      Result result = build();
      promise.set_value(result);
      if (!result.ok()) forget(key, id);
      return result;
    } catch (...) {
      promise.set_exception(std::current_exception());
      forget(key, id);
      throw;
    }
  }

  // The value if a build of `signature` has finished successfully; never
  // waits and never builds.
  std::optional<Result> find(const Key128& key, std::string_view signature) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    for (const Entry& e : it->second) {
      if (e.signature != signature) continue;
      if (e.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
      try {
        Result r = e.result.get();
        if (r.ok()) return r;
      } catch (...) {
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return count_;
  }

  void clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
    count_ = 0;
  }

 private:
  struct Entry {
    std::string signature;
    std::shared_future<Result> result;
    uint64_t id;  // this build, not a later one of the same signature after clear()
  };

  void forget(const Key128& key, uint64_t id) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;  // cleared meanwhile
    auto& bucket = it->second;
    for (auto e = bucket.begin(); e != bucket.end(); ++e)
      if (e->id == id) {
        bucket.erase(e);
        --count_;
        return;
      }
  }

  mutable std::mutex mu_;
  std::unordered_map<Key128, std::vector<Entry>, Key128Hash> entries_;
  size_t count_ = 0;
  uint64_t next_id_ = 0;
};

}  // namespace wok::jit

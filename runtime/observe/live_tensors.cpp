#include "wok/runtime/observe/live_tensors.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "wok/runtime/evaluator.h"
#include "wok/runtime/fragment.h"
#include "wok/runtime/fragment_signature.h"
#include "wok/runtime/graph.h"
#include "wok/runtime/host_allocator.h"
#include "wok/runtime/observe/call_site.h"
#include "wok/runtime/observe/log.h"
#include "wok/runtime/observe/report.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/signature.h"

namespace wok::observe {

namespace detail {
constinit std::atomic<bool> g_track_live{false};
}  // namespace detail

namespace {

struct SiteKey {
  const char* file = nullptr;
  uint32_t line = 0, column = 0;
  const void* caller = nullptr;
  friend bool operator==(const SiteKey&, const SiteKey&) = default;
};
struct SiteKeyHash {
  size_t operator()(const SiteKey& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.file) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.line} << 32 | k.column) + 0xD1B54A32D192ED03ull + (h << 6) + (h >> 2);
    h ^= reinterpret_cast<uintptr_t>(k.caller) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// A call site, with the tensors it created that are alive now (bytes as
// their metadata says, views included: what growth compares).
struct Site {
  std::source_location loc{};
  const void* caller = nullptr;
  int64_t count = 0, bytes = 0;
};

struct Slot {
  const TensorImpl* impl = nullptr;  // null: free
  uint32_t site = 0;
  uint64_t seq = 0;  // registration order: the oldest holder of a Storage owns it
  int64_t bytes = 0;
};

// One program's evaluations, for the growth warning.
struct Growth {
  std::string name;
  int64_t last_live = -1, start_live = 0;
  int rises = 0;
  bool warned = false;
  std::vector<int64_t> start_count, start_bytes;  // per site, when the streak began
};

// Leaked: tensors die, and the WOK_REPORT printer runs, at exit.
struct Registry {
  std::mutex mu;
  std::vector<Slot> slots;  // slot i + 1 is slots[i]
  std::vector<uint32_t> free_slots;
  std::vector<Site> sites;
  std::unordered_map<SiteKey, uint32_t, SiteKeyHash> site_ids;
  uint64_t next_seq = 0;
  std::unordered_map<uint64_t, Growth> programs;
  std::vector<std::string> warnings;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

uint32_t site_id_locked(Registry& r, const std::source_location& loc, const void* caller) {
  // Sites are never forgotten, so a thread may remember its last one: a loop
  // creates its tensors at a few sites, and this skips the hash lookup.
  thread_local SiteKey last_key;
  thread_local uint32_t last_id = UINT32_MAX;
  const SiteKey key{loc.line() ? loc.file_name() : nullptr, loc.line(), loc.column(), caller};
  if (last_id != UINT32_MAX && key == last_key) return last_id;
  auto [it, fresh] = r.site_ids.try_emplace(key, static_cast<uint32_t>(r.sites.size()));
  if (fresh) r.sites.push_back({loc, caller});
  last_key = key;
  last_id = it->second;
  return last_id;
}

std::string site_label(const Site& s) {
  std::string label = site_str(s.loc, s.caller);
  return label.empty() ? "(unknown site)" : label;
}

int env_growth_evals() {
  if (const char* s = std::getenv("WOK_GROWTH_EVALS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v >= 2) return static_cast<int>(std::min<long>(v, 1 << 20));
  }
  return 16;
}

// ---- the report's snapshot ----------------------------------------------------

struct ReadyRow {
  int64_t tensors = 0, computing = 0, bytes = 0;
  std::string example;  // dtype and shape of the oldest tensor in the row
  uint64_t example_seq = UINT64_MAX;
};
struct PendingRow {
  int64_t tensors = 0, graphs = 0, nodes = 0, pinned = 0;
};
struct Snapshot {
  std::vector<Site> sites;
  std::unordered_map<uint32_t, ReadyRow> ready;
  std::unordered_map<uint32_t, PendingRow> pending;
  int64_t ready_tensors = 0, computing = 0, buffers = 0, buffer_bytes = 0;
  int64_t pending_tensors = 0, graphs = 0, nodes = 0, pinned = 0;
  std::vector<std::string> warnings;
};

std::string describe_meta(const TensorMeta& m) {
  std::string s = std::string(dtype_name(m.dtype)) + shape_str(m.shape);
  if (!m.device.is_cpu()) s += " " + m.device.str();
  return s;
}

// A ready leaf's buffer: its Storage, or the tensor itself while computing.
const void* leaf_key(const TensorImpl& t, int64_t& bytes) {
  if (const Storage* st = t.storage_if_done()) {
    bytes = static_cast<int64_t>(st->bytes());
    return st;
  }
  bytes = static_cast<int64_t>(t.meta().nbytes());
  return &t;
}

// Everything under the graph mutex (pending tensors' nodes) and the
// registry's (the tensors stay alive while it is held: a dying one waits in
// its destructor); no strings but the examples.
Snapshot take_snapshot() {
  Snapshot snap;
  Registry& r = registry();
  std::lock_guard graph(graph_mutex());  // before the registry's: Note [Evaluation and the graph mutex]
  std::lock_guard lock(r.mu);
  snap.sites = r.sites;
  snap.warnings = r.warnings;

  struct Owner {
    uint64_t seq;
    uint32_t site;
    int64_t bytes;
  };
  std::unordered_map<const Storage*, Owner> storages;
  std::vector<const Slot*> pending;
  for (const Slot& s : r.slots) {
    if (!s.impl) continue;
    const TensorImpl& t = *s.impl;
    if (!t.ready()) {
      pending.push_back(&s);
      continue;
    }
    ReadyRow& row = snap.ready[s.site];
    ++row.tensors;
    ++snap.ready_tensors;
    if (s.seq < row.example_seq) {
      row.example_seq = s.seq;
      row.example = describe_meta(t.meta());
    }
    if (const Storage* st = t.storage_if_done()) {
      auto [it, fresh] = storages.try_emplace(st, Owner{s.seq, s.site, static_cast<int64_t>(st->bytes())});
      if (!fresh && s.seq < it->second.seq) it->second = {s.seq, s.site, it->second.bytes};
    } else if (t.in_flight()) {  // its buffer is being written: charged at its size
      ++row.computing;
      ++snap.computing;
      row.bytes += s.bytes;
      snap.buffer_bytes += s.bytes;
    }
  }
  for (const auto& [st, owner] : storages) {
    snap.ready[owner.site].bytes += owner.bytes;
    snap.buffer_bytes += owner.bytes;
  }
  snap.buffers = static_cast<int64_t>(storages.size());

  // Pending graphs: the pending tensors no pending node reads.
  std::unordered_set<const TensorImpl*> read;
  for (const Slot* s : pending)
    for (const TensorImplPtr& in : s->impl->node()->inputs) read.insert(in.get());
  std::unordered_set<const Node*> all_nodes;
  std::unordered_set<const void*> all_leaves;
  std::unordered_set<const Node*> nodes;
  std::unordered_set<const void*> leaves;
  std::vector<const Node*> stack;
  for (const Slot* s : pending) {
    PendingRow& row = snap.pending[s->site];
    ++row.tensors;
    ++snap.pending_tensors;
    if (read.count(s->impl)) continue;
    ++row.graphs;
    ++snap.graphs;
    nodes.clear();
    leaves.clear();
    stack.assign(1, s->impl->node().get());
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!nodes.insert(n).second) continue;
      if (all_nodes.insert(n).second) ++snap.nodes;
      for (const TensorImplPtr& in : n->inputs) {
        if (!in->ready()) {
          stack.push_back(in->node().get());
          continue;
        }
        int64_t bytes = 0;
        const void* key = leaf_key(*in, bytes);
        if (leaves.insert(key).second) row.pinned += bytes;
        if (all_leaves.insert(key).second) snap.pinned += bytes;
      }
    }
    row.nodes += static_cast<int64_t>(nodes.size());
  }
  return snap;
}

constexpr size_t kMaxRows = 20;
constexpr size_t kSiteWidth = 44;

}  // namespace

void track_live_tensors(bool on) { detail::g_track_live.store(on, std::memory_order_relaxed); }

uint32_t register_live_tensor(const TensorImpl* t, const std::source_location& site, const void* caller) {
  std::source_location loc = site;
  if (!loc.line() && !caller) {
    const ThreadCallSite& now = t_call_site;
    if (now.site_open) loc = now.site;
    else caller = now.caller;
  }
  const int64_t bytes = static_cast<int64_t>(t->meta().nbytes());
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  const uint32_t id = site_id_locked(r, loc, caller);
  r.sites[id].count += 1;
  r.sites[id].bytes += bytes;
  uint32_t slot;
  if (!r.free_slots.empty()) {
    slot = r.free_slots.back();
    r.free_slots.pop_back();
  } else {
    r.slots.emplace_back();
    slot = static_cast<uint32_t>(r.slots.size());
  }
  r.slots[slot - 1] = {t, id, r.next_seq++, bytes};
  return slot;
}

void unregister_live_tensor(const TensorImpl* t, uint32_t slot) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  Slot& s = r.slots[slot - 1];
  if (s.impl != t) return;  // cannot happen: slots are given out once per tensor
  r.sites[s.site].count -= 1;
  r.sites[s.site].bytes -= s.bytes;
  s = Slot{};
  r.free_slots.push_back(slot);
}

int growth_evals() {
  static const int n = env_growth_evals();
  return n;
}

void note_evaluation(const Fragment& f) {
  thread_local std::string wiring;  // keeps its capacity from one evaluation to the next
  wiring.clear();
  append_fragment_wiring(wiring, f, /*with_attrs=*/false);
  const uint64_t program = hash128(wiring).lo;  // jit/recompile_reason.cpp's program id
  const int64_t live = HostAllocator::global().stats().current_bytes;
  const int n = growth_evals();
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  auto [it, fresh] = r.programs.try_emplace(program);
  Growth& g = it->second;
  if (fresh) g.name = program_name(f, program);
  if (g.warned) return;
  if (g.last_live >= 0 && live > g.last_live) {
    if (g.rises++ == 0) {
      g.start_live = g.last_live;
      g.start_count.resize(r.sites.size());
      g.start_bytes.resize(r.sites.size());
      for (size_t i = 0; i < r.sites.size(); ++i) {
        g.start_count[i] = r.sites[i].count;
        g.start_bytes[i] = r.sites[i].bytes;
      }
    }
  } else {
    g.rises = 0;
  }
  g.last_live = live;
  if (g.rises < n) return;
  g.warned = true;

  // The site whose live tensors grew most over the streak.
  const Site* top = nullptr;
  int64_t top_count = 0, top_bytes = 0;
  for (size_t i = 0; i < r.sites.size(); ++i) {
    const int64_t dc = r.sites[i].count - (i < g.start_count.size() ? g.start_count[i] : 0);
    const int64_t db = r.sites[i].bytes - (i < g.start_bytes.size() ? g.start_bytes[i] : 0);
    if (dc > 0 && (!top || db > top_bytes || (db == top_bytes && dc > top_count))) {
      top = &r.sites[i];
      top_count = dc;
      top_bytes = db;
    }
  }
  const Site top_site = top ? *top : Site{};
  std::string line = "live memory rose across " + std::to_string(n) + " evaluations of " + g.name + " (+" +
                     bytes_str(live - g.start_live) + ")";
  g.start_count = {};
  g.start_bytes = {};
  lock.unlock();

  // Symbolizing may run addr2line: with no lock held.
  if (top)
    line += "; top site: " + site_label(top_site) + " (+" + std::to_string(top_count) + " tensors, +" +
            bytes_str(top_bytes) + ")";
  std::fprintf(stderr, "wok: %s; see wok::memory_report()\n", line.c_str());
  lock.lock();
  r.warnings.push_back(std::move(line));
}

std::vector<std::string> growth_warnings() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.warnings;
}

void reset_growth() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.programs.clear();
  r.warnings.clear();
}

std::string memory_report_text() {
  const MemoryStats mem = HostAllocator::global().stats();
  std::string out = "live memory\n";
  out += "host allocator: " + bytes_str(mem.current_bytes) + " in live buffers (peak " + bytes_str(mem.peak_bytes) +
         "; " + bytes_str(mem.cached_bytes) + " cached for reuse, not live)\n";
  if (!tracking_live_tensors()) {
    out += "live tensors by call site: tracking is off; set WOK_REPORT=1, or call wok::track_live_tensors(true) "
           "or wok::collect_report(true)\n";
    return out;
  }
  Snapshot snap = take_snapshot();

  // Rows merge by label: sites the symbolizer cannot tell apart (one
  // function without debug info) read as one.
  std::map<std::string, ReadyRow> ready;
  for (const auto& [id, row] : snap.ready) {
    ReadyRow& m = ready[site_label(snap.sites[id])];
    m.tensors += row.tensors;
    m.computing += row.computing;
    m.bytes += row.bytes;
    if (row.example_seq < m.example_seq) {
      m.example_seq = row.example_seq;
      m.example = row.example;
    }
  }
  std::vector<std::pair<std::string, ReadyRow>> rows(ready.begin(), ready.end());
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes : a.second.tensors > b.second.tensors;
  });
  out += "live tensors: " + std::to_string(snap.ready_tensors) + " ready in " + std::to_string(snap.buffers) +
         " buffers (" + bytes_str(snap.buffer_bytes) + ")";
  if (snap.computing) out += ", " + std::to_string(snap.computing) + " being computed";
  out += ", " + std::to_string(snap.pending_tensors) + " pending\n";
  if (!rows.empty()) {
    out += "  " + pad("site (by bytes)", kSiteWidth) + pad("tensors", 10) + pad("bytes", 12) + "example\n";
    for (size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
      const ReadyRow& row = rows[i].second;
      out += "  " + pad(rows[i].first, kSiteWidth) + pad(std::to_string(row.tensors), 10) +
             pad(bytes_str(row.bytes), 12) + row.example +
             (row.computing ? " (" + std::to_string(row.computing) + " being computed)" : "") + "\n";
    }
    if (rows.size() > kMaxRows) {
      int64_t tensors = 0, bytes = 0;
      for (size_t i = kMaxRows; i < rows.size(); ++i) {
        tensors += rows[i].second.tensors;
        bytes += rows[i].second.bytes;
      }
      out += "  (" + std::to_string(rows.size() - kMaxRows) + " more sites: " + std::to_string(tensors) +
             " tensors, " + bytes_str(bytes) + ")\n";
    }
  }

  if (snap.pending_tensors) {
    std::map<std::string, PendingRow> pending;
    for (const auto& [id, row] : snap.pending) {
      PendingRow& m = pending[site_label(snap.sites[id])];
      m.tensors += row.tensors;
      m.graphs += row.graphs;
      m.nodes += row.nodes;
      m.pinned += row.pinned;
    }
    std::vector<std::pair<std::string, PendingRow>> prows(pending.begin(), pending.end());
    std::stable_sort(prows.begin(), prows.end(), [](auto& a, auto& b) {
      return a.second.pinned != b.second.pinned ? a.second.pinned > b.second.pinned : a.second.nodes > b.second.nodes;
    });
    out += "pending graphs: " + std::to_string(snap.graphs) + " (" + std::to_string(snap.pending_tensors) +
           " pending tensors), " + std::to_string(snap.nodes) + " nodes, pinning " + bytes_str(snap.pinned) + "\n";
    out += "  " + pad("site (by bytes pinned)", kSiteWidth) + pad("graphs", 8) + pad("tensors", 10) +
           pad("nodes", 8) + "pinned\n";
    for (size_t i = 0; i < prows.size() && i < kMaxRows; ++i) {
      const PendingRow& row = prows[i].second;
      out += "  " + pad(prows[i].first, kSiteWidth) + pad(std::to_string(row.graphs), 8) +
             pad(std::to_string(row.tensors), 10) + pad(std::to_string(row.nodes), 8) + bytes_str(row.pinned) + "\n";
    }
    if (prows.size() > kMaxRows) out += "  (" + std::to_string(prows.size() - kMaxRows) + " more sites)\n";
  }

  if (!snap.warnings.empty()) {
    out += "growth warnings (WOK_GROWTH_EVALS=" + std::to_string(growth_evals()) + ")\n";
    for (const std::string& w : snap.warnings) out += "  " + w + "\n";
  }
  return out;
}

}  // namespace wok::observe

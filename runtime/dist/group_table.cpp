#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "wok/runtime/dist/collective.h"
#include "wok/runtime/dist/comm_state.h"
#include "wok/runtime/error.h"

namespace wok::dist {

namespace {

struct Table {
  std::mutex mu;  // guards `groups` growth; CommState fields are guarded by mpi_mutex()
  std::deque<CommState> groups;  // deque: stable addresses
  bool initialized = false;
  bool with_mpi = false;
  bool finalized = false;
  std::mutex broken_mu;   // a leaf lock: taken under mpi_mutex() by failing collectives
  std::string broken;     // why every group is unusable; "" while healthy
};

Table& table() {
  static Table* t = new Table();  // leaked: used by atexit and stream threads
  return *t;
}

std::atomic<double>& timeout_seconds() {
  static std::atomic<double> t = [] {
    if (const char* s = std::getenv("WOK_DIST_TIMEOUT"); s && *s) {
      char* end = nullptr;
      double v = std::strtod(s, &end);
      if (end != s && v > 0) return v;
    }
    return 300.0;
  }();
  return t;
}

void check(const Mpi& m, int code, const char* call) {
  if (code != mpi::kSuccess) throw DistError("wok::dist: " + m.error_text(call, code));
}

// The three communicators of a group, from its data communicator.
void attach(CommState& g, const Mpi& m, mpi::Comm data) {
  g.data = data;
  check(m, m.api.Comm_set_errhandler(g.data, m.h.errors_return), "MPI_Comm_set_errhandler");
  check(m, m.api.Comm_dup(g.data, &g.control), "MPI_Comm_dup");
  check(m, m.api.Comm_dup(g.data, &g.alive), "MPI_Comm_dup");
  check(m, m.api.Comm_rank(g.data, &g.info.rank), "MPI_Comm_rank");
  check(m, m.api.Comm_size(g.data, &g.info.size), "MPI_Comm_size");
}

void finalize_at_exit() { finalize_groups(); }

}  // namespace

std::mutex& mpi_mutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

bool launched_with_peers(std::string* why) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"}) {
    if (const char* v = std::getenv(var); v && *v) {
      if (why) *why = std::string(var) + "=" + v;
      return true;
    }
  }
  return false;
}

void ensure_initialized() {
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (t.initialized) return;
  std::string why;
  if (!launched_with_peers(&why)) {
    CommState& world = t.groups.emplace_back();
    world.info = GroupInfo{0, 0, 1, "world", {0}};
    t.initialized = true;
    return;
  }
  absl::StatusOr<const Mpi*> loaded = mpi_library();
  if (!loaded.ok())
    throw DistError("wok::dist::init: this process was started by an MPI launcher (" + why +
                    ") but " + std::string(loaded.status().message()));
  const Mpi& m = **loaded;
  std::lock_guard mpi_lock(mpi_mutex());
  int already = 0;
  m.api.Initialized(&already);
  if (!already) {
    int provided = 0;
    check(m, m.api.Init_thread(nullptr, nullptr, mpi::kThreadSerialized, &provided), "MPI_Init_thread");
    if (provided < mpi::kThreadSerialized)
      throw DistError("wok::dist::init: " + m.path + " gives only thread level " + std::to_string(provided) +
                      "; wok needs MPI_THREAD_SERIALIZED (2)");
  }
  CommState& world = t.groups.emplace_back();
  world.info.id = 0;
  world.info.name = "world";
  mpi::Comm dup = nullptr;
  check(m, m.api.Comm_dup(m.h.comm_world, &dup), "MPI_Comm_dup");
  attach(world, m, dup);
  for (int r = 0; r < world.info.size; ++r) world.info.world_ranks.push_back(r);
  t.with_mpi = true;
  t.initialized = true;
  std::atexit(finalize_at_exit);
}

bool is_initialized() {
  Table& t = table();
  std::lock_guard lock(t.mu);
  return t.initialized;
}

void finalize_groups() {
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (!t.with_mpi || t.finalized) return;
  t.finalized = true;
  // After a failed collective, peers may be gone and MPI_Finalize (which
  // synchronizes with them) could wait forever.
  if (!broken_reason().empty()) return;
  const Mpi& m = mpi_api();
  std::lock_guard mpi_lock(mpi_mutex());
  drain_pending_sends();
  if (!broken_reason().empty()) return;
  int done = 0;
  m.api.Finalized(&done);
  if (!done) m.api.Finalize();
}

const Mpi& mpi_api() { return **mpi_library(); }

CommState& comm_state(int id) {
  ensure_initialized();
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (id < 0 || id >= static_cast<int>(t.groups.size()))
    throw ArgumentError("wok::dist: no group with id " + std::to_string(id));
  if (t.finalized) throw DistError("wok::dist: MPI was finalized (wok::dist::finalize); no collective can run");
  return t.groups[static_cast<size_t>(id)];
}

const GroupInfo& group_info(int id) { return comm_state(id).info; }

void mark_all_broken(const std::string& why) {
  Table& t = table();
  std::lock_guard lock(t.broken_mu);
  if (t.broken.empty()) t.broken = why;
}

std::string broken_reason() {
  Table& t = table();
  std::lock_guard lock(t.broken_mu);
  return t.broken;
}

int split_group(int parent_id, int color, int key) {
  CommState& parent = comm_state(parent_id);
  const std::string name = parent.info.name + "/split(color=" + std::to_string(color) + ")";
  // Every member's (color, key), through a collective with the arrival
  // handshake and its timeout, so that a missing member is reported rather
  // than waited for in MPI_Comm_split (which cannot time out).
  std::vector<int64_t> mine = {color, key}, all(2 * static_cast<size_t>(parent.info.size));
  if (parent.info.size > 1) {
    Shape in_shape = {2}, out_shape = {2 * static_cast<int64_t>(parent.info.size)};
    CollectiveCall call;
    call.kind = CollectiveKind::kAllGather;
    call.group = parent_id;
    call.dtype = DType::kInt64;
    call.in = mine.data();
    call.out = all.data();
    call.in_shape = &in_shape;
    call.out_shape = &out_shape;
    run_collective(call);
  } else {
    all = mine;
  }
  GroupInfo info;
  info.name = name;
  if (color < 0) {
    info.name = parent.info.name + "/split(none)";
  } else {
    // Members ordered by (key, parent rank), as MPI_Comm_split orders them.
    std::vector<std::pair<int64_t, int>> members;
    for (int r = 0; r < parent.info.size; ++r)
      if (all[2 * r] == color) members.push_back({all[2 * r + 1], r});
    std::sort(members.begin(), members.end());
    for (auto [k, r] : members) {
      if (r == parent.info.rank) info.rank = static_cast<int>(info.world_ranks.size());
      info.world_ranks.push_back(parent.info.world_ranks[r]);
    }
  }
  if (info.world_ranks.empty()) info.world_ranks.push_back(parent.info.world_ranks[parent.info.rank]);
  info.size = static_cast<int>(info.world_ranks.size());

  Table& t = table();
  mpi::Comm data = nullptr;
  if (parent.data) {
    const Mpi& m = mpi_api();
    std::lock_guard mpi_lock(mpi_mutex());
    check(m, m.api.Comm_split(parent.data, color < 0 ? mpi::kUndefined : color, key, &data), "MPI_Comm_split");
  }
  std::lock_guard lock(t.mu);
  CommState& g = t.groups.emplace_back();
  info.id = static_cast<int>(t.groups.size()) - 1;
  g.info = info;
  if (data && color >= 0) {
    const Mpi& m = mpi_api();
    std::lock_guard mpi_lock(mpi_mutex());
    attach(g, m, data);
    g.info.name = info.name;
  }
  return g.info.id;
}

double collective_timeout() { return timeout_seconds().load(std::memory_order_relaxed); }

void set_collective_timeout(double seconds) {
  if (!(seconds > 0)) throw ArgumentError("wok::dist::set_timeout: seconds must be positive, got " + std::to_string(seconds));
  timeout_seconds().store(seconds, std::memory_order_relaxed);
}

void broadcast_bytes(int group, void* data, size_t n, int root, std::string_view what) {
  CommState& g = comm_state(group);
  if (g.info.size == 1) return;
  Shape shape = {static_cast<int64_t>(n)};
  CollectiveCall call;
  call.kind = CollectiveKind::kBroadcast;
  call.group = group;
  call.peer = root;
  call.dtype = DType::kBool;  // one byte per element
  call.in = data;
  call.out = data;
  call.in_shape = &shape;
  call.out_shape = &shape;
  try {
    run_collective(call);
  } catch (const DistError& e) {
    throw DistError(std::string(what) + ": " + e.what());
  }
}

}  // namespace wok::dist

// What the collective engine (runtime/dist/collective.cpp) and the group
// table (runtime/dist/group_table.cpp) share: each group's communicators
// and health. Internal to runtime/dist.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "wok/runtime/dist/group_table.h"
#include "wok/runtime/dist/mpi_loader.h"

namespace wok::dist {

struct CommState {
  GroupInfo info;
  // Null for a group of one made without MPI. `data` carries collectives'
  // payloads, `control` the arrival handshakes, `alive` the messages that
  // name missing ranks after a timeout: separate communicators, so that no
  // message of one kind can match a receive of another.
  mpi::Comm data = nullptr, control = nullptr, alive = nullptr;
  uint64_t seq = 0;  // group collectives issued so far (handshake tags)
};

// Every MPI call of the process is made under this lock: MPI is initialized
// MPI_THREAD_SERIALIZED, and collectives must be issued in one order anyway.
std::mutex& mpi_mutex();
// The group's state; throws ArgumentError for an unknown id. Stable address.
CommState& comm_state(int id);
// The loaded library (ensure_initialized() has succeeded with peers).
const Mpi& mpi_api();
// After a collective fails every group is broken: a peer may be gone, and
// MPI offers no way to cancel what was posted. Later collectives raise at
// once, and MPI_Finalize is skipped at exit.
void mark_all_broken(const std::string& why);
std::string broken_reason();  // "" while healthy
// Waits, up to the timeout, for the buffered sends still in flight (before
// MPI_Finalize; under mpi_mutex()). Reports one never received on stderr.
void drain_pending_sends();

}  // namespace wok::dist

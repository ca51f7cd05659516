// The process's groups (wok::dist::Group is an id into this table) and the
// MPI communicators behind each: one for data, one for the arrival
// handshake, one for naming missing ranks after a timeout.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wok::dist {

struct GroupInfo {
  int id = 0;
  int rank = 0;
  int size = 1;
  std::string name;             // "world", "world/split(color=1)"
  std::vector<int> world_ranks;  // world rank of each member
};

// Starts MPI if this process was launched by mpirun (else the world is a
// group of one, and MPI is never touched). Idempotent, thread-safe.
// Throws DistError when launched by mpirun and Open MPI cannot be loaded.
void ensure_initialized();
bool is_initialized();
// Whether the environment says a launcher started this process with peers
// (OMPI_COMM_WORLD_SIZE, PMIX_RANK); `why` gets the variable seen.
bool launched_with_peers(std::string* why = nullptr);
void finalize_groups();

// Throws ArgumentError for an id that names no group.
const GroupInfo& group_info(int id);
// A new group from MPI_Comm_split over `parent` (collective over parent).
int split_group(int parent, int color, int key);

// The timeout every wait of a collective uses, in seconds.
double collective_timeout();
void set_collective_timeout(double seconds);

// Broadcasts `n` bytes from group rank `root` to every member, under the
// timeout, with `what` in any error (NCCL's unique id travels this way).
void broadcast_bytes(int group, void* data, size_t n, int root, std::string_view what);

}  // namespace wok::dist

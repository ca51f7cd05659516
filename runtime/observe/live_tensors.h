// Live memory by call site (wok::memory_report()): the tensors alive now,
// grouped by the line of user code that created them, the pending graphs
// that pin memory, and a warning when live memory keeps rising across the
// evaluations of one program.
//
// Note [Live tensors by call site]
// What is counted. While tracking is on, every TensorImpl constructed
// registers itself with the call site that created it: a pending tensor the
// site of its node (the user's line, Note [Call sites] in
// frontend/dispatch.h), a ready one (from_vector, rand, to) the thread's
// open scope (runtime/observe/call_site.h). A tensor keeps its site when it
// becomes ready, so an evaluated result is charged to the op that recorded
// it. The table charges bytes per Storage, once: views and aliases share
// their input's Storage, and it goes to the oldest tensor that holds it (the
// one that made it), whatever else refers to it. Pending tensors hold no
// storage; they are listed apart, per graph (a pending tensor that no other
// pending node reads), with the nodes behind it and the ready buffers it
// keeps alive ("pinned"), each counted once per graph. Intermediates that
// only a pending node holds are alive too, and count among the tensors of
// their site. The header's figure is the host allocator's: bytes in live
// buffers, which also holds kernels' scratch while they run, and never its
// cached (freed) blocks. Tensors created while tracking was off are not
// listed.
//
// Cost. Off, a TensorImpl's constructor pays one relaxed load and its
// destructor a test of a member that says whether it was registered. On,
// each construction and destruction takes one mutex for a slot in a vector
// (no allocation once the slot vector has grown) and a hash lookup of the
// site; the report walks the registry under the graph mutex, then turns
// sites into text without any lock held (symbolizing a return address can
// take milliseconds the first time).
//
// Growth. After each evaluation, while tracking, the evaluator calls
// note_evaluation with the fragment: the program is keyed by its ops and
// wiring (not shapes or dtypes; the id jit/recompile_reason.cpp gives it),
// and the allocator's live bytes are compared with those after the program's
// previous evaluation. When they rose at each of N evaluations in a row
// (WOK_GROWTH_EVALS, default 16), one line goes to stderr, once per program,
// naming the site whose tensors grew most over the streak. Requiring a rise
// every time keeps out the one-off growth of a warm-up (plans, caches that
// fill once) and a loop whose live memory only wobbles; caches are not live
// bytes (the allocator's cached blocks) or not host buffers at all (plans
// and kernels). A loop that keeps one result per step, on purpose or not,
// is exactly what it reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace wok {
class TensorImpl;
struct Fragment;
}  // namespace wok

namespace wok::observe {

namespace detail {
extern std::atomic<bool> g_track_live;
}  // namespace detail

inline bool tracking_live_tensors() { return detail::g_track_live.load(std::memory_order_relaxed); }
// On from the start with WOK_REPORT=1, or by wok::collect_report(true).
// Turning it off stops new registrations; tensors already tracked still
// leave the registry when they die.
void track_live_tensors(bool on);

// Called by TensorImpl's constructors while tracking: `site` / `caller` are
// the node's; both empty means this thread's open scope. Returns the slot
// (never 0) that the destructor gives back.
uint32_t register_live_tensor(const TensorImpl* t, const std::source_location& site, const void* caller);
void unregister_live_tensor(const TensorImpl* t, uint32_t slot);

// Called by the evaluator after each evaluation while tracking, with no
// lock held.
void note_evaluation(const Fragment& f);

// How many rising evaluations in a row make a growth warning
// (WOK_GROWTH_EVALS, default 16).
int growth_evals();
// The growth warnings so far, one line each; reset_growth() forgets them
// and every program's streak (wok::reset_report calls it).
std::vector<std::string> growth_warnings();
void reset_growth();

// The live-memory report: allocator figures, the live tensors by site
// (bytes first), pending graphs, growth warnings; while tracking is off, how
// to turn it on.
std::string memory_report_text();

}  // namespace wok::observe

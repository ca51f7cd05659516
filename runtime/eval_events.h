// What every evaluation reports, whoever runs it (the evaluator, a
// compiled function's replay): its counters and its kEvalBegin/kEvalEnd
// events. Internal: public headers do not include it.
#pragma once

#include <cstdint>
#include <string_view>

#include <absl/functional/function_ref.h>

#include "wok/runtime/stats.h"

namespace wok {

// Counts one evaluation of `nodes` nodes in wok::stats().
void count_evaluation(EvalReason reason, int64_t nodes);

// Runs `run` between the kEvalBegin and kEvalEnd events of one evaluation
// on `runner` (the events built only when someone listens; a runner that
// handed the work on names the one that ran it, set_fragment_delegate).
void observed_evaluation(EvalReason reason, int64_t nodes, std::string_view runner, bool async,
                         absl::FunctionRef<void()> run);

}  // namespace wok

// The IR verifier: what valid IR is after each stage of the pipeline
// (jit/pipeline.h). The driver runs it between stages under WOK_VERIFY=1
// or set_verify(true), so a stage that breaks an invariant is named at the
// stage that broke it rather than as a wrong result or a crash in replay.
#pragma once

#include "absl/status/status.h"
#include "wok/jit/pipeline.h"

namespace wok::jit {

// The graph's invariants: canonical ids in range, idempotent and of the
// same type as the values they stand for; alive nodes read only values of
// alive nodes or fragment inputs; constants and groups only on alive nodes;
// fusion groups compact, on one device and in one iteration space; the
// fragment's outputs alive.
absl::Status verify_graph(const PlanGraph& g);

// The plan's invariants at `level`. Drafted: each step's reads and writes
// agree with its node or kernel, each value has one writer, each read is
// written by some step or is a fragment input. Ordered: each read is
// written by an earlier step, and deps point backwards and cover those
// writers. Laned: lanes in range, and a step read from another lane
// signals. Placed: every value used is placed, each fragment output in an
// output or input storage, arena offsets aligned and within arena_bytes,
// and values live at the same time never share arena bytes.
absl::Status verify_plan(const Plan& plan, const PlanGraph& g, PlanLevel level);

// Both, as they apply after `stage`; the message names the stage.
absl::Status verify_stage(const PipelineState& s, const Stage& stage);

}  // namespace wok::jit

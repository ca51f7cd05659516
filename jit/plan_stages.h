// The plan-building stages of the pipeline (jit/pipeline.h), one file each:
// internal to jit/, called through the stage list.
#pragma once

#include "wok/jit/pipeline.h"

namespace wok::jit {

// jit/plan_steps.cpp: the steps (fused groups, materialized constants,
// nodes left to precompiled kernels), unordered, each with its reads and
// writes; then ordered so each runs after the steps it reads from.
void draft_steps(PipelineState& s);
void order_steps(PipelineState& s);
// jit/plan_lanes.cpp: which stream runs each step.
void assign_lanes(PipelineState& s);
// jit/plan_memory.cpp: where each value lives (Note [Memory planned once]).
void plan_memory(PipelineState& s);

}  // namespace wok::jit

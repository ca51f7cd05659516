// Fragments as text, so that a manifest can rebuild the kernels a run
// compiled without running the program again.
//
// Note [Fragment text format]
// One line of space-separated tokens, versioned by its first token:
//
//   F1 V <n> <value>...  N <n> <node>...  I <n> <id>...  O <n> <id>...
//   value:  <dtype>/<device>/<dims>       float32/cpu/10x100, 0-d: float32/cpu/-
//   node:   <op> <n> <in>... <n> <out>... <n> <attr>...
//   attr:   b0 b1 | i<int> | f<double bits, hex> | l<int>,<int>... | d<dtype>
//           | s<dtype>:<int, or double bits in hex> | t<string>
//
// Ops are named (looked up in the registry when read); attributes carry
// their type and exact bits. Op names and strings are %-escaped so that no
// token holds a space or a newline. Reading checks everything a plan
// builder relies on: known ops and dtypes, attribute types against the op's
// schema, value ids in range and defined before use, and output shapes and
// dtypes that agree with the op's own rules.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wok/runtime/fragment.h"

namespace wok::cache {

std::string serialize_fragment(const Fragment& fragment);

// A fragment read back, with the attributes its nodes point to.
using OwnedFragment = wok::OwnedFragment;

// InvalidArgument naming the first problem (and the token it was at);
// NotFound for an op this process has not registered.
absl::StatusOr<std::unique_ptr<OwnedFragment>> deserialize_fragment(std::string_view text);

}  // namespace wok::cache

// The canonical bytes of a fragment, which the plan cache, the persistent
// cache's manifests and recompile reasons key programs by.
#pragma once

#include <string>

#include "wok/runtime/fragment.h"

namespace wok {

// The canonical bytes of a fragment: ops, attributes, wiring, dtypes and
// shapes; not the values of constants (Note [Constants are parameters]).
std::string fragment_signature(const Fragment& f);

// fragment_signature(a) == fragment_signature(b), by comparing the two
// fragments rather than building the strings: how the plan cache confirms a
// plan found by a recorded key (Note [Signatures hashed while recording] in
// runtime/fragment.h).
bool same_signature(const Fragment& a, const Fragment& b);

// The value count, then the program's wiring as signature bytes: each node's
// op and value ids (with its attributes when `with_attrs`; a constant's value
// never), then the fragment's inputs and outputs. fragment_signature puts the
// values' dtypes, devices and shapes between the two; recompile reasons key a
// program by the wiring alone (jit/recompile_reason.cpp).
void append_fragment_wiring(std::string& s, const Fragment& f, bool with_attrs);

// "exp,mul (3 nodes) #1a2b3c4d": how the report, recompile reasons and the
// live-memory growth warning name a program, `id` being the hash of its
// wiring (append_fragment_wiring without attributes).
std::string program_name(const Fragment& f, uint64_t id);

}  // namespace wok

// WOK_DUMP_DIR: where the JIT writes what it compiled (fused groups, asm
// listings, pass-by-pass graphs, Graphviz files). Unset: nothing is written.
#pragma once

#include <string>

namespace wok {

bool dump_enabled();
// Writes `content` to WOK_DUMP_DIR/name; failures are reported once on
// stderr and otherwise ignored (a dump must never break a run).
void write_dump(const std::string& name, const std::string& content);

}  // namespace wok

// Where a code address is, in words: the call sites the named op functions
// capture are return addresses (Note [Call sites] in frontend/dispatch.h),
// turned into text only when a report, trace, log line or Graphviz dump
// shows them.
#pragma once

#include <string>

namespace wok::observe {

// "main.cpp:12 (main)" when addr2line finds line information, "main" (or
// "Foo::bar()") from the symbol table without it, "0x55d0..." when nothing
// knows the address, "" for nullptr. A return address is looked up one byte
// back, inside the call. Results are cached per address: the first lookup of
// an address runs addr2line (a few milliseconds).
std::string describe_code_address(const void* return_address);

}  // namespace wok::observe

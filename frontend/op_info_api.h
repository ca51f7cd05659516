// What ops are registered and what each one is, for custom-op trouble
// (docs/troubleshooting.md): "unknown op" (registration missing, or a name
// clash) and "runs on one device, fails on another" (no kernel bound there).
// The wok-ops tool prints the same for the built-in ops.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wok/runtime/op_catalog.h"

namespace wok {

// Every registered op's name, sorted: the built-in ones and the program's own.
std::vector<std::string> op_names();

// Schema, accepted dtypes, devices with kernels and how the JITs treat the
// op. Throws wok::RegistryError for an unknown name, with the nearest
// registered names ("did you mean ...").
OpInfo op_info(std::string_view name);
// The same as readable text, several lines (what `wok-ops NAME` prints).
std::string describe_op(std::string_view name);

}  // namespace wok

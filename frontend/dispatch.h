// Recording an op call into the lazy graph: the one place where inputs are
// checked, shapes and dtypes inferred, and errors given their context.
#pragma once

#include <source_location>
#include <span>
#include <string_view>
#include <vector>

#include "wok/frontend/tensor.h"
#include "wok/runtime/attrs.h"
#include "wok/runtime/op_registry.h"

namespace wok {

// Calls any registered op by name, built-in or user-registered:
//   wok::call("WeightedSum", {a, b}, {{"weight", 0.5}})
std::vector<Tensor> call(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                         std::source_location site = std::source_location::current());
// The same, for an op with exactly one output.
Tensor call1(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
             std::source_location site = std::source_location::current());

namespace detail {

// Note [Call sites]
// Every node remembers where the user's code recorded it, for traces,
// reports, logs and Graphviz dumps:
//  - wok::call / wok::call1 take a defaulted std::source_location and open a
//    CallSiteScope; a user may open one too (wok::CallSiteScope here;) to
//    label every op a function records with that line;
//  - the named op functions (wok::exp, wok::add, wok::softmax, the Tensor
//    methods) keep their plain signatures, since code takes their address:
//    each opens a CallerScope with its return address, a place in the
//    user's code that runtime/observe/symbolize.h turns into file:line (with
//    debug info) or a function name, only when something shows it.
// The outermost scope on a thread wins, so the ops a composite such as
// softmax records all carry the user's call, and an explicit CallSiteScope
// wins over return addresses. Operators (a * b) are inline: their return
// address is in the user's function too. Built with WOK_EVENTS=OFF, neither
// is kept.
class CallSiteScope {
 public:
  explicit CallSiteScope(const std::source_location& site = std::source_location::current()) noexcept;
  ~CallSiteScope();
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;
  // The site of the outermost open scope on this thread, or an empty one.
  static std::source_location current() noexcept;

 private:
  bool outermost_ = false;
};

// Records `op` on `inputs`; no work runs (unless a pending limit is hit).
// Errors from the op's rules are rethrown with the op's name and the
// inputs' dtypes and shapes.
std::vector<Tensor> record(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs);
Tensor record1(const RegisteredOp& op, std::span<const Tensor> inputs, Attrs attrs);
Tensor record1(const RegisteredOp& op, std::initializer_list<Tensor> inputs, Attrs attrs = {});

class CallerScope {
 public:
  explicit CallerScope(const void* return_address) noexcept;
  ~CallerScope();
  CallerScope(const CallerScope&) = delete;
  CallerScope& operator=(const CallerScope&) = delete;

 private:
  bool outermost_ = false;
};

// Opens a CallerScope with the enclosing function's return address; the
// first statement of every public op function (not inlinable into callers:
// they live in the library's .cpp files).
#define WOK_CALLER_SCOPE() \
  ::wok::detail::CallerScope wok_caller_scope_(__builtin_extract_return_addr(__builtin_return_address(0)))

// A built-in op by name, looked up once per call site.
#define WOK_BUILTIN_OP(name)                                                   \
  ([]() -> const ::wok::RegisteredOp& {                                        \
    static const ::wok::RegisteredOp& op = ::wok::OpRegistry::global().get(name); \
    return op;                                                                 \
  }())

// Binds attributes in schema order without name lookups (built-ins only).
Attrs positional_attrs(const RegisteredOp& op, std::vector<AttrValue> values);

// record1(full, {}, {value, Shape{}}) without the generic checks and rules:
// a 0-d CPU constant of value's dtype, recorded for every plain number in an
// expression (a * 2.0f), so kept cheap.
Tensor record_constant(const RegisteredOp& full, Scalar value);

// "a float32[2, 3], b float32[4]": how errors describe a call's inputs.
std::string describe_inputs(const RegisteredOp& op, std::span<const Tensor> inputs);

}  // namespace detail
}  // namespace wok

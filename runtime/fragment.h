// A Fragment is the unit of work handed to a backend: the pending nodes
// behind some tensors, in dependency order, over numbered values.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/graph.h"
#include "wok/runtime/storage.h"

namespace wok {

class RegisteredOp;

struct FragmentNode {
  const RegisteredOp* op;
  const Attrs* attrs;          // owned by the graph node, alive during evaluation
  std::vector<int> inputs;     // value ids
  std::vector<int> outputs;    // value ids
};

struct Fragment {
  std::vector<TensorMeta> values;
  std::vector<FragmentNode> nodes;  // topological order
  std::vector<int> inputs;          // values that are ready tensors, bound at run time
  std::vector<int> outputs;         // values the caller needs materialized

  std::string str() const;          // readable listing, for dumps and errors
};

// Runs fragments. The precompiled executor is one; the JIT is another.
class FragmentRunner {
 public:
  virtual ~FragmentRunner() = default;
  virtual std::string_view name() const = 0;
  // input_storage[i] backs values[fragment.inputs[i]]; returns one storage
  // per fragment.outputs, in order.
  virtual std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) = 0;
};

}  // namespace wok

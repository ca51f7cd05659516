// wok::onnx: runs ONNX models through wok's lazy graph.
//
//   wok::onnx::Model m = wok::onnx::load("model.onnx");
//   auto out = m.run({{"input", x}});   // name -> tensor
//
// run() records the model's nodes as ordinary wok ops, so a model is lazy,
// fused, cached on disk, recordable into warm-up manifests and runnable
// under WOK_STRICT=1 like hand-written code. Initializers become constants,
// converted once at load. A model that uses op types (or dtypes) wok does
// not have is refused at load with one error listing each of them and the
// nodes that use it.
//
// Built when Debian's libonnx-dev is present (CMake target wok::onnx).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>
#include "wok/frontend/tensor.h"
#include "wok/runtime/error.h"

namespace wok::onnx {

// A model file that cannot be read, fails ONNX's checker, or uses what wok
// does not support (the message lists every unsupported op type with its
// nodes). Shape and dtype errors of run()'s inputs are wok::ShapeError and
// wok::DTypeError, naming the input.
class ModelError : public Error {
 public:
  using Error::Error;
};

// A graph input or output as the model declares it. A dim the model leaves
// symbolic (or unknown) is -1; `dim_names` has the symbol or "".
struct ValueInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  bool has_shape = false;
};

class Model {
 public:
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // The inputs a caller must give (initializers that double as inputs are
  // left out: they keep their stored value unless given) and the outputs.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset() const;         // of the default ("ai.onnx") domain
  size_t node_count() const;
  const std::string& producer() const;

  // Records the graph on the given inputs and returns every graph output by
  // name; nothing runs until an output's data is read (or wok::eval).
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
  // The same with inputs and outputs in the model's order.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  struct State;

 private:
  explicit Model(std::unique_ptr<State> state);
  friend Model load(const std::string& path);
  friend Model load_from_bytes(const std::string& bytes, const std::string& origin);
  std::unique_ptr<State> state_;
};

// Reads, checks (ONNX's checker) and converts a model file.
Model load(const std::string& path);
// The same from a serialized ModelProto; `origin` names it in errors.
Model load_from_bytes(const std::string& bytes, const std::string& origin = "<bytes>");

// The ONNX op types wok imports, sorted.
std::vector<std::string> supported_op_types();

// A serialized TensorProto (a conformance test's input_0.pb, say) as a wok
// tensor; ModelError names the file when it is unreadable or of a dtype wok
// does not have.
Tensor read_tensor_file(const std::string& path);

}  // namespace wok::onnx

// ONNX's TensorProto and element types, as wok tensors and dtypes.
#pragma once
#include <optional>
#include <string>
#include "onnx/onnx_pb.h"
#include "wok/frontend/tensor.h"

namespace wok::onnx {

// The wok dtype of an ONNX element type (TensorProto::DataType), or nullopt
// for one wok does not have (uint8, float16, string, ...).
std::optional<DType> dtype_from_onnx(int32_t elem_type);
// "FLOAT", "UINT8", ...: ONNX's own spelling, for error messages.
std::string onnx_dtype_name(int32_t elem_type);

// The tensor a TensorProto holds. `base_dir` resolves external data (a
// location relative to the model file); `what` names the tensor in errors.
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& base_dir, const std::string& what);

}  // namespace wok::onnx

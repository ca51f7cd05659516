#include "wok/onnx/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>
#include "wok/frontend/creation.h"
#include "wok/onnx/model.h"

namespace wok::onnx {

using ::onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: return DType::kFloat32;
    case TensorProto::DOUBLE: return DType::kFloat64;
    case TensorProto::INT32: return DType::kInt32;
    case TensorProto::INT64: return DType::kInt64;
    case TensorProto::BOOL: return DType::kBool;
    case TensorProto::FLOAT16: return DType::kFloat16;
    case TensorProto::BFLOAT16: return DType::kBFloat16;
    case TensorProto::INT8: return DType::kInt8;
    case TensorProto::UINT8: return DType::kUInt8;
    case TensorProto::INT16: return DType::kInt16;
    case TensorProto::UINT16: return DType::kUInt16;
    case TensorProto::UINT32: return DType::kUInt32;
    case TensorProto::UINT64: return DType::kUInt64;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  return "type " + std::to_string(elem_type);
}

namespace {

// The bytes of a tensor stored beside the model (data_location EXTERNAL):
// "location" is relative to the model's folder, "offset" and "length" are
// optional.
std::string external_bytes(const TensorProto& proto, const std::string& base_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    else if (entry.key() == "offset") offset = std::stoll(entry.value());
    else if (entry.key() == "length") length = std::stoll(entry.value());
  }
  if (location.empty()) throw ModelError(what + ": external data without a location");
  const std::string path = base_dir.empty() ? location : base_dir + "/" + location;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(what + ": cannot open its external data file " + path);
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (length < 0) length = size - offset;
  if (offset < 0 || offset + length > size)
    throw ModelError(what + ": external data [" + std::to_string(offset) + ", " + std::to_string(offset + length) +
                     ") is outside " + path + " (" + std::to_string(size) + " bytes)");
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  return bytes;
}

// The typed repeated field that holds `dtype`'s values when raw_data is not
// used, copied into wok's element type.
template <typename T, typename Field>
std::vector<T> from_field(const Field& field) {
  return std::vector<T>(field.begin(), field.end());
}

// float16 and bfloat16 values sit in int32_data as their bit patterns.
template <typename Half, typename Field>
std::vector<Half> halves_from_bits(const Field& field) {
  std::vector<Half> out;
  out.reserve(field.size());
  for (int32_t bits : field) out.push_back(Half::from_bits(static_cast<uint16_t>(bits)));
  return out;
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& proto, const std::string& base_dir, const std::string& what) {
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) throw ModelError(what + ": dtype " + onnx_dtype_name(proto.data_type()) + " is not supported by wok");
  if (proto.has_segment()) throw ModelError(what + ": segmented tensors are not supported");
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) throw ModelError(what + ": negative dim " + std::to_string(d));
    shape.push_back(d);
    numel *= d;
  }
  const size_t item = itemsize(*dtype);
  std::string raw;
  const bool external = proto.data_location() == TensorProto::EXTERNAL;
  if (external) raw = external_bytes(proto, base_dir, what);
  if (external || proto.has_raw_data()) {
    const std::string& bytes = external ? raw : proto.raw_data();
    if (bytes.size() != static_cast<size_t>(numel) * item)
      throw ModelError(what + ": " + std::to_string(bytes.size()) + " bytes of data for " + std::to_string(numel) +
                       " elements of " + std::string(dtype_name(*dtype)));
    return detail::from_bytes(bytes.data(), shape, *dtype, Device::cpu(), numel);
  }
  // Typed fields (onnx.proto): bool, the integers of 32 bits or fewer and
  // the half types' bit patterns in int32_data; uint32 and uint64 in
  // uint64_data; int64 in int64_data; float and double in their own.
  auto make = [&](const auto& values) {
    if (static_cast<int64_t>(values.size()) != numel)
      throw ModelError(what + ": " + std::to_string(values.size()) + " values for shape " + shape_str(shape));
    return detail::from_bytes(values.data(), shape, *dtype, Device::cpu(), numel);
  };
  switch (*dtype) {
    case DType::kBool: {
      std::vector<uint8_t> v(proto.int32_data().begin(), proto.int32_data().end());
      return make(v);
    }
    case DType::kInt32: return make(from_field<int32_t>(proto.int32_data()));
    case DType::kInt64: return make(from_field<int64_t>(proto.int64_data()));
    case DType::kFloat32: return make(from_field<float>(proto.float_data()));
    case DType::kFloat64: return make(from_field<double>(proto.double_data()));
    case DType::kInt8: return make(from_field<int8_t>(proto.int32_data()));
    case DType::kUInt8: return make(from_field<uint8_t>(proto.int32_data()));
    case DType::kInt16: return make(from_field<int16_t>(proto.int32_data()));
    case DType::kUInt16: return make(from_field<uint16_t>(proto.int32_data()));
    case DType::kUInt32: return make(from_field<uint32_t>(proto.uint64_data()));
    case DType::kUInt64: return make(from_field<uint64_t>(proto.uint64_data()));
    case DType::kFloat16: return make(halves_from_bits<half>(proto.int32_data()));
    case DType::kBFloat16: return make(halves_from_bits<bfloat16>(proto.int32_data()));
  }
  throw ModelError(what + ": unreachable dtype");
}

Tensor read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open tensor file " + path);
  TensorProto proto;
  if (!proto.ParseFromIstream(&in)) throw ModelError(path + ": not a serialized onnx TensorProto");
  const size_t slash = path.rfind('/');
  return tensor_from_proto(proto, slash == std::string::npos ? "" : path.substr(0, slash), path);
}

}  // namespace wok::onnx

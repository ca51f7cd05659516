#include "wok/onnx/model.h"
#include "wok/onnx/host_fold.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include "onnx/checker.h"
#include "wok/onnx/converters.h"
#include "wok/onnx/tensor_proto.h"

namespace wok::onnx {

struct Model::State {
  ::onnx::ModelProto proto;
  std::string origin;
  std::string base_dir;
  int64_t opset = 0;
  std::vector<ValueInfo> inputs, outputs;
  std::unordered_map<std::string, Tensor> initializers;
  // Converted once at load; node i's converter.
  std::vector<const Converter*> node_converters;
  // Node i's host folding rule, or null (onnx/host_fold.h).
  std::vector<FoldFn> node_folds;
  // Every value of the graph has a slot, so that run() indexes a vector
  // rather than hashing names: node i reads node_inputs[i] (-1 for an
  // absent optional input) and writes node_outputs[i]; `initial` holds the
  // initializers in their slots.
  std::vector<std::vector<int>> node_inputs, node_outputs;
  std::vector<Tensor> initial;
  // Per slot: the host values of a small constant (HostValues), else null.
  std::vector<std::shared_ptr<const HostValues>> known;
  std::unordered_map<std::string, int> slot_of;
  std::vector<int> input_slots, output_slots;
};

namespace {

// What a model needs that wok lacks, gathered over the whole model so one
// error lists all of it.
class Unsupported {
 public:
  void add(const std::string& what, const std::string& user) { users_[what].push_back(user); }
  bool empty() const { return users_.empty(); }
  std::string str(const std::string& origin) const {
    std::ostringstream os;
    os << origin << ": wok cannot import this model; it uses:";
    for (const auto& [what, users] : users_) {
      os << "\n  " << what << ": ";
      for (size_t i = 0; i < users.size() && i < 6; ++i) os << (i ? ", " : "") << users[i];
      if (users.size() > 6) os << " and " << users.size() - 6 << " more";
    }
    return os.str();
  }

 private:
  std::map<std::string, std::vector<std::string>> users_;
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A graph input or output's declared type, or a reason it is not a tensor
// wok has.
ValueInfo value_info(const ::onnx::ValueInfoProto& v, Unsupported& unsupported, const char* role) {
  ValueInfo info;
  info.name = v.name();
  const std::string user = std::string(role) + " " + quoted(v.name());
  if (!v.type().has_tensor_type()) {
    const char* kind = v.type().has_sequence_type() ? "sequence" : v.type().has_optional_type() ? "optional"
                       : v.type().has_map_type()    ? "map"
                                                    : "non-tensor";
    unsupported.add(std::string(kind) + " values", user);
    return info;
  }
  const auto& tensor = v.type().tensor_type();
  if (auto dtype = dtype_from_onnx(tensor.elem_type())) info.dtype = *dtype;
  else unsupported.add("dtype " + onnx_dtype_name(tensor.elem_type()), user);
  if (tensor.has_shape()) {
    info.has_shape = true;
    for (const auto& d : tensor.shape().dim()) {
      info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      info.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return info;
}

// wok's errors keep their type with the node named in front.
[[noreturn]] void rethrow_for_node(const ::onnx::NodeProto& node) {
  const std::string where = "onnx " + describe_node(node) + ": ";
  try {
    throw;
  } catch (const ModelError&) {
    throw;
  } catch (const ShapeError& e) {
    throw ShapeError(where + e.what());
  } catch (const DTypeError& e) {
    throw DTypeError(where + e.what());
  } catch (const ArgumentError& e) {
    throw ArgumentError(where + e.what());
  } catch (const CaptureError& e) {
    throw CaptureError(where + e.what());
  } catch (const Error& e) {
    throw ModelError(where + e.what());
  }
}

// Constants up to this many elements have their values kept on the host.
constexpr int64_t kKnownValuesMax = 4096;

int slot(Model::State& s, const std::string& name) {
  auto [it, added] = s.slot_of.try_emplace(name, static_cast<int>(s.slot_of.size()));
  return it->second;
}

void assign_slots(Model::State& s, const ::onnx::GraphProto& g) {
  for (const auto& [name, t] : s.initializers) slot(s, name);
  for (const auto& v : g.input()) slot(s, v.name());
  for (const ::onnx::NodeProto& node : g.node()) {
    std::vector<int> in, out;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        in.push_back(-1);
        continue;
      }
      auto it = s.slot_of.find(name);
      if (it == s.slot_of.end())
        throw ModelError(s.origin + ": " + describe_node(node) + " reads " + quoted(name) + ", which no earlier node computes");
      in.push_back(it->second);
    }
    for (const std::string& name : node.output()) out.push_back(name.empty() ? -1 : slot(s, name));
    s.node_inputs.push_back(std::move(in));
    s.node_outputs.push_back(std::move(out));
  }
  for (const ValueInfo& info : s.inputs) s.input_slots.push_back(s.slot_of.at(info.name));
  for (const ValueInfo& info : s.outputs) {
    auto it = s.slot_of.find(info.name);
    if (it == s.slot_of.end()) throw ModelError(s.origin + ": output " + quoted(info.name) + " is computed by no node");
    s.output_slots.push_back(it->second);
  }
  s.initial.resize(s.slot_of.size());
  for (const auto& [name, t] : s.initializers) s.initial[static_cast<size_t>(s.slot_of.at(name))] = t;
  // Small constants' values, for the inputs converters read (shapes, axes,
  // pads, sizes): initializers, and Constant nodes with a tensor or int
  // value that nothing later overwrites.
  s.known.resize(s.slot_of.size());
  auto remember = [&](int slot, const Tensor& t) {
    if (t.numel() > kKnownValuesMax) return;
    auto v = std::make_shared<HostValues>();
    v->doubles = t.to_vector<double>();
    if (!is_floating(t.dtype())) v->ints = t.to_vector<int64_t>();
    s.known[static_cast<size_t>(slot)] = std::move(v);
  };
  for (const auto& [name, t] : s.initializers) remember(s.slot_of.at(name), t);
  for (int n = 0; n < g.node_size(); ++n) {
    const ::onnx::NodeProto& node = g.node(n);
    if (node.op_type() != "Constant" || node.output_size() != 1 || !s.node_converters[static_cast<size_t>(n)]) continue;
    NodeContext ctx(node, {}, {}, s.opset, s.base_dir);
    remember(s.node_outputs[static_cast<size_t>(n)][0], s.node_converters[static_cast<size_t>(n)]->convert(ctx).at(0));
  }
}

Model::State convert(::onnx::ModelProto proto, const std::string& origin, const std::string& base_dir) {
  Model::State s;
  s.origin = origin;
  s.base_dir = base_dir;
  try {
    ::onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    throw ModelError(origin + ": the onnx checker rejects the model: " + e.what());
  }
  for (const auto& op : proto.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") s.opset = op.version();
  const ::onnx::GraphProto& g = proto.graph();
  Unsupported unsupported;

  const ConverterTable& table = converters();
  for (const ::onnx::NodeProto& node : g.node()) {
    const std::string user = quoted(node_label(node));
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const Converter* converter = default_domain ? table.find(node.op_type()) : nullptr;
    if (!converter) {
      unsupported.add("op " + (default_domain ? "" : node.domain() + ".") + node.op_type(), user);
    } else if (converter->check) {
      const std::string reason = converter->check(node, s.opset);
      if (!reason.empty()) unsupported.add("op " + node.op_type() + " with " + reason, user);
    }
    s.node_converters.push_back(converter);
    s.node_folds.push_back(find_fold_rule(node.op_type()));
  }

  for (const ::onnx::TensorProto& init : g.initializer()) {
    if (!dtype_from_onnx(init.data_type())) {
      unsupported.add("dtype " + onnx_dtype_name(init.data_type()), "initializer " + quoted(init.name()));
      continue;
    }
    s.initializers[init.name()] = tensor_from_proto(init, base_dir, origin + ": initializer " + quoted(init.name()));
  }
  for (const auto& sparse : g.sparse_initializer()) unsupported.add("sparse initializers", quoted(sparse.values().name()));
  for (const auto& v : g.input()) {
    ValueInfo info = value_info(v, unsupported, "input");
    if (!s.initializers.count(v.name())) s.inputs.push_back(std::move(info));
  }
  for (const auto& v : g.output()) s.outputs.push_back(value_info(v, unsupported, "output"));
  if (!unsupported.empty()) throw ModelError(unsupported.str(origin));
  assign_slots(s, g);
  s.proto = std::move(proto);
  return s;
}

}  // namespace

Model::Model() = default;
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::Model(std::unique_ptr<State> state) : state_(std::move(state)) {}

static const Model::State& state_of(const std::unique_ptr<Model::State>& s) {
  if (!s) throw ModelError("wok::onnx::Model: this model is empty (default-constructed or moved from)");
  return *s;
}

const std::vector<ValueInfo>& Model::inputs() const { return state_of(state_).inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return state_of(state_).outputs; }
int64_t Model::opset() const { return state_of(state_).opset; }
size_t Model::node_count() const { return static_cast<size_t>(state_of(state_).proto.graph().node_size()); }
const std::string& Model::producer() const { return state_of(state_).proto.producer_name(); }

namespace {

// Checks a given input against the model's declaration of it.
void check_input(const Model::State& s, const ValueInfo& info, const Tensor& t) {
  if (!t.defined()) throw ArgumentError(s.origin + ": input " + quoted(info.name) + " is an undefined tensor");
  if (t.dtype() != info.dtype)
    throw DTypeError(s.origin + ": input " + quoted(info.name) + " is " + std::string(dtype_name(t.dtype())) +
                     ", the model declares " + std::string(dtype_name(info.dtype)));
  if (!info.has_shape) return;
  bool fits = static_cast<size_t>(t.ndim()) == info.shape.size();
  for (size_t d = 0; fits && d < info.shape.size(); ++d) fits = info.shape[d] < 0 || info.shape[d] == t.shape()[d];
  if (fits) return;
  std::string declared = "[";
  for (size_t d = 0; d < info.shape.size(); ++d)
    declared += (d ? ", " : "") + (info.shape[d] >= 0 ? std::to_string(info.shape[d])
                                   : info.dim_names[d].empty() ? "?" : info.dim_names[d]);
  throw ShapeError(s.origin + ": input " + quoted(info.name) + " has shape " + shape_str(t.shape()) +
                   ", the model declares " + declared + "]");
}

// Records every node on `values` (the slots, inputs and initializers set).
void record_nodes(const Model::State& s, std::vector<Tensor>& values) {
  const ::onnx::GraphProto& g = s.proto.graph();
  // Per slot, the values known without reading a tensor: the constants'
  // (except an initializer the caller replaced, one that doubles as an
  // input), then what host folding computes (Note [Folding shape subgraphs]).
  std::vector<const HostValues*> slot_known(s.known.size());
  for (size_t slot = 0; slot < slot_known.size(); ++slot)
    if (!s.initial[slot].defined() || values[slot].impl() == s.initial[slot].impl()) slot_known[slot] = s.known[slot].get();
  std::vector<std::shared_ptr<const HostValues>> folded_values;  // owns what slot_known points to beyond s.known
  for (int n = 0; n < g.node_size(); ++n) {
    const ::onnx::NodeProto& node = g.node(n);
    const std::vector<int>& in = s.node_inputs[static_cast<size_t>(n)];
    std::vector<Tensor> inputs(in.size());
    std::vector<const HostValues*> known(in.size(), nullptr);
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] < 0) continue;
      const size_t slot = static_cast<size_t>(in[i]);
      inputs[i] = values[slot];
      known[i] = slot_known[slot];
    }
    NodeContext ctx(node, std::move(inputs), std::move(known), s.opset, s.base_dir);
    Outputs outs;
    try {
      outs = s.node_converters[static_cast<size_t>(n)]->convert(ctx);
    } catch (const Error&) {
      rethrow_for_node(node);
    }
    const std::vector<int>& out = s.node_outputs[static_cast<size_t>(n)];
    std::vector<std::shared_ptr<const HostValues>> folded;
    try {
      folded = fold_on_host(s.node_folds[static_cast<size_t>(n)], ctx, outs, kKnownValuesMax);
    } catch (const Error&) {
      rethrow_for_node(node);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] < 0) continue;
      if (i >= outs.size()) ctx.fail("output " + std::to_string(i) + " (" + quoted(node.output(static_cast<int>(i))) + ") is not supported");
      values[static_cast<size_t>(out[i])] = std::move(outs[i]);
      // A Constant node's values were read at load; any other node's are
      // what folding found, or unknown.
      const HostValues*& k = slot_known[static_cast<size_t>(out[i])];
      if (i < folded.size()) {
        k = folded[i].get();
        if (k) folded_values.push_back(folded[i]);
      } else if (node.op_type() != "Constant") {
        k = nullptr;
      }
    }
  }
}

}  // namespace

std::map<std::string, Tensor> Model::run(const std::map<std::string, Tensor>& given) const {
  const State& s = state_of(state_);
  std::vector<Tensor> values = s.initial;
  for (const auto& [name, t] : given) {
    auto it = s.slot_of.find(name);
    const bool is_input = it != s.slot_of.end() &&
                          (s.initializers.count(name) ||
                           std::find(s.input_slots.begin(), s.input_slots.end(), it->second) != s.input_slots.end());
    if (!is_input) {
      std::string names;
      for (const ValueInfo& info : s.inputs) names += (names.empty() ? "" : ", ") + quoted(info.name);
      throw ArgumentError(s.origin + ": the model has no input " + quoted(name) + "; its inputs are " + names);
    }
    values[static_cast<size_t>(it->second)] = t;
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    auto it = given.find(s.inputs[i].name);
    if (it == given.end()) throw ArgumentError(s.origin + ": input " + quoted(s.inputs[i].name) + " is required");
    check_input(s, s.inputs[i], it->second);
  }
  record_nodes(s, values);
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < s.outputs.size(); ++i) result[s.outputs[i].name] = values[static_cast<size_t>(s.output_slots[i])];
  return result;
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) const {
  const State& s = state_of(state_);
  if (inputs.size() != s.inputs.size())
    throw ArgumentError(s.origin + ": " + std::to_string(inputs.size()) + " inputs given, the model takes " +
                        std::to_string(s.inputs.size()));
  std::vector<Tensor> values = s.initial;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(s, s.inputs[i], inputs[i]);
    values[static_cast<size_t>(s.input_slots[i])] = inputs[i];
  }
  record_nodes(s, values);
  std::vector<Tensor> ordered;
  for (int slot : s.output_slots) ordered.push_back(values[static_cast<size_t>(slot)]);
  return ordered;
}

Model load_from_bytes(const std::string& bytes, const std::string& origin) {
  ::onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) throw ModelError(origin + ": not a serialized onnx ModelProto");
  return Model(std::make_unique<Model::State>(convert(std::move(proto), origin, "")));
}

Model load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open onnx model " + path);
  ::onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&in)) throw ModelError(path + ": not a serialized onnx ModelProto");
  const size_t slash = path.rfind('/');
  const std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return Model(std::make_unique<Model::State>(convert(std::move(proto), path, base_dir)));
}

std::vector<std::string> supported_op_types() { return converters().op_types(); }

}  // namespace wok::onnx

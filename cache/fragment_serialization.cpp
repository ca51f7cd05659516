#include "wok/cache/fragment_serialization.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "wok/runtime/error.h"
#include "wok/runtime/op_registry.h"

namespace wok::cache {

namespace {

// Bounds on what a record may ask a reader to allocate.
constexpr int64_t kMaxValues = 1 << 20;
constexpr int64_t kMaxRank = 64;
constexpr int64_t kMaxList = 1 << 20;

bool plain(unsigned char ch) { return ch > 0x20 && ch < 0x7f && ch != '%'; }

std::string escape(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (plain(ch)) {
      out.push_back(static_cast<char>(ch));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return out.empty() ? "%" : out;  // a lone % is the empty string
}

std::optional<std::string> unescape(std::string_view s) {
  if (s == "%") return std::string();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return std::nullopt;
    auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || end != s.data() + i + 3) return std::nullopt;
    out.push_back(static_cast<char>(v));
    i += 2;
  }
  return out;
}

std::string hex64(uint64_t bits) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits));
  return buf;
}

std::string double_bits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return hex64(bits);
}

std::string join_ints(const std::vector<int64_t>& v, char sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s.push_back(sep);
    s += std::to_string(v[i]);
  }
  return s;
}

std::string attr_token(const AttrValue& v) {
  struct Writer {
    std::string operator()(bool b) const { return b ? "b1" : "b0"; }
    std::string operator()(int64_t i) const { return "i" + std::to_string(i); }
    std::string operator()(double d) const { return "f" + double_bits(d); }
    std::string operator()(const std::vector<int64_t>& l) const { return "l" + join_ints(l, ','); }
    std::string operator()(DType t) const { return "d" + std::string(dtype_name(t)); }
    std::string operator()(const Scalar& s) const {
      std::string head = "s" + std::string(dtype_name(s.dtype())) + ":";
      return head + (is_floating(s.dtype()) ? double_bits(s.as_double()) : std::to_string(s.to<int64_t>()));
    }
    std::string operator()(const std::string& s) const { return "t" + escape(s); }
  };
  return std::visit(Writer{}, v);
}

// Reads tokens left to right; every failure says which token.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  absl::Status error(const std::string& what) const {
    return absl::InvalidArgumentError("fragment record, token " + std::to_string(index_) + ": " + what);
  }
  bool next(std::string_view* out) {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find(' ', pos_);
    if (end == std::string_view::npos) end = text_.size();
    *out = text_.substr(pos_, end - pos_);
    pos_ = end;
    ++index_;
    return true;
  }
  bool at_end() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    return pos_ >= text_.size();
  }
  absl::Status expect(std::string_view word) {
    std::string_view t;
    if (!next(&t) || t != word) return error("expected '" + std::string(word) + "'");
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> integer(int64_t lo, int64_t hi) {
    std::string_view t;
    if (!next(&t)) return error("record ends early");
    return parse_int(t, lo, hi);
  }
  absl::StatusOr<int64_t> parse_int(std::string_view t, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) return error("'" + std::string(t) + "' is not an integer");
    if (v < lo || v > hi)
      return error(std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int index_ = 0;
};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

absl::StatusOr<uint64_t> parse_hex64(const Reader& r, std::string_view t) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 16);
  if (t.size() != 16 || ec != std::errc() || end != t.data() + t.size())
    return r.error("'" + std::string(t) + "' is not 16 hex digits");
  return v;
}

absl::StatusOr<double> parse_double_bits(const Reader& r, std::string_view t) {
  absl::StatusOr<uint64_t> bits = parse_hex64(r, t);
  if (!bits.ok()) return bits.status();
  double d;
  std::memcpy(&d, &*bits, sizeof d);
  return d;
}

absl::StatusOr<DType> parse_dtype_token(const Reader& r, std::string_view t) {
  std::optional<DType> d = parse_dtype(t);
  if (!d) return r.error("unknown dtype '" + std::string(t) + "'");
  return *d;
}

absl::StatusOr<AttrValue> parse_attr(const Reader& r, std::string_view t) {
  if (t.empty()) return r.error("empty attribute");
  std::string_view body = t.substr(1);
  switch (t[0]) {
    case 'b':
      if (body != "0" && body != "1") return r.error("bad bool '" + std::string(t) + "'");
      return AttrValue(body == "1");
    case 'i': {
      absl::StatusOr<int64_t> v =
          r.parse_int(body, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      if (!v.ok()) return v.status();
      return AttrValue(*v);
    }
    case 'f': {
      absl::StatusOr<double> d = parse_double_bits(r, body);
      if (!d.ok()) return d.status();
      return AttrValue(*d);
    }
    case 'l': {
      std::vector<int64_t> list;
      std::vector<std::string_view> parts = split(body, ',');
      if (static_cast<int64_t>(parts.size()) > kMaxList) return r.error("list too long");
      for (std::string_view p : parts) {
        absl::StatusOr<int64_t> v =
            r.parse_int(p, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
        if (!v.ok()) return v.status();
        list.push_back(*v);
      }
      return AttrValue(std::move(list));
    }
    case 'd': {
      absl::StatusOr<DType> d = parse_dtype_token(r, body);
      if (!d.ok()) return d.status();
      return AttrValue(*d);
    }
    case 's': {
      size_t colon = body.find(':');
      if (colon == std::string_view::npos) return r.error("scalar without ':'");
      absl::StatusOr<DType> d = parse_dtype_token(r, body.substr(0, colon));
      if (!d.ok()) return d.status();
      std::string_view v = body.substr(colon + 1);
      if (is_floating(*d)) {
        absl::StatusOr<double> x = parse_double_bits(r, v);
        if (!x.ok()) return x.status();
        // float32 scalars hold a float's value; cast() rounds nothing then.
        return AttrValue(Scalar(*x).cast(*d));
      }
      absl::StatusOr<int64_t> x =
          r.parse_int(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      if (!x.ok()) return x.status();
      return AttrValue(Scalar(*x).cast(*d));
    }
    case 't': {
      std::optional<std::string> s = unescape(body);
      if (!s) return r.error("bad escape in string attribute");
      return AttrValue(std::move(*s));
    }
    default:
      return r.error("unknown attribute kind '" + std::string(1, t[0]) + "'");
  }
}

absl::StatusOr<TensorMeta> parse_meta(const Reader& r, std::string_view t) {
  std::vector<std::string_view> parts = split(t, '/');
  if (parts.size() != 3) return r.error("value '" + std::string(t) + "' is not dtype/device/dims");
  TensorMeta m;
  absl::StatusOr<DType> d = parse_dtype_token(r, parts[0]);
  if (!d.ok()) return d.status();
  m.dtype = *d;
  try {
    m.device = Device::parse(parts[1]);
  } catch (const Error& e) {
    return r.error(e.what());
  }
  if (parts[2] != "-") {
    std::vector<std::string_view> dims = split(parts[2], 'x');
    if (static_cast<int64_t>(dims.size()) > kMaxRank) return r.error("rank too large");
    for (std::string_view dim : dims) {
      absl::StatusOr<int64_t> v = r.parse_int(dim, 0, int64_t{1} << 48);
      if (!v.ok()) return v.status();
      m.shape.push_back(*v);
    }
  }
  return m;
}

absl::StatusOr<std::vector<int>> parse_ids(Reader& r, int64_t max_count, int64_t num_values) {
  absl::StatusOr<int64_t> n = r.integer(0, max_count);
  if (!n.ok()) return n.status();
  std::vector<int> ids;
  for (int64_t i = 0; i < *n; ++i) {
    absl::StatusOr<int64_t> v = r.integer(0, num_values - 1);
    if (!v.ok()) return v.status();
    ids.push_back(static_cast<int>(*v));
  }
  return ids;
}

// The node's outputs must be what its op says they are.
absl::Status check_node(const Reader& r, const Fragment& f, const FragmentNode& n) {
  const OpDef& def = n.op->def();
  std::vector<Shape> in_shapes;
  std::vector<DType> in_dtypes;
  for (int v : n.inputs) {
    in_shapes.push_back(f.values[v].shape);
    in_dtypes.push_back(f.values[v].dtype);
  }
  try {
    std::vector<Shape> shapes = def.infer_shape(in_shapes, *n.attrs);
    std::vector<DType> dtypes = def.infer_dtype(in_dtypes, *n.attrs);
    if (shapes.size() != n.outputs.size() || dtypes.size() != n.outputs.size())
      return r.error("op '" + def.name + "' gives " + std::to_string(shapes.size()) + " outputs, the record has " +
                     std::to_string(n.outputs.size()));
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const TensorMeta& m = f.values[n.outputs[i]];
      if (m.shape != shapes[i] || m.dtype != dtypes[i])
        return r.error("op '" + def.name + "' output " + std::to_string(i) + " is " +
                       std::string(dtype_name(dtypes[i])) + shape_str(shapes[i]) + ", the record says " +
                       std::string(dtype_name(m.dtype)) + shape_str(m.shape));
    }
  } catch (const Error& e) {
    return r.error("op '" + def.name + "' rejects its recorded inputs: " + e.what());
  }
  return absl::OkStatus();
}

}  // namespace

std::string serialize_fragment(const Fragment& f) {
  std::string s = "F1";
  auto word = [&s](std::string_view w) {
    s.push_back(' ');
    s.append(w);
  };
  auto number = [&](size_t n) { word(std::to_string(n)); };
  auto ids = [&](std::span<const int> v) {
    number(v.size());
    for (int id : v) word(std::to_string(id));
  };
  word("V");
  number(f.values.size());
  for (const TensorMeta& m : f.values) {
    std::string meta(dtype_name(m.dtype));
    meta += '/';
    meta += m.device.str();
    meta += '/';
    meta += m.shape.empty() ? std::string("-") : join_ints(m.shape, 'x');
    word(meta);
  }
  word("N");
  number(f.nodes.size());
  for (const FragmentNode& n : f.nodes) {
    word(escape(n.op->name()));
    ids(n.inputs);
    ids(n.outputs);
    number(n.attrs->size());
    for (size_t i = 0; i < n.attrs->size(); ++i) word(attr_token(n.attrs->at(i)));
  }
  word("I");
  ids(f.inputs);
  word("O");
  ids(f.outputs);
  return s;
}

absl::StatusOr<std::unique_ptr<OwnedFragment>> deserialize_fragment(std::string_view text) {
  Reader r(text);
  auto out = std::make_unique<OwnedFragment>();
  Fragment& f = out->fragment;
  if (absl::Status s = r.expect("F1"); !s.ok()) return r.error("not a version-1 fragment record");
  if (absl::Status s = r.expect("V"); !s.ok()) return s;
  absl::StatusOr<int64_t> nv = r.integer(0, kMaxValues);
  if (!nv.ok()) return nv.status();
  for (int64_t i = 0; i < *nv; ++i) {
    std::string_view t;
    if (!r.next(&t)) return r.error("record ends inside the values");
    absl::StatusOr<TensorMeta> m = parse_meta(r, t);
    if (!m.ok()) return m.status();
    f.values.push_back(std::move(*m));
  }
  // Inputs come last in the text but are defined first; read the nodes,
  // then check the order of definitions once the inputs are known.
  if (absl::Status s = r.expect("N"); !s.ok()) return s;
  absl::StatusOr<int64_t> nn = r.integer(0, kMaxValues);
  if (!nn.ok()) return nn.status();
  const OpRegistry& registry = OpRegistry::global();
  for (int64_t i = 0; i < *nn; ++i) {
    std::string_view t;
    if (!r.next(&t)) return r.error("record ends inside the nodes");
    std::optional<std::string> name = unescape(t);
    if (!name) return r.error("bad escape in op name");
    const RegisteredOp* op = registry.find(*name);
    if (!op) return absl::NotFoundError("fragment record uses op '" + *name + "', which is not registered here");
    FragmentNode node{op, nullptr, {}, {}};
    absl::StatusOr<std::vector<int>> ins = parse_ids(r, kMaxList, *nv);
    if (!ins.ok()) return ins.status();
    absl::StatusOr<std::vector<int>> outs = parse_ids(r, kMaxList, *nv);
    if (!outs.ok()) return outs.status();
    node.inputs.assign(ins->begin(), ins->end());
    node.outputs.assign(outs->begin(), outs->end());
    const std::vector<AttrSpec>& specs = op->def().attrs;
    absl::StatusOr<int64_t> na = r.integer(0, kMaxList);
    if (!na.ok()) return na.status();
    if (*na != static_cast<int64_t>(specs.size()))
      return r.error("op '" + *name + "' has " + std::to_string(specs.size()) + " attributes, the record " +
                     std::to_string(*na));
    std::vector<AttrValue> values;
    for (const AttrSpec& spec : specs) {
      if (!r.next(&t)) return r.error("record ends inside attributes");
      absl::StatusOr<AttrValue> v = parse_attr(r, t);
      if (!v.ok()) return v.status();
      if (attr_value_type(*v) != spec.type)
        return r.error("attribute '" + spec.name + "' of '" + *name + "' must be " +
                       std::string(attr_type_name(spec.type)));
      values.push_back(std::move(*v));
    }
    out->attrs.push_back(std::make_unique<Attrs>(&specs, std::move(values)));
    node.attrs = out->attrs.back().get();
    f.nodes.push_back(std::move(node));
  }
  if (absl::Status s = r.expect("I"); !s.ok()) return s;
  absl::StatusOr<std::vector<int>> ins = parse_ids(r, *nv, *nv);
  if (!ins.ok()) return ins.status();
  f.inputs = std::move(*ins);
  if (absl::Status s = r.expect("O"); !s.ok()) return s;
  absl::StatusOr<std::vector<int>> outs = parse_ids(r, *nv, *nv);
  if (!outs.ok()) return outs.status();
  f.outputs = std::move(*outs);
  if (!r.at_end()) return r.error("unexpected text after the outputs");

  // Each value is defined once (an input or one node's output) before use.
  std::vector<bool> defined(f.values.size(), false);
  for (int v : f.inputs) {
    if (defined[v]) return r.error("value %" + std::to_string(v) + " is an input twice");
    defined[v] = true;
  }
  for (const FragmentNode& n : f.nodes) {
    for (int v : n.inputs)
      if (!defined[v])
        return r.error("op '" + n.op->name() + "' reads %" + std::to_string(v) + " before it is defined");
    if (n.inputs.size() < n.op->def().inputs.size() ||
        (!n.op->def().variadic_inputs && n.inputs.size() != n.op->def().inputs.size()))
      return r.error("op '" + n.op->name() + "' takes " + std::to_string(n.op->def().inputs.size()) +
                     " inputs, the record gives " + std::to_string(n.inputs.size()));
    for (int v : n.outputs) {
      if (defined[v]) return r.error("value %" + std::to_string(v) + " is defined twice");
      defined[v] = true;
    }
    if (absl::Status s = check_node(r, f, n); !s.ok()) return s;
  }
  if (f.outputs.empty()) return r.error("fragment has no outputs");
  for (int v : f.outputs)
    if (!defined[v]) return r.error("output %" + std::to_string(v) + " is never defined");
  return out;
}

}  // namespace wok::cache

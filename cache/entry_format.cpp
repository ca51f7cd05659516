#include "wok/cache/entry_format.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "wok/cache/cpu_feature_mask.h"

namespace wok::cache {

namespace {

// Field tags. Unknown tags are skipped, so a later writer may add fields
// without a new format version as long as readers need not understand them.
enum EntryTag : uint16_t {
  kTagWokVersion = 1,
  kTagGenerator = 2,
  kTagCompiler = 3,
  kTagBackend = 4,
  kTagIsa = 5,
  kTagCpuFeatures = 6,
  kTagSignature = 7,
  kTagDescription = 8,
  kTagCreated = 9,
  kTagDetail = 10,  // name '\0' value
};

template <typename T>
void put(std::string& out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof v);  // x86-64: little-endian
}

template <typename T>
T get(std::string_view bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

void put_field(std::string& out, EntryTag tag, std::string_view value) {
  put<uint16_t>(out, tag);
  put<uint32_t>(out, static_cast<uint32_t>(value.size()));
  out.append(value);
}

template <typename T>
std::string raw(T v) {
  std::string s;
  put(s, v);
  return s;
}

uint64_t checksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

absl::Status damaged(std::string what) { return absl::DataLossError(std::move(what)); }

}  // namespace

std::string EntryHeader::detail(std::string_view name) const {
  for (const auto& [k, v] : details)
    if (k == name) return v;
  return "";
}

std::string encode_entry(const EntryHeader& h, std::span<const uint8_t> payload) {
  std::string fields;
  put_field(fields, kTagWokVersion, h.wok_version);
  put_field(fields, kTagGenerator, h.generator);
  put_field(fields, kTagCompiler, h.compiler);
  put_field(fields, kTagBackend, h.backend);
  put_field(fields, kTagIsa, h.isa);
  put_field(fields, kTagCpuFeatures, raw(h.cpu_features));
  put_field(fields, kTagSignature, h.signature);
  put_field(fields, kTagDescription, h.description);
  put_field(fields, kTagCreated, raw(h.created_unix));
  for (const auto& [name, value] : h.details) put_field(fields, kTagDetail, name + '\0' + value);

  std::string_view body(reinterpret_cast<const char*>(payload.data()), payload.size());
  std::string out(kEntryMagic, sizeof kEntryMagic);
  put<uint32_t>(out, h.format_version);
  put<uint32_t>(out, static_cast<uint32_t>(fields.size()));
  put<uint64_t>(out, body.size());
  put<uint64_t>(out, checksum(body));
  out += fields;
  put<uint64_t>(out, checksum(out));
  out += body;
  return out;
}

absl::StatusOr<DecodedEntry> decode_entry(std::string_view file) {
  if (file.size() < kEntryPrefixBytes + 8)
    return damaged("not a cache entry: " + std::to_string(file.size()) + " bytes is shorter than any entry");
  if (std::memcmp(file.data(), kEntryMagic, sizeof kEntryMagic) != 0)
    return damaged("not a cache entry: wrong magic number");
  auto version = get<uint32_t>(file, 8);
  if (version != kEntryFormatVersion)
    return damaged("entry format version " + std::to_string(version) + ", this wok reads version " +
                   std::to_string(kEntryFormatVersion));
  uint64_t field_bytes = get<uint32_t>(file, 12);
  uint64_t payload_size = get<uint64_t>(file, 16);
  uint64_t payload_sum = get<uint64_t>(file, 24);
  if (field_bytes > kMaxEntryBytes || payload_size > kMaxEntryBytes)
    return damaged("header gives impossible sizes (fields " + std::to_string(field_bytes) + ", payload " +
                   std::to_string(payload_size) + " bytes)");
  uint64_t want_size = kEntryPrefixBytes + field_bytes + 8 + payload_size;
  if (file.size() != want_size)
    return damaged((file.size() < want_size ? "truncated: " : "trailing bytes: ") + std::to_string(file.size()) +
                   " bytes, the header says " + std::to_string(want_size));
  size_t header_end = kEntryPrefixBytes + field_bytes;
  if (checksum(file.substr(0, header_end)) != get<uint64_t>(file, header_end))
    return damaged("header checksum mismatch");
  std::string_view payload = file.substr(header_end + 8);
  if (checksum(payload) != payload_sum) return damaged("payload checksum mismatch");

  DecodedEntry e;
  e.payload = payload;
  e.header.format_version = version;
  size_t at = kEntryPrefixBytes;
  while (at < header_end) {
    if (header_end - at < 6) return damaged("field block ends inside a field header");
    auto tag = get<uint16_t>(file, at);
    auto size = get<uint32_t>(file, at + 2);
    at += 6;
    if (size > header_end - at) return damaged("field runs past the field block");
    std::string_view v = file.substr(at, size);
    at += size;
    auto fixed = [&](auto& out) -> absl::Status {
      if (v.size() != sizeof out) return damaged("field " + std::to_string(tag) + " has the wrong size");
      std::memcpy(&out, v.data(), sizeof out);
      return absl::OkStatus();
    };
    absl::Status st;
    switch (tag) {
      case kTagWokVersion:
        e.header.wok_version = v;
        break;
      case kTagGenerator:
        e.header.generator = v;
        break;
      case kTagCompiler:
        e.header.compiler = v;
        break;
      case kTagBackend:
        e.header.backend = v;
        break;
      case kTagIsa:
        e.header.isa = v;
        break;
      case kTagCpuFeatures:
        st = fixed(e.header.cpu_features);
        break;
      case kTagSignature:
        e.header.signature = v;
        break;
      case kTagDescription:
        e.header.description = v;
        break;
      case kTagCreated:
        st = fixed(e.header.created_unix);
        break;
      case kTagDetail: {
        size_t nul = v.find('\0');
        if (nul == std::string_view::npos) return damaged("detail field without a name");
        e.header.details.emplace_back(std::string(v.substr(0, nul)), std::string(v.substr(nul + 1)));
        break;
      }
      default:
        break;  // a field this reader does not know
    }
    if (!st.ok()) return st;
  }
  if (e.header.signature.empty()) return damaged("entry has no signature");
  return e;
}

absl::Status check_usable(const EntryHeader& have, const EntryHeader& want, uint64_t host_features) {
  auto differs = [](const char* field, const std::string& h, const std::string& w) {
    return absl::FailedPreconditionError(std::string("stale: ") + field + " is '" + h + "', this build wants '" + w +
                                         "'");
  };
  if (have.format_version != want.format_version)
    return differs("format version", std::to_string(have.format_version), std::to_string(want.format_version));
  if (have.wok_version != want.wok_version) return differs("wok version", have.wok_version, want.wok_version);
  if (have.generator != want.generator) return differs("generator hash", have.generator, want.generator);
  if (have.compiler != want.compiler) return differs("compiler", have.compiler, want.compiler);
  if (have.backend != want.backend) return differs("backend", have.backend, want.backend);
  if (uint64_t missing = have.cpu_features & ~host_features)
    return absl::FailedPreconditionError("code needs CPU features this host lacks: " + feature_names(missing));
  if (have.isa != want.isa) return differs("isa", have.isa, want.isa);
  if (have.cpu_features != want.cpu_features)
    return differs("cpu features", feature_names(have.cpu_features), feature_names(want.cpu_features));
  if (have.signature != want.signature)
    return absl::FailedPreconditionError("signature differs (a hash collision, or a damaged name)");
  return absl::OkStatus();
}

std::vector<FieldDifference> differences(const EntryHeader& have, const EntryHeader& want) {
  std::vector<FieldDifference> out;
  auto cmp = [&out](const char* field, const std::string& h, const std::string& w) {
    if (h != w) out.push_back({field, h, w});
  };
  cmp("format version", std::to_string(have.format_version), std::to_string(want.format_version));
  cmp("wok version", have.wok_version, want.wok_version);
  cmp("generator hash", have.generator, want.generator);
  cmp("compiler", have.compiler, want.compiler);
  cmp("backend", have.backend, want.backend);
  cmp("isa", have.isa, want.isa);
  cmp("cpu features", feature_names(have.cpu_features), feature_names(want.cpu_features));
  std::vector<std::string> names;
  for (const auto* h : {&have, &want})
    for (const auto& d : h->details)
      if (std::find(names.begin(), names.end(), d.first) == names.end()) names.push_back(d.first);
  for (const std::string& n : names) cmp(n.c_str(), have.detail(n), want.detail(n));
  if (out.empty() && have.signature != want.signature) {
    std::string h = std::to_string(have.signature.size()), w = std::to_string(want.signature.size());
    out.push_back({"signature", h.append(" bytes"), w.append(" bytes, other content")});
  }
  return out;
}

std::string differences_str(const std::vector<FieldDifference>& diffs) {
  if (diffs.empty()) return "no field differs";
  std::string s;
  for (const FieldDifference& d : diffs) {
    if (!s.empty()) s += "; ";
    s += d.field + " (stored '" + d.have + "', wanted '" + d.want + "')";
  }
  return s;
}

}  // namespace wok::cache

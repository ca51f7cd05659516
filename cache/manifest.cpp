#include "wok/cache/manifest.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <set>

#include "wok/cache/cache_config.h"
#include "wok/cache/file_util.h"
#include "wok/runtime/fragment_signature.h"
#include "wok/runtime/signature.h"

namespace wok::cache {

namespace {

constexpr char kRecordTag[] = "wok-manifest-1";
// A manifest is text a person may also edit; bound what a reader loads.
constexpr uint64_t kMaxManifestBytes = uint64_t{1} << 30;

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fragment_key(const Fragment& f) { return hash128(fragment_signature(f)).hex(); }

struct Recorder {
  std::mutex mu;
  std::string path;            // the manifest `keys` describes
  std::set<std::string> keys;  // recorded already (by any process, as of the first read)
  bool warned = false;
};

Recorder& recorder() {
  static Recorder* r = new Recorder();  // leaked: plans may be built during exit
  return *r;
}

}  // namespace

absl::Status append_to_manifest(const std::string& path, const Fragment& fragment) {
  std::string text = serialize_fragment(fragment);
  std::string line = std::string(kRecordTag) + " " + fragment_key(fragment) + " " +
                     hex64(XXH3_64bits(text.data(), text.size())) + " " + text + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("open manifest", path, errno);
  // One write per record: O_APPEND places it at the end whole.
  ssize_t n = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (n < 0) return errno_status("append to", path, err);
  if (static_cast<size_t>(n) != line.size())
    return absl::ResourceExhaustedError("short write to " + path + " (disk full?)");
  return absl::OkStatus();
}

void record_fragment(const Fragment& fragment) {
  std::string path = cache_config().record_path;
  if (path.empty()) return;
  std::string key = fragment_key(fragment);
  Recorder& r = recorder();
  std::lock_guard lock(r.mu);
  if (r.path != path) {
    r.path = path;
    r.keys.clear();
    if (absl::StatusOr<std::vector<ManifestRecord>> old = read_manifest(path); old.ok())
      for (const ManifestRecord& rec : *old) r.keys.insert(rec.key);
  }
  if (!r.keys.insert(key).second) return;
  if (absl::Status st = append_to_manifest(path, fragment); !st.ok() && !r.warned) {
    r.warned = true;
    warn("WOK_RECORD: cannot record fragments (" + std::string(st.message()) + ")");
  }
}

absl::StatusOr<std::vector<ManifestRecord>> read_manifest(const std::string& path) {
  absl::StatusOr<std::string> text = read_file(path, kMaxManifestBytes);
  if (!text.ok()) return text.status();
  std::vector<ManifestRecord> out;
  std::set<std::string> seen;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    bool complete = end != std::string::npos;
    if (!complete) end = text->size();
    std::string_view line(text->data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    ManifestRecord rec;
    rec.line = line_no;
    // tag, key, checksum, then the fragment text to the end of the line.
    size_t a = line.find(' ');
    size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
    size_t c = b == std::string_view::npos ? b : line.find(' ', b + 1);
    if (c == std::string_view::npos || line.substr(0, a) != kRecordTag) {
      rec.fragment = absl::DataLossError("line " + std::to_string(line_no) + " is not a " + kRecordTag + " record");
    } else {
      rec.key = std::string(line.substr(a + 1, b - a - 1));
      std::string_view sum = line.substr(b + 1, c - b - 1);
      std::string_view body = line.substr(c + 1);
      if (!complete || hex64(XXH3_64bits(body.data(), body.size())) != sum) {
        rec.fragment = absl::DataLossError("line " + std::to_string(line_no) + ": checksum mismatch (torn or edited)");
      } else if (!seen.insert(rec.key).second) {
        continue;
      } else {
        rec.fragment = deserialize_fragment(body);
        if (!rec.fragment.ok())
          rec.fragment = absl::Status(rec.fragment.status().code(), "line " + std::to_string(line_no) + ": " +
                                                                        std::string(rec.fragment.status().message()));
      }
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace wok::cache

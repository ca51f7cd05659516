// Warm-up manifests: the fragments a run needed generated kernels for, so
// that another process can build the same kernels ahead of time.
//
// Note [Manifest format]
// Text, one record per line:
//
//   wok-manifest-1 <key> <checksum> <fragment>
//
// <fragment> is serialize_fragment()'s text (Note [Fragment text format]),
// <key> the hex XXH3-128 of the fragment's plan signature (readers skip
// repeated keys), <checksum> the hex XXH3-64 of <fragment>. Blank lines and
// lines starting with '#' are ignored. Each record is one write() on a
// descriptor opened with O_APPEND, so several processes can record into one
// file at once and Linux keeps each record whole; a line that is damaged or
// torn anyway fails its checksum and is skipped, with a reason.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <string>
#include <vector>

#include "wok/cache/fragment_serialization.h"
#include "wok/runtime/fragment.h"

namespace wok::cache {

// Appends `fragment` to the WOK_RECORD manifest, if one is set and this
// fragment's key is not in it yet (keys already in the file are read the
// first time). Failures are said once on stderr; recording never fails a run.
void record_fragment(const Fragment& fragment);

// Appends one record to `path` (created if needed).
absl::Status append_to_manifest(const std::string& path, const Fragment& fragment);

struct ManifestRecord {
  int line = 0;  // 1-based, for messages
  std::string key;
  absl::StatusOr<std::unique_ptr<OwnedFragment>> fragment = absl::UnknownError("unread");
};

// Every record of the manifest, each read or with its own error; repeated
// keys appear once. Fails only if the file cannot be read.
absl::StatusOr<std::vector<ManifestRecord>> read_manifest(const std::string& path);

}  // namespace wok::cache

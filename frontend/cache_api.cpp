#include "wok/frontend/cache_api.h"

#include "wok/cache/bundle.h"
#include "wok/cache/disk_store.h"
#include "wok/jit/warmup.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/error.h"
#include "wok/runtime/op_registry.h"

namespace wok {

namespace {
std::string store_or_throw(const char* what) {
  cache::DiskStore::global().flush();  // entries still being written belong in the bundle
  std::string dir = cache::DiskStore::global().directory();
  if (dir.empty()) throw Error(std::string(what) + ": the disk cache is off (WOK_CACHE_DIR is set empty)");
  return dir;
}
}  // namespace

WarmupResult warmup(const std::string& manifest_path) {
  OpRegistry::global();  // the built-in ops, which manifests name
  absl::StatusOr<jit::WarmupReport> r = jit::warmup_manifest(manifest_path, host_cpu_isa());
  if (!r.ok()) throw Error("wok::warmup(" + manifest_path + "): " + std::string(r.status().message()));
  return {r->fragments, r->kernels, r->compiled, r->loaded, r->problems};
}

BundleResult export_cache(const std::string& bundle_path) {
  std::string dir = store_or_throw("wok::export_cache");
  absl::StatusOr<cache::BundleReport> r = cache::export_bundle(dir, bundle_path);
  if (!r.ok()) throw Error("wok::export_cache(" + bundle_path + "): " + std::string(r.status().message()));
  return {r->entries, r->bytes};
}

BundleResult import_cache(const std::string& bundle_path) {
  std::string dir = store_or_throw("wok::import_cache");
  absl::StatusOr<cache::BundleReport> r = cache::import_bundle(bundle_path, dir);
  if (!r.ok()) throw Error("wok::import_cache(" + bundle_path + "): " + std::string(r.status().message()));
  return {r->entries, r->bytes};
}

std::string cache_directory() { return cache::DiskStore::global().directory(); }

}  // namespace wok

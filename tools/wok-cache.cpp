// wok-cache: looks after the persistent kernel cache (cache/disk_store.h).
// Run `wok-cache --help`.
#include <wok/wok.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "wok/cache/bundle.h"
#include "wok/cache/cache_config.h"
#include "wok/cache/maintenance.h"

namespace {

using Args = std::vector<std::string>;

struct Command {
  const char* usage;  // after "wok-cache "
  const char* help;
  std::function<int(const std::string& dir, const Args& args)> run;
};

const char* kOverview =
    "usage: wok-cache [--dir DIR] COMMAND [ARGS]\n"
    "\n"
    "Looks after wok's persistent kernel cache: $WOK_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/wok, else ~/.cache/wok (--dir overrides).\n"
    "\n"
    "commands:\n";

int fail(const std::string& what) {
  std::fprintf(stderr, "wok-cache: %s\n", what.c_str());
  return 1;
}

std::string local_time(int64_t ns) {
  if (ns == 0) return "-";
  std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

bool parse_bytes(const std::string& text, uint64_t* out) {
  char* end = nullptr;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return false;
  std::string unit(end);
  if (unit == "K" || unit == "k")
    n <<= 10;
  else if (unit == "M" || unit == "m")
    n <<= 20;
  else if (unit == "G" || unit == "g")
    n <<= 30;
  else if (!unit.empty())
    return false;
  *out = n;
  return true;
}

int cmd_list(const std::string& dir, const Args&) {
  absl::StatusOr<std::vector<wok::cache::EntryInfo>> entries = wok::cache::list_entries(dir);
  if (!entries.ok()) return fail(std::string(entries.status().message()));
  std::printf("%-32s  %-7s %-7s %9s  %-19s  %-8s %s\n", "key", "backend", "isa", "bytes", "last use", "status", "ops");
  for (const wok::cache::EntryInfo& e : *entries) {
    const char* status = e.status.ok() ? "ok" : absl::IsFailedPrecondition(e.status) ? "other" : "damaged";
    std::printf("%-32s  %-7s %-7s %9llu  %-19s  %-8s %s\n", e.key.c_str(), e.header ? e.header->backend.c_str() : "?",
                e.header ? e.header->isa.c_str() : "?", static_cast<unsigned long long>(e.bytes),
                local_time(e.last_use_ns).c_str(), status,
                e.header ? e.header->detail("ops").c_str() : std::string(e.status.message()).c_str());
  }
  return 0;
}

int cmd_stats(const std::string& dir, const Args&) {
  absl::StatusOr<wok::cache::StoreSummary> s = wok::cache::summarize_store(dir);
  if (!s.ok()) return fail(std::string(s.status().message()));
  std::printf("directory          %s\n%s", dir.c_str(), s->str().c_str());
  uint64_t max = wok::cache::cache_config().max_bytes;
  std::printf("size bound         %s\n", max ? (std::to_string(max) + " bytes (WOK_CACHE_MAX_BYTES)").c_str() : "none");
  return 0;
}

int cmd_verify(const std::string& dir, const Args& args) {
  bool remove = !args.empty() && args[0] == "--remove";
  absl::StatusOr<wok::cache::VerifyReport> r = wok::cache::verify_store(dir, remove);
  if (!r.ok()) return fail(std::string(r.status().message()));
  for (const std::string& p : r->problems) std::printf("damaged: %s\n", p.c_str());
  std::printf("%lld entries checked: %lld sound, %lld for another wok build or CPU, %lld damaged%s\n",
              static_cast<long long>(r->checked), static_cast<long long>(r->sound),
              static_cast<long long>(r->other_build), static_cast<long long>(r->damaged),
              remove ? (" (" + std::to_string(r->removed) + " removed)").c_str() : "");
  return r->ok() || (remove && r->removed == r->damaged) ? 0 : 1;
}

int cmd_warmup(const std::string& dir, const Args& args) {
  if (args.size() != 1) return fail("warmup takes one MANIFEST (see wok-cache warmup --help)");
  try {
    wok::WarmupResult r = wok::warmup(args[0]);
    for (const std::string& s : r.skipped) std::printf("skipped: %s\n", s.c_str());
    std::printf("%lld fragments, %lld kernels: %lld compiled, %lld already cached; into %s\n",
                static_cast<long long>(r.fragments), static_cast<long long>(r.kernels),
                static_cast<long long>(r.compiled), static_cast<long long>(r.loaded), dir.c_str());
    return r.skipped.empty() ? 0 : 1;
  } catch (const wok::Error& e) {
    return fail(e.what());
  }
}

int cmd_export(const std::string& dir, const Args& args) {
  if (args.size() != 1) return fail("export takes one FILE (see wok-cache export --help)");
  absl::StatusOr<wok::cache::BundleReport> r = wok::cache::export_bundle(dir, args[0]);
  if (!r.ok()) return fail(std::string(r.status().message()));
  std::printf("exported %s to %s\n", r->str().c_str(), args[0].c_str());
  return 0;
}

int cmd_import(const std::string& dir, const Args& args) {
  if (args.size() != 1) return fail("import takes one FILE (see wok-cache import --help)");
  absl::StatusOr<wok::cache::BundleReport> r = wok::cache::import_bundle(args[0], dir);
  if (!r.ok()) return fail(std::string(r.status().message()));
  std::printf("imported %s into %s\n", r->str().c_str(), dir.c_str());
  return 0;
}

int cmd_prune(const std::string& dir, const Args& args) {
  uint64_t max = 0;
  if (args.size() == 2 && args[0] == "--max-bytes") {
    if (!parse_bytes(args[1], &max)) return fail("--max-bytes wants a size such as 1000000, 512K, 64M or 2G");
  } else if (!args.empty()) {
    return fail("prune takes --max-bytes N (see wok-cache prune --help)");
  }
  absl::StatusOr<wok::cache::PruneReport> r = wok::cache::prune_store(dir, max);
  if (!r.ok()) return fail(std::string(r.status().message()));
  std::printf("evicted %lld entries, removed %lld leftovers; %llu -> %llu bytes\n", static_cast<long long>(r->evicted),
              static_cast<long long>(r->leftovers_removed), static_cast<unsigned long long>(r->bytes_before),
              static_cast<unsigned long long>(r->bytes_after));
  return 0;
}

int cmd_clear(const std::string& dir, const Args& args) {
  if (!args.empty()) return fail("clear takes no arguments");
  if (absl::Status st = wok::cache::clear_store(dir); !st.ok()) return fail(std::string(st.message()));
  std::printf("cleared %s\n", dir.c_str());
  return 0;
}

int cmd_explain(const std::string& dir, const Args& args) {
  if (args.size() != 1) return fail("explain takes one KEY (see wok-cache explain --help)");
  absl::StatusOr<std::string> text = wok::cache::explain_key(dir, args[0]);
  if (!text.ok()) return fail(std::string(text.status().message()));
  std::fputs(text->c_str(), stdout);
  return 0;
}

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"list",
       {"list",
        "One line per entry: key, backend, ISA, size, last use, status (ok, other: for\n"
        "another wok build or CPU, damaged) and the kernel's ops. Newest use first.",
        cmd_list}},
      {"stats", {"stats", "Counts of entries, bytes, usable/other/damaged entries, leftovers.", cmd_stats}},
      {"verify",
       {"verify [--remove]",
        "Reads and checks every entry (magic, version, sizes, checksums, that it\n"
        "holds the kernel its name says). Exit status 1 if any is damaged;\n"
        "--remove deletes those.",
        cmd_verify}},
      {"warmup",
       {"warmup MANIFEST",
        "Builds every kernel a WOK_RECORD manifest names into the cache, without\n"
        "running the program. Exit status 1 if a record could not be rebuilt\n"
        "(e.g. a custom op this tool does not have).",
        cmd_warmup}},
      {"export", {"export FILE", "Packs every sound entry into one bundle FILE, written atomically.", cmd_export}},
      {"import",
       {"import FILE",
        "Unpacks a bundle into the cache. The whole bundle is checked first; a\n"
        "damaged one changes nothing.",
        cmd_import}},
      {"prune",
       {"prune [--max-bytes N]",
        "Evicts least recently used entries until the cache holds at most N\n"
        "bytes (K, M, G suffixes), and removes damaged entries and old\n"
        "temporary and lock files.",
        cmd_prune}},
      {"clear", {"clear", "Removes every entry, lock, temporary file and recorded miss.", cmd_clear}},
      {"explain",
       {"explain KEY",
        "Shows entry KEY (or the miss strict mode recorded under KEY), whether\n"
        "this build would load it, and the fields (ISA, versions, dtypes, ops)\n"
        "in which the nearest other entry differs.",
        cmd_explain}},
  };
  return table;
}

void print_overview(FILE* out) {
  std::fputs(kOverview, out);
  for (const auto& [name, c] : commands()) {
    std::string first_line = c.help;
    first_line = first_line.substr(0, first_line.find('\n'));
    std::fprintf(out, "  %-24s %s\n", c.usage, first_line.c_str());
  }
  std::fputs("\n`wok-cache COMMAND --help` explains one command.\n", out);
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argv + 1, argv + argc);
  std::string dir = wok::cache::cache_config().directory;
  if (args.size() >= 2 && args[0] == "--dir") {
    dir = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_overview(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  auto it = commands().find(args[0]);
  if (it == commands().end()) {
    std::fprintf(stderr, "wok-cache: unknown command '%s'\n\n", args[0].c_str());
    print_overview(stderr);
    return 2;
  }
  Args rest(args.begin() + 1, args.end());
  for (const std::string& a : rest)
    if (a == "--help" || a == "-h") {
      std::printf("usage: wok-cache [--dir DIR] %s\n\n%s\n", it->second.usage, it->second.help);
      return 0;
    }
  if (dir.empty()) return fail("the cache is off (WOK_CACHE_DIR is set empty); pass --dir DIR");
  // The library (warmup) uses the same directory.
  wok::cache::CacheConfig config = wok::cache::cache_config();
  config.directory = dir;
  wok::cache::set_cache_config(config);
  return it->second.run(dir, rest);
}

#include "wok/runtime/observe/symbolize.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wok::observe {

namespace {

// Whether an ELF file is position-independent (ET_DYN: a PIE executable or a
// shared library), whose addresses addr2line wants relative to the load base.
bool is_position_independent(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char header[18] = {};
  if (!f.read(reinterpret_cast<char*>(header), sizeof header)) return true;
  const uint16_t type = static_cast<uint16_t>(header[16] | (header[17] << 8));  // e_type, little-endian
  return type == 3;                                                               // ET_DYN
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

// The mangled name of the function symbol of `object` (a 64-bit ELF file)
// that contains `address` (as addr2line takes it), from the static symbol
// table, else the dynamic one; empty when there is none.
std::string symbol_containing(const std::string& object, uintptr_t address) {
  std::ifstream f(object, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr))
    return "";
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  f.seekg(static_cast<std::streamoff>(eh.e_shoff));
  if (!f.read(reinterpret_cast<char*>(sections.data()), static_cast<std::streamsize>(sections.size() * sizeof(Elf64_Shdr))))
    return "";
  for (uint32_t wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (const Elf64_Shdr& table : sections) {
      if (table.sh_type != wanted || table.sh_link >= sections.size() || table.sh_entsize != sizeof(Elf64_Sym)) continue;
      std::vector<Elf64_Sym> symbols(table.sh_size / sizeof(Elf64_Sym));
      f.seekg(static_cast<std::streamoff>(table.sh_offset));
      if (!f.read(reinterpret_cast<char*>(symbols.data()), static_cast<std::streamsize>(symbols.size() * sizeof(Elf64_Sym))))
        return "";
      for (const Elf64_Sym& sym : symbols) {
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || address < sym.st_value || address >= sym.st_value + sym.st_size)
          continue;
        const Elf64_Shdr& strings = sections[table.sh_link];
        if (sym.st_name >= strings.sh_size) return "";
        // Mangled template names run to thousands of characters: read up to
        // the terminating NUL, not a fixed length.
        std::string name;
        f.seekg(static_cast<std::streamoff>(strings.sh_offset + sym.st_name));
        std::getline(f, name, '\0');
        return name;
      }
    }
  }
  return "";
}

// addr2line's function and file:line for `offset` in `object`; empty
// strings when it is not installed or knows nothing. With inlining (-i), the
// first frame outside wok's inline operators (frontend/ops.h) is the user's.
void run_addr2line(const std::string& object, uintptr_t offset, std::string& function, std::string& where) {
  char address[32];
  std::snprintf(address, sizeof address, "0x%zx", static_cast<size_t>(offset));
  const std::string command = "addr2line -C -f -i -e " + shell_quote(object) + " " + address + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return;
  std::vector<std::pair<std::string, std::string>> frames;  // innermost first
  char fn[4096], loc[4096];
  while (std::fgets(fn, sizeof fn, pipe) && std::fgets(loc, sizeof loc, pipe)) frames.emplace_back(trim(fn), trim(loc));
  pclose(pipe);
  if (frames.empty()) return;
  size_t chosen = frames.size() - 1;
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].second.find("frontend/ops.h") == std::string::npos) {
      chosen = i;
      break;
    }
  function = frames[chosen].first;
  where = frames[chosen].second;
  // With debug info, the frame that others were inlined into is named by its
  // short DWARF name ("TestBody"); the symbol table has its full name, as a
  // build without debug info shows it.
  if (chosen == frames.size() - 1 && frames.size() > 1)
    if (std::string symbol = symbol_containing(object, offset); !symbol.empty()) function = demangle(symbol.c_str());
  if (function == "??") function.clear();
  if (where.empty() || where.starts_with("??") || where.ends_with(":0") || where.ends_with(":?")) where.clear();
  if (auto discriminator = where.find(" (discriminator"); discriminator != std::string::npos) where.resize(discriminator);
  if (auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
}

std::string lookup(const void* return_address) {
  const auto pc = reinterpret_cast<uintptr_t>(return_address) - 1;  // inside the call instruction
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%zx", static_cast<size_t>(pc));
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(pc), &info)) return hex;
  // The main program's own path reads back as "" (or its argv[0]).
  std::string object = info.dli_fname && *info.dli_fname ? info.dli_fname : "/proc/self/exe";
  if (object.find('/') == std::string::npos) object = "/proc/self/exe";
  const uintptr_t base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  const uintptr_t offset = is_position_independent(object) ? pc - base : pc;
  std::string function, where;
  run_addr2line(object, offset, function, where);
  if (function.empty() && info.dli_sname) function = demangle(info.dli_sname);
  if (!where.empty()) return function.empty() ? where : where + " (" + function + ")";
  return function.empty() ? hex : function;
}

}  // namespace

std::string describe_code_address(const void* return_address) {
  if (!return_address) return "";
  static std::mutex mu;
  static auto* cache = new std::unordered_map<const void*, std::string>();  // never freed: used at exit
  {
    std::lock_guard lock(mu);
    if (auto it = cache->find(return_address); it != cache->end()) return it->second;
  }
  std::string text = lookup(return_address);
  std::lock_guard lock(mu);
  return cache->emplace(return_address, std::move(text)).first->second;
}

}  // namespace wok::observe

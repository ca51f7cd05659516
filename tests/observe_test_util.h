// Helpers for the observability tests: collecting events, running under the
// JIT with no disk cache, and a small JSON reader for trace files.
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wok/cache/cache_config.h"
#include "wok/runtime/cpu_features.h"

namespace ot {

// Events of the kinds in `mask`, in arrival order, while alive.
class Collector {
 public:
  explicit Collector(uint64_t mask = wok::observe::kAllEvents)
      : id_(::wok::subscribe(mask, [this](const wok::observe::Event& e) {
          std::lock_guard lock(mu_);
          events_.push_back(e);
        })) {}
  ~Collector() { stop(); }
  void stop() {
    if (id_) ::wok::unsubscribe(id_);
    id_ = 0;
  }
  std::vector<wok::observe::Event> events() {
    std::lock_guard lock(mu_);
    return events_;
  }
  // Only those emitted on `thread`.
  std::vector<wok::observe::Event> on_thread(uint32_t thread) {
    std::vector<wok::observe::Event> out;
    for (const wok::observe::Event& e : events())
      if (e.thread == thread) out.push_back(e);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<wok::observe::Event> events_;
  uint64_t id_;
};

inline bool has_jit() { return wok::host_cpu_isa() != wok::CpuIsa::kBaseline; }

// The JIT backend with the disk cache off (every new kernel compiles),
// restored on destruction.
class JitNoDiskCache {
 public:
  JitNoDiskCache() : saved_config_(wok::cache::cache_config()), saved_backend_(wok::backend()) {
    wok::cache::CacheConfig c = saved_config_;
    c.directory.clear();
    wok::cache::set_cache_config(c);
    wok::set_backend(wok::Backend::kJit);
  }
  ~JitNoDiskCache() {
    wok::cache::set_cache_config(saved_config_);
    wok::set_backend(saved_backend_);
  }

 private:
  wok::cache::CacheConfig saved_config_;
  wok::Backend saved_backend_;
};

// ---- a small JSON reader ------------------------------------------------------------
struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json* get(const std::string& k) const {
    auto it = fields.find(k);
    return it == fields.end() ? nullptr : &it->second;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}
  // Throws std::runtime_error naming the offset of the first problem.
  Json parse() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i_));
  }
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string_lit() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c == '\\') {
        if (i_ >= s_.size()) fail("bad escape");
        char e = s_[i_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case '/': out += '/'; break;
          case '\\': out += '\\'; break;
          case '"': out += '"'; break;
          case 'u':
            if (i_ + 4 > s_.size()) fail("bad \\u escape");
            out += '?';
            i_ += 4;
            break;
          default: fail("bad escape");
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  Json value() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    char c = s_[i_];
    if (c == '{') {
      v.type = Json::Type::kObject;
      ++i_;
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string_lit();
        expect(':');
        v.fields[k] = value();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      v.type = Json::Type::kArray;
      ++i_;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::Type::kString;
      v.str = string_lit();
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      v.type = Json::Type::kBool;
      v.b = s_[i_] == 't';
      i_ += v.b ? 4 : 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      size_t end = i_;
      while (end < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[end])) || s_[end] == '-' ||
                                 s_[end] == '+' || s_[end] == '.' || s_[end] == 'e' || s_[end] == 'E'))
        ++end;
      if (end == i_) fail("unexpected character");
      v.type = Json::Type::kNumber;
      v.num = std::stod(s_.substr(i_, end - i_));
      i_ = end;
    }
    return v;
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace ot

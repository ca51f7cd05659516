// Shared by the persistent-cache tests and their helper process
// (tests/cache_helper.cpp): programs with one distinct generated kernel
// each, a private store per test, and child processes.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "wok/cache/cache_config.h"
#include "wok/cache/disk_store.h"
#include "wok/cache/file_util.h"
#include "wok/jit/kernel_cache.h"
#include "wok/jit/plan_cache.h"

namespace cache_test {

// ---- programs ---------------------------------------------------------------------

// Program i computes y = f(a * 0.75 + b) - a with one of 12 functions f, in
// float32 (even i) or float64 (odd i): 24 programs, each one fused kernel
// of its own.
inline constexpr int kNumPrograms = 24;

template <typename T>
int run_typed(int fn, int n, bool captured) {
  std::vector<T> av(n), bv(n);
  for (int i = 0; i < n; ++i) {
    av[i] = static_cast<T>(std::sin(0.37 * i + fn));
    bv[i] = static_cast<T>(std::cos(0.11 * i) * 0.5);
  }
  wok::Tensor a = wok::from_vector(av), b = wok::from_vector(bv);
  auto program = [fn](const wok::Tensor& a, const wok::Tensor& b) {
    wok::Tensor x = a * 0.75 + b;
    wok::Tensor fx;
  switch (fn) {
      case 0:
        fx = wok::exp(x);
        break;
      case 1:
        fx = wok::tanh(x);
        break;
      case 2:
        fx = wok::sin(x);
        break;
      case 3:
        fx = wok::cos(x);
        break;
      case 4:
        fx = wok::erf(x);
        break;
      case 5:
        fx = wok::sigmoid(x);
        break;
      case 6:
        fx = wok::relu(x);
        break;
      case 7:
        fx = wok::abs(x);
        break;
      case 8:
        fx = -x;
        break;
      case 9:
        fx = wok::square(x);
        break;
      case 10:
        fx = wok::sqrt(wok::abs(x));
        break;
      default:
        fx = wok::log(wok::abs(x) + 1.0);
        break;
    }
    return fx - a;
  };
  wok::Tensor y;
  if (captured) {
    // Traced and prepared at the first call, replayed at the second.
    auto compiled = wok::compile(program);
    (void)compiled(a, b);
    y = compiled(a, b);
  } else {
    y = program(a, b);
  }
  std::vector<T> got = y.template to_vector<T>();
  double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    double z = static_cast<double>(av[i]) * 0.75 + static_cast<double>(bv[i]);
    double f[] = {std::exp(z),
                  std::tanh(z),
                  std::sin(z),
                  std::cos(z),
                  std::erf(z),
                  1 / (1 + std::exp(-z)),
                  z > 0 ? z : 0,
                  std::abs(z),
                  -z,
                  z * z,
                  std::sqrt(std::abs(z)),
                  std::log(std::abs(z) + 1)};
    double want = f[fn] - static_cast<double>(av[i]);
    if (!(std::abs(static_cast<double>(got[i]) - want) <= tol * (1 + std::abs(want)))) ++wrong;
  }
  return wrong;
}

// Runs program i, through wok::compile when `captured`; returns how many
// results disagree with a double reference. Returns once the kernels it
// built are written to the disk store.
inline int run_program(int i, bool captured = false) {
  int n = 1000 + 7 * i;
  int wrong = i % 2 == 0 ? run_typed<float>(i / 2, n, captured) : run_typed<double>(i / 2, n, captured);
  wok::cache::DiskStore::global().flush();
  return wrong;
}

// ---- files ------------------------------------------------------------------------

inline std::string make_temp_dir(const char* stem) {
  std::string pattern = std::string("/tmp/") + stem + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) std::abort();
  return buf.data();
}

inline void remove_dir(const std::string& dir) { (void)wok::cache::remove_tree(dir); }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The entry files in a store, by name.
inline std::vector<std::string> entry_files(const std::string& store) {
  std::vector<std::string> out;
  auto files = wok::cache::list_directory(store + "/kernels");
  if (files.ok())
    for (const auto& f : *files) out.push_back(f.path);
  std::sort(out.begin(), out.end());
  return out;
}

// Forgets every compiled kernel and plan in this process, so the next
// evaluation looks in the disk store.
inline void forget_in_memory() {
  wok::jit::PlanCache::global().clear();
  wok::jit::KernelCache::global().clear();
}

// ---- child processes --------------------------------------------------------------

struct ChildResult {
  int exit_code = -1;  // -1 when killed
  int signal = 0;
  std::string out;                                  // stdout + stderr
  long long value(const std::string& name) const {  // "name=N" in out
    size_t at = out.find(name + "=");
    return at == std::string::npos ? -1 : std::atoll(out.c_str() + at + name.size() + 1);
  }
};

struct Child {
  pid_t pid = -1;
  std::string out_path;
};

// Starts `argv` with extra environment `env` ("NAME=value"), stdout and
// stderr to a file. When `start_fd` >= 0 it is passed on as fd 3.
inline Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::string& out_path, int start_fd = -1) {
  Child c;
  c.out_path = out_path;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  c.pid = ::fork();
  if (c.pid == 0) {
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    FILE* f = std::fopen(out_path.c_str(), "w");
    if (f) {
      ::dup2(fileno(f), 1);
      ::dup2(fileno(f), 2);
    }
    if (start_fd == 3)
      ::fcntl(3, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    else if (start_fd >= 0)
      ::dup2(start_fd, 3);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

inline ChildResult wait_for(const Child& c) {
  ChildResult r;
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_text(c.out_path);
  return r;
}

inline ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                             const std::string& out_path) {
  return wait_for(spawn(argv, env, out_path));
}

}  // namespace cache_test

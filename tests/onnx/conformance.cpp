// The ONNX node conformance driver: runs every node test of Debian's
// libonnx-testdata through wok::onnx under both CPU backends and compares
// with the expected outputs, with ONNX's own tolerances (rtol 1e-3, atol
// 1e-7; exact for integers and bools).
//
//   wok_onnx_conformance --data /usr/share/libonnx-testdata/data/node
//                        --expected tests/onnx/expected_failures.txt
//
// A case listed in the expected-failures file (one "name  reason" per line)
// may fail; the run fails on any unlisted case that does not pass and on
// any listed case that now passes, so the list only shrinks.
// --write-expected FILE writes the list this run would need.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include "wok/onnx/model.h"
#include "wok/wok.h"

namespace fs = std::filesystem;

namespace {

// Outputs compared over the run, printed with the summary.
int64_t g_outputs_compared = 0;

struct Options {
  std::string data = "/usr/share/libonnx-testdata/data/node";
  std::string expected;
  std::string write_expected;
  std::string filter;
  bool verbose = false;
};

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".pb")
      found.emplace_back(std::stoi(name.substr(prefix.size())), entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [i, p] : found) paths.push_back(p);
  return paths;
}

// "" when `got` matches `want`, else what differs.
std::string compare(const wok::Tensor& got, const wok::Tensor& want) {
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(wok::dtype_name(got.dtype())) + ", expected " + std::string(wok::dtype_name(want.dtype()));
  if (got.shape() != want.shape())
    return "shape " + wok::shape_str(got.shape()) + ", expected " + wok::shape_str(want.shape());
  if (wok::is_floating(want.dtype())) {
    const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
    for (size_t i = 0; i < w.size(); ++i) {
      if (std::isnan(w[i]) && std::isnan(g[i])) continue;
      if (g[i] == w[i]) continue;
      if (std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i])) continue;
      std::ostringstream os;
      os.precision(9);
      os << "element " << i << " is " << g[i] << ", expected " << w[i];
      return os.str();
    }
  } else {
    const std::vector<int64_t> g = got.to_vector<int64_t>(), w = want.to_vector<int64_t>();
    for (size_t i = 0; i < w.size(); ++i)
      if (g[i] != w[i])
        return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

// ONNX's test data (numpy has no bfloat16) stores bfloat16 tensors as
// uint16 bit patterns: `t` as the bfloat16 tensor its bits are, where the
// model declares bfloat16.
wok::Tensor as_declared(const wok::Tensor& t, wok::DType declared) {
  if (declared != wok::DType::kBFloat16 || t.dtype() != wok::DType::kUInt16) return t;
  std::vector<wok::bfloat16> values;
  for (uint16_t bits : t.to_vector<uint16_t>()) values.push_back(wok::bfloat16::from_bits(bits));
  return wok::from_vector(values, t.shape());
}

// "" when the case passes under `backend`, else the first failure.
std::string run_case(const fs::path& dir, wok::Backend backend) {
  const wok::onnx::Model model = wok::onnx::load((dir / "model.onnx").string());
  int data_sets = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    std::vector<wok::Tensor> inputs, wanted;
    for (const fs::path& p : numbered_files(entry.path(), "input_")) inputs.push_back(wok::onnx::read_tensor_file(p));
    for (const fs::path& p : numbered_files(entry.path(), "output_")) wanted.push_back(wok::onnx::read_tensor_file(p));
    for (size_t i = 0; i < inputs.size() && i < model.inputs().size(); ++i)
      inputs[i] = as_declared(inputs[i], model.inputs()[i].dtype);
    for (size_t i = 0; i < wanted.size() && i < model.outputs().size(); ++i)
      wanted[i] = as_declared(wanted[i], model.outputs()[i].dtype);
    ++data_sets;
    wok::set_backend(backend);
    const std::vector<wok::Tensor> outputs = model.run(inputs);
    if (outputs.size() != wanted.size())
      return std::to_string(outputs.size()) + " outputs, expected " + std::to_string(wanted.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string diff = compare(outputs[i], wanted[i]);
      if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
      ++g_outputs_compared;
    }
  }
  return data_sets > 0 ? "" : "no test_data_set_* folder";
}

// The failure as one short line, without the model's path.
std::string first_line(std::string s, const std::string& model_path) {
  for (size_t at; (at = s.find(model_path + ": ")) != std::string::npos;) s.erase(at, model_path.size() + 2);
  for (char& ch : s)
    if (ch == '\n') ch = ' ';
  for (size_t at; (at = s.find("  ")) != std::string::npos;) s.erase(at, 1);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

std::map<std::string, std::string> read_expected(const std::string& path) {
  std::map<std::string, std::string> listed;
  if (path.empty()) return listed;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    const std::string name = line.substr(0, space);
    listed[name] = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
  }
  return listed;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--data") o.data = value();
    else if (a == "--expected") o.expected = value();
    else if (a == "--write-expected") o.write_expected = value();
    else if (a == "--filter") o.filter = value();
    else if (a == "-v" || a == "--verbose") o.verbose = true;
    else {
      std::cerr << "usage: wok_onnx_conformance [--data DIR] [--expected FILE] [--write-expected FILE] "
                   "[--filter SUBSTRING] [-v]\n";
      return 2;
    }
  }
  if (!fs::is_directory(o.data)) {
    std::cerr << "no node tests at " << o.data << " (install libonnx-testdata: scripts/setup)\n";
    return 2;
  }
  const std::map<std::string, std::string> listed = read_expected(o.expected);
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(o.data))
    if (entry.is_directory() && entry.path().filename().string().find(o.filter) != std::string::npos)
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  int passed = 0;
  std::vector<std::string> unexpected, now_passing;
  std::map<std::string, std::string> failures;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    std::string failure;
    for (wok::Backend backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
      try {
        failure = run_case(dir, backend);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!failure.empty()) {
        failure = (backend == wok::Backend::kJit ? "[jit] " : "[precompiled] ") + first_line(failure, (dir / "model.onnx").string());
        break;
      }
    }
    wok::set_backend(wok::Backend::kJit);
    const bool is_listed = listed.count(name) > 0;
    if (failure.empty()) {
      ++passed;
      if (is_listed) now_passing.push_back(name);
      if (o.verbose) std::cout << "pass  " << name << "\n";
    } else {
      failures[name] = failure;
      if (!is_listed) unexpected.push_back(name + "  " + failure);
      if (o.verbose) std::cout << "FAIL  " << name << "  " << failure << "\n";
    }
  }

  if (!o.write_expected.empty()) {
    std::ofstream out(o.write_expected);
    out << "# ONNX node tests (libonnx-testdata) that wok does not pass yet, with the reason.\n"
           "# Read by tests/onnx/conformance.cpp: a listed case that passes, or an unlisted\n"
           "# one that fails, fails the run, so this list only shrinks.\n";
    for (const auto& [name, why] : failures) out << name << "  " << why << "\n";
  }
  for (const std::string& u : unexpected) std::cout << "unexpected failure: " << u << "\n";
  for (const std::string& n : now_passing) std::cout << "now passes (remove it from the list): " << n << "\n";
  const size_t total = cases.size();
  std::printf("onnx node conformance: %d of %zu cases pass under both backends (%.1f%%); %zu listed failures; "
              "%lld outputs compared\n",
              passed, total, total ? 100.0 * passed / total : 0.0, failures.size() - unexpected.size(),
              static_cast<long long>(g_outputs_compared));
  return unexpected.empty() && now_passing.empty() ? 0 : 1;
}

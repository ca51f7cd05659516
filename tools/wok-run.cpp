// wok-run: runs an ONNX model through wok on random or given inputs.
//
//   wok-run model.onnx [--input name=2x3[:float32] | name=file.npy ...] [--bench N]
//           [--backend jit|precompiled] [--seed S]
//   wok-run --ops           lists the ONNX op types wok imports
//
// Prints each output's shape, dtype and a checksum (the sum and the sum of
// absolute values, in float64); with --bench N, the median latency of N
// runs and the kernel launches per run. A progress line on stderr counts
// the kernels compiled during the first run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include "wok/onnx/model.h"
#include "wok/wok.h"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "wok-run: " << why << "\n"
            << "usage: wok-run model.onnx [--input name=2x3[:dtype] | name=file.npy]... [--bench N]\n"
               "               [--backend jit|precompiled] [--seed S]\n"
               "       wok-run --ops   (the ONNX op types wok imports)\n"
               "  dtype: float32 (default), float64, float16, bfloat16, int8..int64, uint8..uint64, bool; symbolic dims need --input\n";
  std::exit(2);
}

wok::DType parse_dtype(const std::string& s) {
  for (wok::DType t : wok::kAllDTypes)
    if (wok::dtype_name(t) == s) return t;
  usage("unknown dtype '" + s + "'");
}

std::vector<int64_t> parse_dims(const std::string& s) {
  std::vector<int64_t> dims;
  if (s.empty() || s == "scalar") return dims;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, 'x')) {
    try {
      dims.push_back(std::stoll(part));
    } catch (...) {
      usage("bad shape '" + s + "' (write it as 2x3x4)");
    }
  }
  return dims;
}

// A .npy file (format 1.0-3.0) of a little-endian float32, float64, int32,
// int64 or bool array in C order.
wok::Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage("cannot open " + path);
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) usage(path + " is not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t n;
    in.read(reinterpret_cast<char*>(&n), 2);
    header_len = n;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  auto field = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) usage(path + ": no '" + key + "' in the header");
    return header.substr(header.find(':', k) + 1);
  };
  const std::string descr = field("descr");
  const std::string type = descr.substr(descr.find('\'') + 1, 3);
  wok::DType dtype;
  if (type == "<f4") dtype = wok::DType::kFloat32;
  else if (type == "<f8") dtype = wok::DType::kFloat64;
  else if (type == "<i4") dtype = wok::DType::kInt32;
  else if (type == "<i8") dtype = wok::DType::kInt64;
  else if (type == "|b1") dtype = wok::DType::kBool;
  else usage(path + ": dtype " + type + " is not supported");
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) usage(path + ": Fortran order");
  const std::string shape_text = field("shape");
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (size_t i = shape_text.find('(') + 1; i < shape_text.find(')');) {
    size_t end = shape_text.find_first_of(",)", i);
    const std::string num = shape_text.substr(i, end - i);
    if (num.find_first_not_of(" ") != std::string::npos) {
      dims.push_back(std::stoll(num));
      numel *= dims.back();
    }
    i = end + 1;
  }
  std::vector<char> bytes(static_cast<size_t>(numel) * wok::itemsize(dtype));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) usage(path + ": fewer bytes than its shape needs");
  return wok::detail::from_bytes(bytes.data(), wok::Shape(dims), dtype, wok::Device::cpu(), numel);
}

wok::Tensor random_input(const std::vector<int64_t>& dims, wok::DType dtype, uint64_t seed) {
  if (wok::is_floating(dtype)) return wok::randn(wok::Shape(dims), seed, dtype);
  return wok::zeros(wok::Shape(dims), dtype);  // zeros are valid indices and sizes
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("no model given");
  if (std::string(argv[1]) == "--ops") {
    for (const std::string& op : wok::onnx::supported_op_types()) std::printf("%s\n", op.c_str());
    return 0;
  }
  std::string model_path;
  std::map<std::string, std::string> given;
  int bench = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") {
      const std::string spec = value();
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) usage("--input takes name=shape[:dtype] or name=file.npy");
      given[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (a == "--bench") {
      bench = std::stoi(value());
    } else if (a == "--seed") {
      seed = std::stoull(value());
    } else if (a == "--backend") {
      const std::string b = value();
      if (b == "jit") wok::set_backend(wok::Backend::kJit);
      else if (b == "precompiled") wok::set_backend(wok::Backend::kPrecompiled);
      else usage("--backend is jit or precompiled");
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option " + a);
    } else {
      model_path = a;
    }
  }
  if (model_path.empty()) usage("no model given");

  try {
    const wok::onnx::Model model = wok::onnx::load(model_path);
    std::printf("%s: %zu nodes, opset %lld\n", model_path.c_str(), model.node_count(),
                static_cast<long long>(model.opset()));
    std::map<std::string, wok::Tensor> inputs;
    for (const wok::onnx::ValueInfo& info : model.inputs()) {
      auto it = given.find(info.name);
      wok::Tensor t;
      if (it != given.end() && it->second.size() > 4 && it->second.substr(it->second.size() - 4) == ".npy") {
        t = read_npy(it->second);
      } else {
        std::vector<int64_t> dims = info.shape;
        wok::DType dtype = info.dtype;
        if (it != given.end()) {
          const size_t colon = it->second.find(':');
          dims = parse_dims(it->second.substr(0, colon));
          if (colon != std::string::npos) dtype = parse_dtype(it->second.substr(colon + 1));
        } else if (!info.has_shape || std::count(dims.begin(), dims.end(), -1) > 0) {
          usage("input '" + info.name + "' has symbolic dims: give its shape with --input " + info.name + "=2x3");
        }
        t = random_input(dims, dtype, seed++);
      }
      std::printf("  input  %-16s %s%s\n", info.name.c_str(), std::string(wok::dtype_name(t.dtype())).c_str(),
                  wok::shape_str(t.shape()).c_str());
      inputs[info.name] = t;
    }
    for (const auto& [name, spec] : given)
      if (!inputs.count(name)) usage("the model has no input '" + name + "'");

    // The first run compiles (or loads from the disk cache); the progress
    // line counts the kernels.
    std::atomic<int> compiled{0}, prepared{0};
    wok::Subscription progress(
        wok::observe::bit(wok::EventKind::kCompileEnd) | wok::observe::bit(wok::EventKind::kKernelCache),
        [&](const wok::observe::Event& e) {
          if (e.kind == wok::EventKind::kCompileEnd) ++compiled;
          else ++prepared;
          std::fprintf(stderr, "\rpreparing kernels: %d (%d compiled)", prepared.load(), compiled.load());
        });
    auto run_once = [&] {
      std::map<std::string, wok::Tensor> out = model.run(inputs);
      std::vector<wok::Tensor> all;
      for (auto& [name, t] : out) all.push_back(t);
      wok::eval(all);
      return out;
    };
    const auto t0 = std::chrono::steady_clock::now();
    const std::map<std::string, wok::Tensor> outputs = run_once();
    const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (prepared > 0) std::fprintf(stderr, "\n");
    const wok::RuntimeStats first = wok::stats();
    std::printf("first run: %.2f ms (kernels: %lld compiled, %lld loaded from the disk cache)\n", first_ms,
                static_cast<long long>(first.kernels_compiled), static_cast<long long>(first.disk_hits));
    for (const wok::onnx::ValueInfo& info : model.outputs()) {
      const wok::Tensor& t = outputs.at(info.name);
      double sum = 0, abs_sum = 0;
      for (double v : t.to_vector<double>()) {
        sum += v;
        abs_sum += std::abs(v);
      }
      std::printf("  output %-16s %s%s  sum %.6g  sum|x| %.6g\n", info.name.c_str(),
                  std::string(wok::dtype_name(t.dtype())).c_str(), wok::shape_str(t.shape()).c_str(), sum, abs_sum);
    }
    if (bench > 0) {
      std::vector<double> ms;
      const int64_t launches_before = wok::stats().kernel_launches;
      for (int i = 0; i < bench; ++i) {
        const auto start = std::chrono::steady_clock::now();
        run_once();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(ms.begin(), ms.end());
      const double launches = static_cast<double>(wok::stats().kernel_launches - launches_before) / bench;
      std::printf("bench: %d runs, median %.4f ms, min %.4f ms, %.1f kernel launches per run\n", bench,
                  ms[ms.size() / 2], ms.front(), launches);
    }
  } catch (const wok::Error& e) {
    std::cerr << "wok-run: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// The wok-run tool on a model file written here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include "wok/onnx/model_builder.h"

namespace {

using onnx::TensorProto;
using wok::onnx::ModelBuilder;

struct ToolRun {
  int rc = -1;
  std::string out;
};

ToolRun run_tool(const std::string& args) {
  ToolRun r;
  FILE* p = popen((std::string(WOK_RUN_TOOL) + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write_model(const ModelBuilder& b, const std::string& name) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << b.bytes();
  return path;
}

TEST(WokRun, RunsAModelOnRandomInputsAndBenchmarksIt) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, 4});
  b.initializer("w", std::vector<float>(12, 0.5f), {4, 3});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("Tanh", {"h"}, {"y"});
  b.output("y", TensorProto::FLOAT, {-1, 3});
  const std::string path = write_model(b, "wok_run_mlp.onnx");
  const ToolRun r = run_tool(path + " --input x=5x4 --bench 3");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("input  x                float32[5, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output y                float32[5, 3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bench: 3 runs, median"), std::string::npos) << r.out;
  // Symbolic dims need a shape.
  const ToolRun missing = run_tool(path);
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.out.find("input 'x' has symbolic dims"), std::string::npos) << missing.out;
  // The same seed gives the same checksum, on either backend.
  const ToolRun jit = run_tool(path + " --input x=5x4 --backend jit");
  const ToolRun pre = run_tool(path + " --input x=5x4 --backend precompiled");
  const auto checksum = [](const std::string& out) { return out.substr(out.find("output y")); };
  EXPECT_EQ(checksum(jit.out), checksum(pre.out));
}

TEST(WokRun, ReportsAModelItCannotImport) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  b.node("NonMaxSuppression", {"x", "x"}, {"y"}, "nms");
  b.output("y", TensorProto::FLOAT, {2});
  const ToolRun r = run_tool(write_model(b, "wok_run_bad.onnx"));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("op NonMaxSuppression: 'nms'"), std::string::npos) << r.out;
}

}  // namespace

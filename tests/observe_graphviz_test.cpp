// The dumped Graphviz view: fused groups as clusters, fusion breaks with
// their reason, and each node's call site.
#include "observe_test_util.h"
#include "wok/jit/graphviz.h"
#include "wok/jit/pipeline.h"
#include "wok/jit/plan_graph.h"

namespace {

TEST(ObserveGraphviz, MarksGroupsBreaksAndCallSites) {
  const wok::RegisteredOp& exp = wok::OpRegistry::global().get("exp");
  const wok::RegisteredOp& neg = wok::OpRegistry::global().get("neg");
  const wok::RegisteredOp& matmul = wok::OpRegistry::global().get("matmul");
  wok::Attrs none;
  wok::Fragment f;
  for (int i = 0; i < 5; ++i) f.values.push_back({wok::Shape{4, 4}, wok::DType::kFloat32, wok::Device::cpu()});
  f.inputs = {0};
  const unsigned line = __LINE__ + 1;
  f.nodes.push_back({&exp, &none, {0}, {1}, std::source_location::current()});
  f.nodes.push_back({&neg, &none, {1}, {2}, std::source_location::current()});
  f.nodes.push_back({&matmul, &none, {2, 2}, {3}, std::source_location::current()});
  f.nodes.push_back({&exp, &none, {3}, {4}, std::source_location::current()});
  f.outputs = {4};
  // The CUDA target leaves matmul to its precompiled kernel: a break.
  wok::jit::PlanGraph g(f, wok::jit::cuda_target());
  wok::jit::run_graph_passes(g);
  std::string dot = wok::jit::to_graphviz(g);
  EXPECT_NE(dot.find("subgraph cluster_"), std::string::npos) << dot;
  EXPECT_NE(dot.find("fused kernel"), std::string::npos) << dot;
  EXPECT_NE(dot.find("not fused: "), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"break\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("@ observe_graphviz_test.cpp:" + std::to_string(line)), std::string::npos) << dot;
  EXPECT_NE(dot.find("@ observe_graphviz_test.cpp:" + std::to_string(line + 2)), std::string::npos) << dot;
}

}  // namespace

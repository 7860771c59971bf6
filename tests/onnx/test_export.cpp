// jit::export_onnx: every zoo model's graph exports (fixed and dynamic batch,
// before and after the passes, opsets 13-17) and passes ONNX's checker and
// strict shape inference; the file names inputs, outputs and weights as the
// graph does; unsupported ops are listed together.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <set>

#include "ember/jit/onnx.h"
#include "ember/jit/passes/optimize.h"
#include "jit/graph_test_util.h"
#include "onnx/zoo_graphs.h"

namespace ember::jit {
namespace {

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

TEST(OnnxExport, EveryZooModelExportsAndPassesTheChecker) {
  for (const onnx_test::ZooCase& c : onnx_test::zoo_cases())
    for (bool dynamic : {false, true})
      for (int level : {0, 2}) {
        SCOPED_TRACE(fmt::format("{} dynamic={} optimize={}", c.name, dynamic, level));
        const Graph g = optimize(onnx_test::trace_case(c, dynamic), level, OptimizeTarget::portable).graph;
        std::string bytes;
        ASSERT_NO_THROW(bytes = export_onnx_bytes(g)) << g.str();
        const onnx::ModelProto m = parse(bytes);
        EXPECT_EQ(m.opset_import(0).version(), 17);
        EXPECT_EQ(m.producer_name(), "ember");
        ASSERT_EQ(m.graph().input_size(), static_cast<int>(c.example.size()));
        const auto& dim0 = m.graph().input(0).type().tensor_type().shape().dim(0);
        if (dynamic) EXPECT_EQ(dim0.dim_param(), "batch");
        else EXPECT_EQ(dim0.dim_value(), 3);
        EXPECT_EQ(m.graph().output(0).name(), "output0");
        // Weights are initializers under their module paths.
        std::set<std::string> inits;
        for (const onnx::TensorProto& t : m.graph().initializer()) inits.insert(t.name());
        for (const Constant& k : g.constants) EXPECT_TRUE(inits.count(k.name)) << k.name;
        if (level == 0) {
          for (const auto& [name, p] : c.module->named_parameters()) EXPECT_TRUE(inits.count(name)) << name;
        }
      }
}

TEST(OnnxExport, OpsetsThirteenToSeventeenAndNoOther) {
  const onnx_test::ZooCase c = onnx_test::zoo_cases()[1];  // cnn
  const Graph g = onnx_test::trace_case(c, true);
  for (int opset = kOnnxMinOpset; opset <= kOnnxMaxOpset; ++opset) {
    OnnxExportOptions o;
    o.opset = opset;
    EXPECT_EQ(parse(export_onnx_bytes(g, o)).opset_import(0).version(), opset);
  }
  for (int opset : {12, 18}) {
    OnnxExportOptions o;
    o.opset = opset;
    try {
      export_onnx_bytes(g, o);
      ADD_FAILURE() << "opset " << opset << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("opset {} is not supported (expected 13 to 17)", opset)),
                std::string::npos) << e.what();
    }
  }
}

TEST(OnnxExport, TheFileIsWrittenAndPassesTheCheckerFromDisk) {
  const onnx_test::ZooCase c = onnx_test::zoo_cases()[0];  // mlp
  const Graph g = onnx_test::trace_case(c, true);
  const std::string path = ::testing::TempDir() + "/ember_export_mlp.onnx";
  export_onnx(g, path, 13);
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_NO_THROW(onnx::checker::check_model(path));
  EXPECT_EQ(std::filesystem::file_size(path), export_onnx_bytes(g, [] {
              OnnxExportOptions o;
              o.opset = 13;
              return o;
            }()).size());
  std::filesystem::remove(path);
}

// Kinds with no mapping: one error naming all of them with their counts.
TEST(OnnxExport, UnsupportedOpsAreListedTogetherWithCounts) {
  using testing::node;
  Graph g;
  TensorType f{kFloat32, {{2, {}}, {3, {}}}};
  const int x = g.add_value(f), a = g.add_value(f), b = g.add_value(f), y = g.add_value(f);
  g.inputs = {{"x", x}};
  g.nodes = {node("lgamma", {x}, {a}), node("digamma", {a}, {b}), node("lgamma", {b}, {y})};
  g.outputs = {{"y", y}};
  EXPECT_EQ(onnx_unsupported_ops(g), (std::vector<std::pair<std::string, int64_t>>{{"digamma", 1}, {"lgamma", 2}}));
  try {
    export_onnx_bytes(g);
    ADD_FAILURE() << "exported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 op kinds of the graph have no ONNX mapping: digamma (1x), lgamma (2x)"),
              std::string::npos) << e.what();
  }
}

// A view the strides cannot express densely (overlapping windows) fails naming the node.
TEST(OnnxExport, AViewWithNoDenseFormNamesTheNode) {
  using testing::node;
  Graph g;
  const int x = g.add_value({kFloat32, {{6, {}}}}), y = g.add_value({kFloat32, {{3, {}}, {4, {}}}});
  g.inputs = {{"x", x}};
  Node v = node("as_strided", {x}, {y});
  v.attrs = {{"sizes", std::vector<int64_t>{3, 4}}, {"strides", std::vector<int64_t>{1, 1}}, {"offset", int64_t{0}}};
  v.scope = "unfold";
  g.nodes = {v};
  g.outputs = {{"y", y}};
  try {
    export_onnx_bytes(g);
    ADD_FAILURE() << "exported";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("export_onnx: node 0 (as_strided, in unfold)"), std::string::npos) << w;
    EXPECT_NE(w.find("no ONNX form"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace ember::jit

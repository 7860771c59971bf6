// runtime::OnnxModel / Session on .onnx files: the models torch.onnx.export
// wrote (tests/data/gen_onnx.py) give PyTorch's outputs within 1e-5; every
// zoo model exported by jit::export_onnx and read back gives Ember's eager
// outputs; malformed files fail naming the file and the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "ember/io/npy.h"
#include "ember/jit/onnx.h"
#include "ember/jit/passes/optimize.h"
#include "ember/runtime/onnx_model.h"
#include "ember/runtime/session.h"
#include "zoo_graphs.h"

namespace ember::runtime {
namespace {

std::string data(const std::string& name) { return std::string(EMBER_TEST_DATA_DIR) + "/onnx/" + name; }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes().vec(), b.sizes().vec());
  if (!a.sizes().equals(b.sizes()) || a.numel() == 0) return a.numel() == 0 ? 0 : 1e30;
  return max(abs(sub(a.to(kFloat64), b.to(kFloat64)))).item<double>();
}

std::vector<Tensor> inputs_of(const std::string& name) {
  std::vector<Tensor> in;
  for (int i = 0; std::filesystem::exists(data(fmt::format("{}.in{}.npy", name, i))); ++i)
    in.push_back(io::load_npy(data(fmt::format("{}.in{}.npy", name, i))));
  return in;
}

class TorchExported : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchExported, MatchesPyTorchWithin1e5AndRunsAtAnotherBatch) {
  const std::string name = GetParam();
  Session s(data(name + ".onnx"));
  ASSERT_NE(s.onnx(), nullptr);
  const std::vector<Tensor> in = inputs_of(name);
  ASSERT_FALSE(in.empty());
  const Tensor want = io::load_npy(data(name + ".out.npy"));
  const std::vector<Tensor> got = s.run(in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_abs_diff(got[0], want), 1e-5) << name;
  // The batch axis is dynamic: the first row alone gives the first row.
  std::vector<Tensor> first;
  for (const Tensor& t : in) first.push_back(t.narrow(0, 0, 1).contiguous());
  EXPECT_LE(max_abs_diff(s.run(first)[0], want.narrow(0, 0, 1).contiguous()), 1e-5) << name;
  // Named inputs and outputs as the file declares them.
  EXPECT_EQ(s.output_names(), std::vector<std::string>{"output"});
}

INSTANTIATE_TEST_SUITE_P(Onnx, TorchExported,
                         ::testing::Values("mlp", "mlp_opset13", "cnn_bn", "cnn_bn_opset13", "resnet18_narrow", "lstm",
                                           "gru", "transformer", "transformer_opset13"));

TEST(OnnxImport, SignatureAndOpCounts) {
  const OnnxModel m = OnnxModel::load(data("transformer.onnx"));
  const jit::Graph& g = m.signature().graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "tokens");
  EXPECT_EQ(g.type(g.inputs[0].value).str(), "int64[batch=1, seq=1]");
  EXPECT_EQ(m.signature().source.at("opset"), "17");
  bool has_ln = false;
  for (const auto& [op, n] : m.op_counts()) has_ln = has_ln || (op == "LayerNormalization" && n == 4);
  EXPECT_TRUE(has_ln);
  // A sequence length other than the traced one.
  const Tensor tokens = randint(0, 30, {2, 4});
  EXPECT_EQ(m.run({tokens})[0].sizes().vec(), (std::vector<int64_t>{2, 3}));
  // Wrong dtype or rank: the signature says so.
  EXPECT_THROW(m.run({randn({2, 4})}), Error);
}

// Ember -> ONNX -> Ember: every zoo model, fixed and dynamic batch, before
// and after the passes, equals eager within 1e-5 at the traced batch and at
// another one.
TEST(OnnxRoundTrip, EveryZooModelExportedAndImportedMatchesEager) {
  for (const onnx_test::ZooCase& c : onnx_test::zoo_cases())
    for (bool dynamic : {false, true})
      for (int level : {0, 2})
        for (int opset : {13, 17}) {
          SCOPED_TRACE(fmt::format("{} dynamic={} optimize={} opset={}", c.name, dynamic, level, opset));
          const jit::Graph g = jit::optimize(onnx_test::trace_case(c, dynamic), level, jit::OptimizeTarget::portable).graph;
          jit::OnnxExportOptions o;
          o.opset = opset;
          const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, o), c.name);
          for (const auto* in : {&c.example, &c.other}) {
            if (!dynamic && in == &c.other) continue;
            const std::vector<Tensor> want = c.fn(*in);
            std::vector<Tensor> got;
            ASSERT_NO_THROW(got = m.run(*in));
            ASSERT_EQ(got.size(), want.size());
            EXPECT_LE(max_abs_diff(got[0], want[0]), 1e-5);
          }
        }
}

// ---- malformed files ----

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

onnx::ModelProto load_proto(const std::string& name) {
  std::ifstream f(data(name), std::ios::binary);
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromIstream(&f));
  return m;
}

std::string bytes_of(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

TEST(OnnxImport, MalformedFilesFailNamingTheFileAndTheNode) {
  // Not a protobuf at all.
  std::string w = message_of([] { OnnxModel::parse("\xff\xff\xff garbage", "bad.onnx"); });
  EXPECT_NE(w.find("bad.onnx: not an ONNX model"), std::string::npos) << w;
  // A file that does not exist.
  w = message_of([] { Session("/nonexistent/model.onnx"); });
  EXPECT_NE(w.find("/nonexistent/model.onnx"), std::string::npos) << w;
  // An initializer removed: the node reading it is named.
  onnx::ModelProto m = load_proto("mlp.onnx");
  const std::string weight = m.graph().initializer(0).name();
  m.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);
  w = message_of([&] { OnnxModel::parse(bytes_of(m), "cut.onnx"); });
  EXPECT_NE(w.find("cut.onnx: node"), std::string::npos) << w;
  EXPECT_NE(w.find("reads '" + weight + "', which no initializer"), std::string::npos) << w;
  // An initializer whose bytes do not fit its dims.
  m = load_proto("mlp.onnx");
  m.mutable_graph()->mutable_initializer(0)->add_dims(7);
  w = message_of([&] { OnnxModel::parse(bytes_of(m), "dims.onnx"); });
  EXPECT_NE(w.find("dims.onnx: initializer '" + weight + "': raw_data holds"), std::string::npos) << w;
  // Huge dims: refused before any allocation.
  m = load_proto("mlp.onnx");
  m.mutable_graph()->mutable_initializer(0)->add_dims(int64_t{1} << 40);
  w = message_of([&] { OnnxModel::parse(bytes_of(m), "huge.onnx"); });
  EXPECT_NE(w.find("are too large"), std::string::npos) << w;
  // Wrong shapes at run time: the node is named.
  m = load_proto("mlp.onnx");
  onnx::TensorProto& t = *m.mutable_graph()->mutable_initializer(0);
  const int64_t rows = t.dims(0), cols = t.dims(1);
  t.set_dims(0, cols), t.set_dims(1, rows);  // the same bytes, transposed dims
  const OnnxModel bad = OnnxModel::parse(bytes_of(m), "shape.onnx");
  w = message_of([&] { bad.run(inputs_of("mlp")); });
  EXPECT_NE(w.find("shape.onnx: node"), std::string::npos) << w;
  EXPECT_NE(w.find("(Gemm)"), std::string::npos) << w;
}

// Found by fuzz_onnx: an empty tensor in float_data/double_data/int64_data
// form has no buffer, and copying 0 bytes from it was undefined behaviour
// (UBSan: null passed to memcpy). It loads; the node that reads it fails at run time.
TEST(OnnxImport, EmptyTensorsInEveryStorageFormLoad) {
  for (int form = 0; form < 4; ++form) {
    SCOPED_TRACE(form);
    onnx::ModelProto m = load_proto("mlp.onnx");
    onnx::TensorProto& t = *m.mutable_graph()->mutable_initializer(0);
    t.clear_dims();
    t.add_dims(0);
    t.clear_raw_data();
    const int types[] = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE, onnx::TensorProto::INT64,
                         onnx::TensorProto::FLOAT};
    t.set_data_type(types[form]);
    if (form == 3) t.set_raw_data("");
    const OnnxModel empty = OnnxModel::parse(bytes_of(m), "empty.onnx");
    const std::string w = message_of([&] { empty.run(inputs_of("mlp")); });
    EXPECT_NE(w.find("empty.onnx: node"), std::string::npos) << w;
  }
}

TEST(OnnxImport, UnsupportedOpsAreListedWithCounts) {
  onnx::ModelProto m = load_proto("cnn_bn.onnx");
  int changed = 0;
  for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() == "Relu") n.set_op_type("Mish"), ++changed;
    else if (n.op_type() == "Softmax") n.set_op_type("Hardmax"), ++changed;
  }
  ASSERT_EQ(changed, 3);
  const std::string w = message_of([&] { OnnxModel::parse(bytes_of(m), "cnn.onnx"); });
  EXPECT_NE(w.find("cnn.onnx: 2 ONNX op types are not supported: Hardmax (1x), Mish (2x)"), std::string::npos) << w;
}

}  // namespace
}  // namespace ember::runtime

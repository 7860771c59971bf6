// runtime::OnnxModel / Session on .onnx files: the models torch.onnx.export
// wrote (tests/data/gen_onnx.py) give PyTorch's outputs within 1e-5; every
// zoo model exported by jit::export_onnx and read back gives Ember's eager
// outputs; malformed files fail naming the file and the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

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

// The elementwise kinds beyond the zoo's (inverse trig and hyperbolic
// functions, log2/log10/exp2/erfc/trunc, fmod/remainder/floor_divide with
// mixed signs and a zero divisor, cumsum over a middle dim, float and int64)
// export through ONNX's checker and come back through Ember's importer equal
// to eager within 1e-5 (exactly, for the integer ones).
TEST(OnnxRoundTrip, ElementwiseScanAndModuloKindsMatchEager) {
  struct Fn : nn::Module {
    Fn() : nn::Module("Fn") {}
  } module;
  const jit::TraceFn fn = [](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &u = in[1], &a = in[2], &d = in[3], &ia = in[4], &id = in[5];
    std::vector<Tensor> out;
    for (Tensor t : {tan(u), asin(u), acos(u), atan(x), sinh(u), cosh(u), asinh(x), acosh(add(abs(x), 1)), atanh(u),
                     log2(abs(x)), log10(abs(x)), exp2(u), erfc(x), trunc(mul(x, 3))})
      out.push_back(t);
    for (Tensor t : {fmod(a, d), remainder(a, d), floor_divide(a, d), fmod(ia, id), remainder(ia, id),
                     floor_divide(ia, id), cumsum(x, 1), cumsum(ia, 0)})
      out.push_back(t);
    return out;
  };
  manual_seed(5);
  const Tensor a = tensor<float>({7.5f, -7.5f, 7.5f, -7.5f, 0.0f, 3.0f, -2.25f, 1e-3f}, {2, 4});
  const Tensor d = tensor<float>({2.0f, 2.0f, -2.0f, -2.0f, 3.0f, 0.0f, 0.75f, -5.0f}, {2, 4});
  const Tensor ia = tensor<int64_t>({7, -7, 7, -7, 0, 9, -9, 1}, {2, 4});
  const Tensor id = tensor<int64_t>({2, 2, -2, -2, 3, 3, 4, -5}, {2, 4});
  const std::vector<Tensor> inputs{randn({2, 4}), mul(rand({2, 4}), 1.8) - 0.9, a, d, ia, id};
  const jit::Graph g = jit::trace(module, fn, inputs);
  std::set<std::string> kinds;
  for (const jit::Node& n : g.nodes) kinds.insert(n.kind);
  for (const char* k : {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "exp2",
                        "erfc", "trunc", "fmod", "remainder", "floor_divide", "cumsum"})
    EXPECT_TRUE(kinds.contains(k)) << k << " is not in the traced graph:\n" << g.str();
  const std::vector<Tensor> want = fn(inputs);
  for (int opset : {13, 17}) {
    jit::OnnxExportOptions o;
    o.opset = opset;
    const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, o), "kinds");
    const std::vector<Tensor> got = m.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(fmt::format("opset {} output {}", opset, i));
      ASSERT_EQ(got[i].dtype(), want[i].dtype());
      const Tensor w = want[i].to(kFloat64), h = got[i].to(kFloat64);
      // NaN and inf where eager has them (the zero divisor), and the same values elsewhere.
      EXPECT_TRUE(equal(isnan(w), isnan(h)));
      EXPECT_TRUE(equal(isposinf(w), isposinf(h)));
      EXPECT_TRUE(equal(isneginf(w), isneginf(h)));
      const Tensor finite = isfinite(w);
      EXPECT_LE(max(abs(where(finite, w - h, 0.0))).item<double>(), is_floating_point(want[i].dtype()) ? 1e-5 : 0.0);
    }
  }
}

// gather lowers to GatherElements, so grid_sample (bilinear and nearest) and
// take_along_dim export, at a dynamic batch too, and import equal to eager.
TEST(OnnxRoundTrip, GridSampleAndGatherMatchEager) {
  struct Fn : nn::Module {
    Fn() : nn::Module("Fn") {}
  } module;
  const jit::TraceFn fn = [](const std::vector<Tensor>& in) {
    Tensor idx = clamp(floor((in[1].flatten(1) + 1.2) * 37), 0, 89).to(kInt64);
    return std::vector<Tensor>{grid_sample(in[0], in[1], "bilinear", "zeros", false),
                               grid_sample(in[0], in[1], "nearest", "reflection", true),
                               take_along_dim(in[0].flatten(1), idx, 1)};
  };
  manual_seed(6);
  const std::vector<Tensor> example{randn({2, 3, 5, 6}), rand({2, 4, 3, 2}) * 2.4 - 1.2};
  const std::vector<Tensor> other{randn({4, 3, 5, 6}), rand({4, 4, 3, 2}) * 2.4 - 1.2};
  jit::TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}, {1, 0, "batch"}};
  const jit::Graph g = jit::trace(module, fn, example, o);
  for (int opset : {13, 17}) {
    jit::OnnxExportOptions eo;
    eo.opset = opset;
    const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, eo), "sampler");
    for (const auto* in : {&example, &other}) {
      const std::vector<Tensor> want = fn(*in), got = m.run(*in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(fmt::format("opset {} batch {} output {}", opset, (*in)[0].size(0), i));
        EXPECT_LE(max_abs_diff(got[i], want[i]), 1e-5);
      }
    }
  }
}

// sort, argsort and topk export as TopK (K from the input's shape for a
// sort, so the sorted dim may be dynamic) and come back equal to eager.
TEST(OnnxRoundTrip, SortAndTopkMatchEager) {
  struct Fn : nn::Module {
    Fn() : nn::Module("Fn") {}
  } module;
  const jit::TraceFn fn = [](const std::vector<Tensor>& in) {
    auto [v, i] = sort(in[0], 1, true);
    auto [tv, ti] = topk(in[0], 2, 1, false);
    return std::vector<Tensor>{v, i, argsort(in[0], 0), tv, ti};
  };
  manual_seed(7);
  jit::TraceOptions o;
  o.dynamic_dims = {{0, 0, "batch"}, {0, 1, "n"}};
  const jit::Graph g = jit::trace(module, fn, {randn({3, 5})}, o);
  for (int opset : {13, 17}) {
    jit::OnnxExportOptions eo;
    eo.opset = opset;
    const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, eo), "ranker");
    for (const Tensor& x : {randn({3, 5}), randn({4, 7})}) {
      const std::vector<Tensor> want = fn({x}), got = m.run({x});
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(fmt::format("opset {} shape {} output {}", opset, x.sizes().vec(), i));
        EXPECT_EQ(got[i].dtype(), want[i].dtype());
        EXPECT_TRUE(equal(got[i], want[i]));
      }
    }
  }
}

// atan2 (signed zeros and infinities in either argument), copysign, hypot,
// signbit, all and any export as composites and match eager: values within
// 1e-5 (atan2 exactly at +-pi and +-0 where C's signed-zero rules decide).
TEST(OnnxRoundTrip, Atan2CopysignHypotSignbitAllAnyMatchEager) {
  struct Fn : nn::Module {
    Fn() : nn::Module("Fn") {}
  } module;
  const jit::TraceFn fn = [](const std::vector<Tensor>& in) {
    const Tensor &y = in[0], &x = in[1];
    return std::vector<Tensor>{atan2(y, x), copysign(y, x), hypot(y, x), signbit(x), all(gt(y, -1.5), 1),
                               any(gt(y, 1.0), 0)};
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor y = tensor<float>({0.0f, -0.0f, 0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, 2.5f, -0.3f, 1.0f, -2.0f}, {3, 4});
  const Tensor x = tensor<float>({0.0f, 0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -inf, -inf, -1.2f, 0.7f, inf, 3.0f}, {3, 4});
  const jit::Graph g = jit::trace(module, fn, {y, x});
  for (int opset : {13, 17}) {
    jit::OnnxExportOptions eo;
    eo.opset = opset;
    const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, eo), "signed");
    const std::vector<Tensor> want = fn({y, x}), got = m.run({y, x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(fmt::format("opset {} output {}", opset, i));
      ASSERT_EQ(got[i].dtype(), want[i].dtype());
      const Tensor w = want[i].to(kFloat64), h = got[i].to(kFloat64), finite = isfinite(w);
      EXPECT_TRUE(equal(isnan(w), isnan(h)));
      EXPECT_TRUE(equal(isposinf(w), isposinf(h)));
      EXPECT_TRUE(equal(isneginf(w), isneginf(h)));
      EXPECT_LE(max(abs(where(finite, w - h, 0.0))).item<double>(), 1e-5);
      if (i < 2) {
        EXPECT_TRUE(equal(signbit(got[i]), signbit(want[i])));  // the signed zeros too
      }
    }
  }
}

// scatter and scatter_add (so index_put and index_add) export as
// ScatterElements: opset 17 round-trips equal to eager; opset 13 has no
// reduction, so a scatter_add is refused naming the opset it needs.
TEST(OnnxRoundTrip, ScatterAndIndexPutMatchEager) {
  struct Fn : nn::Module {
    Fn() : nn::Module("Fn") {}
  } module;
  const Tensor idx = tensor<int64_t>({2, 0, 1, 2, 0, 0}, {2, 3}), rows = tensor<int64_t>({1, 1, 0});
  const jit::TraceFn fn = [&](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &v = in[1];
    return std::vector<Tensor>{scatter(x, 1, idx, v), scatter_add(x, 1, idx.narrow(1, 0, 2), v),
                               index_add(x, 0, rows, v.narrow(0, 0, 1).expand({3, 3}) * 1),
                               index_put(x, {Tensor(), tensor<int64_t>({0, 2})}, v.narrow(1, 0, 2))};
  };
  manual_seed(8);
  const std::vector<Tensor> in{randn({2, 3}), randn({2, 3})};
  const jit::Graph g = jit::trace(module, fn, in);
  jit::OnnxExportOptions eo;
  eo.opset = 17;
  const OnnxModel m = OnnxModel::parse(jit::export_onnx_bytes(g, eo), "writer");
  const std::vector<Tensor> want = fn(in), got = m.run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_LE(max_abs_diff(got[i], want[i]), 1e-6) << i;
  eo.opset = 13;
  try {
    jit::export_onnx_bytes(g, eo);
    ADD_FAILURE() << "a scatter_add exported at opset 13";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scatter_add needs opset 16"), std::string::npos) << e.what();
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


// ONNX INT16: an initializer in both storage forms (int32_data, one value per
// entry, and raw little-endian bytes) and a graph input, added in int16.
TEST(OnnxImport, Int16TensorsInBothStorageForms) {
  for (bool raw : {false, true}) {
    SCOPED_TRACE(raw);
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    onnx::GraphProto& g = *m.mutable_graph();
    onnx::TensorProto& w = *g.add_initializer();
    w.set_name("w");
    w.set_data_type(onnx::TensorProto::INT16);
    w.add_dims(3);
    const int16_t values[] = {-32768, 258, 32767};
    if (raw) w.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
    else for (int16_t v : values) w.add_int32_data(v);
    for (const char* name : {"x", "y"}) {
      onnx::ValueInfoProto& v = name[0] == 'x' ? *g.add_input() : *g.add_output();
      v.set_name(name);
      v.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT16);
      v.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
    }
    onnx::NodeProto& add = *g.add_node();
    add.set_op_type("Add");
    add.add_input("x");
    add.add_input("w");
    add.add_output("y");
    const OnnxModel model = OnnxModel::parse(bytes_of(m), "int16.onnx");
    const std::vector<Tensor> out = model.run({tensor<int16_t>({1, 2, 1})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), kInt16);
    EXPECT_EQ(out[0].to_vector<int64_t>(), (std::vector<int64_t>{-32767, 260, -32768}));  // wraps as ONNX's Add
  }
}

}  // namespace
}  // namespace ember::runtime

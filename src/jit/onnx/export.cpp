// jit::export_onnx: a Graph as an ONNX ModelProto (Note [onnx export]).
//
// Note [onnx export]: graph inputs and outputs keep their names and types
// (symbolic dims become dim_params), constants become initializers named by
// their module path ("features.0.weight"), and every node is lowered by
// ops.cpp/views.cpp with its module path in the ONNX names. Before anything
// is written, ONNX's checker and its strict shape inference (type checks,
// errors thrown, data propagation: what onnx.checker.check_model(full_check=
// True) runs) must accept the model.
#include "ember/jit/onnx.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/core/error.h"
#include "ember/io/atomic_file.h"
#include "jit/onnx/lower.h"

namespace ember {
const char* version();  // src/ops/tensor_methods.cpp (declared in ember/ember.h)
}  // namespace ember

namespace ember::jit {

namespace {

using onnx_export::Builder;

void set_type(onnx::ValueInfoProto& v, const std::string& name, const TensorType& t) {
  v.set_name(name);
  onnx::TypeProto_Tensor& tt = *v.mutable_type()->mutable_tensor_type();
  tt.set_elem_type(onnx_export::onnx_dtype(t.dtype));
  onnx::TensorShapeProto& shape = *tt.mutable_shape();
  for (const Dim& d : t.shape) {
    onnx::TensorShapeProto_Dimension& dim = *shape.add_dim();
    if (d.is_symbolic()) dim.set_dim_param(d.symbol);
    else dim.set_dim_value(d.size);
  }
}

std::string value_name(const Node& n, size_t index, size_t output) {
  std::string base = n.scope.empty() ? fmt::format("{}_{}", n.kind, index) : fmt::format("{}/{}_{}", n.scope, n.kind, index);
  return output == 0 ? base : fmt::format("{}:{}", base, output);
}

void check(onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    EMBER_ERROR("export_onnx: ONNX's checker rejects the model: {}", e.what());
  }
  onnx::ModelProto inferred = model;
  try {
    onnx::ShapeInferenceOptions o(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), o);
  } catch (const std::exception& e) {
    EMBER_ERROR("export_onnx: ONNX's shape inference rejects the model: {}", e.what());
  }
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> onnx_unsupported_ops(const Graph& g) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [kind, count] : g.op_counts())
    if (!onnx_export::find_lowering(kind)) out.emplace_back(kind, count);
  return out;
}

std::string export_onnx_bytes(const Graph& g, const OnnxExportOptions& options) {
  EMBER_CHECK(options.opset >= kOnnxMinOpset && options.opset <= kOnnxMaxOpset,
              "export_onnx: opset {} is not supported (expected {} to {})", options.opset, kOnnxMinOpset, kOnnxMaxOpset);
  check_graph(g, "export_onnx");
  const auto missing = onnx_unsupported_ops(g);
  if (!missing.empty()) {
    std::vector<std::string> parts;
    for (const auto& [kind, count] : missing) parts.push_back(fmt::format("{} ({}x)", kind, count));
    EMBER_ERROR("export_onnx: {} op kind{} of the graph ha{} no ONNX mapping: {}", missing.size(),
                missing.size() == 1 ? "" : "s", missing.size() == 1 ? "s" : "ve", fmt::join(parts, ", "));
  }
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("ember");
  model.set_producer_version(options.producer_version.empty() ? std::string(version()) : options.producer_version);
  if (!options.doc.empty()) model.set_doc_string(options.doc);
  for (const auto& [k, v] : options.metadata) {
    onnx::StringStringEntryProto& e = *model.add_metadata_props();
    e.set_key(k);
    e.set_value(v);
  }
  onnx::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(options.opset);
  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name("ember");

  Builder b(g, gp, options.opset);
  std::vector<std::string> names(g.values.size());
  auto claim = [&](int v, const std::string& name) {
    names[static_cast<size_t>(v)] = name;
    b.reserve(name);
  };
  for (const NamedValue& in : g.inputs) {
    claim(in.value, in.name);
    set_type(*gp.add_input(), in.name, g.type(in.value));
  }
  for (const Constant& k : g.constants) {
    claim(k.value, k.name);
    b.initializer(k.name, k.data);
  }
  // A node output that is a graph output takes its name; an output that is
  // an input, a constant or another output's value goes through an Identity.
  std::vector<int> aliased;
  for (const NamedValue& o : g.outputs) {
    if (names[static_cast<size_t>(o.value)].empty()) claim(o.value, o.name);
    else aliased.push_back(static_cast<int>(&o - g.outputs.data()));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t o = 0; o < g.nodes[i].outputs.size(); ++o) {
      const int v = g.nodes[i].outputs[o];
      if (v != kNoValue && names[static_cast<size_t>(v)].empty()) claim(v, value_name(g.nodes[i], i, o));
    }

  std::map<int, std::vector<int64_t>> view_strides;
  std::map<int, std::pair<int, SymExpr>> view_root;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    b.set_prefix(n.scope.empty() ? fmt::format("{}_{}", n.kind, i) : fmt::format("{}/{}_{}", n.scope, n.kind, i));
    onnx_export::LowerCtx c{b, g, n, i, names, view_strides, view_root};
    try {
      onnx_export::find_lowering(n.kind)(c);
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.rfind("export_onnx: node", 0) == 0) throw;
      c.fail(what);
    }
    if (n.kind == "as_strided") {
      view_strides[n.outputs.at(0)] = n.attr_ints("strides");
      auto parent = view_root.find(n.inputs.at(0));
      const SymExpr off = onnx_export::sym_ints(n, "offset").at(0);
      // A contiguous view holds its elements in memory order: views of it
      // can read it as their dense base.
      const std::vector<int64_t> sizes = n.attr_ints("sizes"), strides = n.attr_ints("strides");
      bool contiguous = true;
      int64_t expect = 1;
      for (size_t d = sizes.size(); d-- > 0;) {
        if (sizes[d] != 1 && strides[d] != expect) contiguous = false;
        expect *= sizes[d];
      }
      if (contiguous) {
        view_root.erase(n.outputs.at(0));
      } else if (parent == view_root.end()) {
        view_root[n.outputs.at(0)] = {n.inputs.at(0), off};
      } else {
        SymExpr sum = parent->second.second;
        sum.terms.insert(sum.terms.end(), off.terms.begin(), off.terms.end());
        view_root[n.outputs.at(0)] = {parent->second.first, sum};
      }
    }
  }
  b.set_prefix("");
  for (int i : aliased) {
    const NamedValue& o = g.outputs[static_cast<size_t>(i)];
    b.reserve(o.name);
    b.op("Identity", {names[static_cast<size_t>(o.value)]}, o.name);
  }
  for (const NamedValue& o : g.outputs) set_type(*gp.add_output(), o.name, g.type(o.value));
  check(model);
  std::string bytes;
  EMBER_CHECK(model.SerializeToString(&bytes), "export_onnx: protobuf could not serialize the model");
  return bytes;
}

void export_onnx(const Graph& g, const std::string& path, const OnnxExportOptions& options) {
  const std::string bytes = export_onnx_bytes(g, options);
  io::write_file_atomic(path, bytes, "export_onnx");
}

}  // namespace ember::jit

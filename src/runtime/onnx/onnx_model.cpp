// Note [onnx import]: an ONNX file is parsed with ONNX's protobuf classes,
// its initializers become Ember tensors (sizes checked against their bytes,
// counts against the file size), and its nodes are resolved once to value
// slots in file order (an input used before any node defines it is an error,
// as is an op Ember lacks: all of them are listed, with counts). run() then
// calls each node's operator (onnx_ops.cpp) on Ember's ops, eagerly: shapes
// computed in the graph (Shape -> Gather -> Concat -> Reshape, as
// torch.onnx.export writes for dynamic axes) are ordinary small tensors, so a
// model with dynamic axes runs at any size. A node that fails reports the
// file, the node's name and op type, and the cause.
#include "ember/runtime/onnx_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "ember/jit/interpreter.h"
#include "runtime/onnx/onnx_ops.h"

namespace ember::runtime {

using namespace onnx_import;

namespace {

constexpr int kNone = -1;

struct NodeRef {
  onnx::NodeProto proto;  // attributes; initializer-free
  std::vector<int> inputs, outputs;  // slots; kNone for "" (absent)
  std::string label;      // "node 'name' (Op)" for errors
};

std::string label_of(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? fmt::format("node {} ({})", index, n.op_type())
                          : fmt::format("node {} '{}' ({})", index, n.name(), n.op_type());
}

// A dim_param Ember's symbolic sizes can hold ("batch"), else a stand-in.
std::string symbol_for(const std::string& param, const std::string& fallback) {
  if (param.empty()) return fallback;
  std::string s;
  for (char ch : param) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
  try {
    jit::SymExpr::parse(s);
    return s;
  } catch (const Error&) {
    return fallback;
  }
}

jit::TensorType type_of(const onnx::ValueInfoProto& v, const std::string& source, size_t index) {
  if (!v.type().has_tensor_type()) EMBER_ERROR("{}: graph input/output '{}' is not a tensor", source, v.name());
  const onnx::TypeProto_Tensor& t = v.type().tensor_type();
  jit::TensorType out;
  out.dtype = dtype_from_onnx(t.elem_type(), fmt::format("{}: '{}'", source, v.name()));
  if (!t.has_shape()) EMBER_ERROR("{}: graph input/output '{}' has no shape", source, v.name());
  if (t.shape().dim_size() > 16) EMBER_ERROR("{}: '{}' has {} dims (at most 16)", source, v.name(), t.shape().dim_size());
  for (int d = 0; d < t.shape().dim_size(); ++d) {
    const onnx::TensorShapeProto_Dimension& dim = t.shape().dim(d);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) EMBER_ERROR("{}: '{}' dim {} is negative", source, v.name(), d);
      out.shape.push_back({dim.dim_value(), {}});
    } else {
      // A symbolic dim: 1 stands for its size where a size is needed (inspect).
      out.shape.push_back({1, symbol_for(dim.dim_param(), fmt::format("{}_dim{}", index == 0 ? std::string("in") : "io", d))});
    }
  }
  return out;
}

}  // namespace

struct OnnxModel::Impl {
  std::string source;
  int opset = 0;
  Limits limits;
  std::vector<NodeRef> nodes;
  std::vector<Tensor> constants;      // per slot: an initializer, or undefined
  std::vector<int> input_slots, output_slots;
  std::vector<std::vector<int>> dying_after;  // per node: slots read for the last time
  size_t slots = 0;
  jit::ModelFile signature;
  std::vector<std::pair<std::string, int64_t>> counts;
  int64_t parameters = 0;
};

OnnxModel::OnnxModel() : impl_(std::make_unique<Impl>()) {}
OnnxModel::OnnxModel(OnnxModel&&) noexcept = default;
OnnxModel& OnnxModel::operator=(OnnxModel&&) noexcept = default;
OnnxModel::~OnnxModel() = default;

bool is_onnx_path(const std::string& path) { return std::filesystem::path(path).extension() == ".onnx"; }

OnnxModel OnnxModel::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK(f.good(), "{}: cannot open the ONNX file", path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EMBER_CHECK(!f.bad(), "{}: read error", path);
  return parse(bytes, path);
}

OnnxModel OnnxModel::parse(std::string_view bytes, const std::string& source) {
  onnx::ModelProto model;
  EMBER_CHECK(bytes.size() < (size_t{1} << 31), "{}: {} bytes is over protobuf's 2 GiB limit", source, bytes.size());
  EMBER_CHECK(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())),
              "{}: not an ONNX model (the protobuf does not parse)", source);
  EMBER_CHECK(model.has_graph(), "{}: not an ONNX model (no graph)", source);
  OnnxModel m;
  Impl& s = *m.impl_;
  s.source = source;
  // Allocations a node may make from computed shapes: the file's own size in
  // float32 elements, at least 2^26 (a hostile shape cannot ask for more).
  s.limits.max_elements = std::max<int64_t>(int64_t{1} << 26, static_cast<int64_t>(bytes.size()));
  for (const onnx::OperatorSetIdProto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") s.opset = static_cast<int>(o.version());
  EMBER_CHECK(s.opset > 0, "{}: the model imports no default-domain opset", source);
  onnx::GraphProto& g = *model.mutable_graph();

  // Unsupported ops first, all of them with counts.
  std::map<std::string, int64_t> counts, missing;
  for (const onnx::NodeProto& n : g.node()) {
    const std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
    ++counts[op];
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || !find_op(n.op_type())) ++missing[op];
  }
  if (!missing.empty()) {
    std::vector<std::string> parts;
    for (const auto& [op, k] : missing) parts.push_back(fmt::format("{} ({}x)", op, k));
    EMBER_ERROR("{}: {} ONNX op type{} not supported: {}", source, missing.size(), missing.size() == 1 ? " is" : "s are",
                fmt::join(parts, ", "));
  }
  s.counts.assign(counts.begin(), counts.end());

  std::unordered_map<std::string, int> slot;
  auto define = [&](const std::string& name, const std::string& what) {
    EMBER_CHECK(!name.empty(), "{}: {} has an empty name", source, what);
    EMBER_CHECK(slot.emplace(name, static_cast<int>(s.slots)).second, "{}: '{}' ({}) is defined twice", source, name, what);
    return static_cast<int>(s.slots++);
  };
  for (onnx::TensorProto& t : *g.mutable_initializer()) {
    const int k = define(t.name(), "an initializer");
    s.constants.resize(s.slots);
    s.constants[static_cast<size_t>(k)] = tensor_from_proto(t, fmt::format("{}: initializer '{}'", source, t.name()), s.limits);
    s.parameters += s.constants[static_cast<size_t>(k)].numel();
    t.Clear();  // its bytes now live in the tensor
  }
  jit::Graph& sig = s.signature.graph;
  for (int i = 0; i < g.input_size(); ++i) {
    const onnx::ValueInfoProto& v = g.input(i);
    if (slot.count(v.name())) continue;  // an initializer listed as an input (IR < 4): a constant
    s.input_slots.push_back(define(v.name(), "a graph input"));
    sig.inputs.push_back({v.name(), sig.add_value(type_of(v, source, 0))});
  }
  std::vector<int> last_use;
  for (int i = 0; i < g.node_size(); ++i) {
    NodeRef r;
    r.proto = g.node(i);
    r.label = label_of(r.proto, i);
    EMBER_CHECK(r.proto.attribute_size() <= 256 && r.proto.input_size() <= 4096 && r.proto.output_size() <= 4096,
                "{}: {} has too many inputs, outputs or attributes", source, r.label);
    for (const onnx::AttributeProto& a : r.proto.attribute())
      EMBER_CHECK(a.type() != onnx::AttributeProto::GRAPH && a.type() != onnx::AttributeProto::GRAPHS,
                  "{}: {} has a sub-graph attribute '{}' (If/Loop/Scan are not supported)", source, r.label, a.name());
    for (const std::string& in : r.proto.input()) {
      if (in.empty()) {
        r.inputs.push_back(kNone);
        continue;
      }
      auto it = slot.find(in);
      EMBER_CHECK(it != slot.end(), "{}: {} reads '{}', which no initializer, graph input or earlier node defines",
                  source, r.label, in);
      r.inputs.push_back(it->second);
    }
    for (const std::string& out : r.proto.output()) r.outputs.push_back(out.empty() ? kNone : define(out, r.label));
    s.nodes.push_back(std::move(r));
  }
  for (int i = 0; i < g.output_size(); ++i) {
    const onnx::ValueInfoProto& v = g.output(i);
    auto it = slot.find(v.name());
    EMBER_CHECK(it != slot.end(), "{}: graph output '{}' is never defined", source, v.name());
    s.output_slots.push_back(it->second);
    sig.outputs.push_back({v.name(), sig.add_value(type_of(v, source, 1))});
  }
  EMBER_CHECK(!s.output_slots.empty(), "{}: the graph has no outputs", source);
  s.constants.resize(s.slots);
  // Free each intermediate after its last reader.
  last_use.assign(s.slots, -1);
  for (size_t i = 0; i < s.nodes.size(); ++i)
    for (int in : s.nodes[i].inputs)
      if (in != kNone) last_use[static_cast<size_t>(in)] = static_cast<int>(i);
  for (int o : s.output_slots) last_use[static_cast<size_t>(o)] = static_cast<int>(s.nodes.size());
  s.dying_after.resize(s.nodes.size());
  for (size_t v = 0; v < s.slots; ++v)
    if (!s.constants[v].defined() && last_use[v] >= 0 && last_use[v] < static_cast<int>(s.nodes.size()))
      s.dying_after[static_cast<size_t>(last_use[v])].push_back(static_cast<int>(v));
  s.signature.producer = fmt::format("onnx: {} {}", model.producer_name(), model.producer_version());
  s.signature.source = {{"format", "onnx"},
                        {"opset", std::to_string(s.opset)},
                        {"ir_version", std::to_string(model.ir_version())},
                        {"file", source}};
  // metadata_props (ember export stores its source entries there: class
  // names, the input transform, the run) unless they clash with the above.
  for (const onnx::StringStringEntryProto& e : model.metadata_props()) s.signature.source.emplace(e.key(), e.value());
  return m;
}

std::vector<Tensor> OnnxModel::run(const std::vector<Tensor>& inputs) const {
  const Impl& s = *impl_;
  jit::check_inputs(s.signature.graph, inputs);
  NoGradGuard no_grad;
  std::vector<Tensor> env = s.constants;
  for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(s.input_slots[i])] = inputs[i];
  std::vector<Tensor> in;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeRef& n = s.nodes[i];
    in.clear();
    for (int k : n.inputs) {
      if (k != kNone && !env[static_cast<size_t>(k)].defined())
        EMBER_ERROR("{}: {}: input '{}' has no value (its producer did not output it)", s.source, n.label,
                    n.proto.input(static_cast<int>(in.size())));
      in.push_back(k == kNone ? Tensor() : env[static_cast<size_t>(k)]);
    }
    OpCtx c{n.proto, in, s.opset, s.limits};
    std::vector<Tensor> out;
    try {
      out = find_op(n.proto.op_type())(c);
    } catch (const Error& e) {
      // Internal asserts stay as they are (a bug, not a bad file); anything
      // but ember::Error (bad_alloc...) propagates unchanged.
      if (std::string_view(e.what()).rfind("internal assert failed at ", 0) == 0) throw;
      EMBER_ERROR("{}: {}: {}", s.source, n.label, e.what());
    }
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o] == kNone) continue;
      if (o >= out.size()) EMBER_ERROR("{}: {}: output {} is not supported", s.source, n.label, o);
      env[static_cast<size_t>(n.outputs[o])] = out[o];
    }
    for (int v : s.dying_after[i]) env[static_cast<size_t>(v)] = Tensor();
  }
  std::vector<Tensor> result;
  for (size_t o = 0; o < s.output_slots.size(); ++o) {
    Tensor t = env[static_cast<size_t>(s.output_slots[o])];
    if (!t.defined()) EMBER_ERROR("{}: graph output '{}' has no value", s.source, s.signature.graph.outputs[o].name);
    const jit::TensorType& want = s.signature.graph.type(s.signature.graph.outputs[o].value);
    if (t.dtype() != want.dtype || t.dim() != static_cast<int64_t>(want.shape.size()))
      EMBER_ERROR("{}: graph output '{}' is {}[{}], but the file declares {}", s.source,
                  s.signature.graph.outputs[o].name, to_string(t.dtype()), fmt::join(t.sizes().vec(), ", "), want.str());
    result.push_back(t.contiguous());
  }
  return result;
}

const jit::ModelFile& OnnxModel::signature() const { return impl_->signature; }
std::vector<std::pair<std::string, int64_t>> OnnxModel::op_counts() const { return impl_->counts; }
int64_t OnnxModel::parameter_count() const { return impl_->parameters; }

// ---- tensors from the file ----

namespace onnx_import {

ScalarType dtype_from_onnx(int type, const std::string& what) {
  switch (type) {
    case onnx::TensorProto::FLOAT: return kFloat32;
    case onnx::TensorProto::DOUBLE: return kFloat64;
    case onnx::TensorProto::FLOAT16: return kFloat16;
    case onnx::TensorProto::BFLOAT16: return ScalarType::BFloat16;
    case onnx::TensorProto::INT64: return kInt64;
    case onnx::TensorProto::INT32: return kInt32;
    case onnx::TensorProto::INT16: return kInt16;
    case onnx::TensorProto::INT8: return kInt8;
    case onnx::TensorProto::UINT8: return ScalarType::UInt8;
    case onnx::TensorProto::BOOL: return kBool;
    default: EMBER_ERROR("{}: ONNX data type {} is not supported", what, type);
  }
}

Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what, const Limits& limits) {
  EMBER_CHECK(t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0,
              "{}: external data is not supported", what);
  const ScalarType dt = dtype_from_onnx(t.data_type(), what);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  EMBER_CHECK(dims.size() <= 16, "{}: {} dims (at most 16)", what, dims.size());
  int64_t numel = 1;
  for (int64_t d : dims) {
    EMBER_CHECK(d >= 0, "{}: negative dim {}", what, d);
    EMBER_CHECK(d == 0 || numel <= limits.max_elements / d, "{}: dims [{}] are too large", what, fmt::join(dims, ", "));
    numel *= d;
  }
  const size_t es = element_size(dt);
  Tensor out = empty(dims, TensorOptions(dt));
  auto* dst = static_cast<char*>(out.data_ptr());
  const size_t want = static_cast<size_t>(numel) * es;
  // An empty tensor's buffers may be null, and memcpy from null is undefined even for 0 bytes.
  auto copy_from = [&](const void* src) {
    if (want > 0) std::memcpy(dst, src, want);
  };
  if (t.has_raw_data()) {
    EMBER_CHECK(t.raw_data().size() == want, "{}: raw_data holds {} bytes, dims [{}] of {} need {}", what,
                t.raw_data().size(), fmt::join(dims, ", "), to_string(dt), want);
    copy_from(t.raw_data().data());
    return out;
  }
  auto count = [&](int n) {
    EMBER_CHECK(n == numel, "{}: holds {} values, dims [{}] need {}", what, n, fmt::join(dims, ", "), numel);
  };
  switch (dt) {
    case kFloat32:
      count(t.float_data_size());
      copy_from(t.float_data().data());
      break;
    case kFloat64:
      count(t.double_data_size());
      copy_from(t.double_data().data());
      break;
    case kInt64:
      count(t.int64_data_size());
      copy_from(t.int64_data().data());
      break;
    case kInt32:
    case kInt16:
    case kInt8:
    case ScalarType::UInt8:
    case kBool:
    case kFloat16:
    case ScalarType::BFloat16:
      // Narrow types are stored one per int32_data entry.
      count(t.int32_data_size());
      for (int64_t k = 0; k < numel; ++k) {
        const int32_t v = t.int32_data(static_cast<int>(k));
        std::memcpy(dst + static_cast<size_t>(k) * es, &v, es);  // little-endian: the low bytes
      }
      break;
    default: EMBER_ERROR("{}: no data for dtype {}", what, to_string(dt));
  }
  return out;
}

}  // namespace onnx_import

}  // namespace ember::runtime

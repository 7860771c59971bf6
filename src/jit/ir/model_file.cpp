// The .ember file: safetensors with the graph JSON in the metadata (key
// "ember.graph"). Reusing safetensors keeps one hardened loader for every
// tensor file Ember reads, and any safetensors reader can list the weights.
#include "ember/jit/model_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "ember/ember.h"
#include "ember/io/safetensors.h"

namespace ember::jit {

namespace {

using json = nlohmann::ordered_json;  // keeps attributes in recorded order

constexpr const char* kGraphKey = "ember.graph";
constexpr const char* kFormatKey = "ember.format";
constexpr const char* kFormatName = "ember-model";

[[noreturn]] void fail(const std::string& source, const std::string& what) { EMBER_ERROR("{}: {}", source, what); }

ScalarType dtype_from(const std::string& name, const std::string& source) {
  for (int i = 0; i < static_cast<int>(ScalarType::NumTypes); ++i)
    if (to_string(static_cast<ScalarType>(i)) == name) return static_cast<ScalarType>(i);
  fail(source, fmt::format("unknown dtype '{}'", name));
}

// JSON has no NaN or infinity: those travel as strings.
json number(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}
double number_from(const json& j, const std::string& source) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail(source, fmt::format("expected a number, got {}", j.dump()));
}

json scalar_json(const Scalar& s) {
  if (s.is_bool()) return {{"bool", s.to_bool()}};
  if (s.is_integral()) return {{"int", s.to_long()}};
  return {{"float", number(s.to_double())}};
}
Scalar scalar_from(const json& j, const std::string& source) {
  if (j.contains("bool")) return Scalar(j.at("bool").get<bool>());
  if (j.contains("int")) return Scalar(j.at("int").get<int64_t>());
  if (j.contains("float")) return Scalar(number_from(j.at("float"), source));
  fail(source, fmt::format("malformed scalar {}", j.dump()));
}

json attr_json(const AttrValue& v) {
  struct V {
    json operator()(bool b) const { return {{"bool", b}}; }
    json operator()(int64_t i) const { return {{"int", i}}; }
    json operator()(double d) const { return {{"float", number(d)}}; }
    json operator()(const Scalar& s) const { return {{"scalar", scalar_json(s)}}; }
    json operator()(ScalarType t) const { return {{"dtype", std::string(to_string(t))}}; }
    json operator()(const std::vector<int64_t>& l) const { return {{"ints", l}}; }
    json operator()(const std::string& s) const { return {{"string", s}}; }
  };
  return std::visit(V{}, v);
}
AttrValue attr_from(const json& j, const std::string& source) {
  if (!j.is_object() || j.size() != 1) fail(source, fmt::format("malformed attribute {}", j.dump()));
  const std::string& type = j.begin().key();
  const json& v = j.begin().value();
  if (type == "bool") return v.get<bool>();
  if (type == "int") return v.get<int64_t>();
  if (type == "float") return number_from(v, source);
  if (type == "scalar") return scalar_from(v, source);
  if (type == "dtype") return dtype_from(v.get<std::string>(), source);
  if (type == "ints") return v.get<std::vector<int64_t>>();
  if (type == "string") return v.get<std::string>();
  fail(source, fmt::format("unknown attribute type '{}'", type));
}

const char* kind_name(Constant::Kind k) {
  return k == Constant::Kind::Parameter ? "parameter" : k == Constant::Kind::Buffer ? "buffer" : "inline";
}

json type_json(const TensorType& t) {
  json shape = json::array();
  for (const Dim& d : t.shape)
    shape.push_back(d.is_symbolic() ? json{{"symbol", d.symbol}, {"size", d.size}} : json(d.size));
  return {{"dtype", std::string(to_string(t.dtype))}, {"shape", shape}};
}

TensorType type_from(const json& j, const std::string& source) {
  TensorType t;
  t.dtype = dtype_from(j.at("dtype").get<std::string>(), source);
  int64_t numel = 1;
  for (const json& d : j.at("shape")) {
    Dim dim;
    if (d.is_object()) {
      dim.symbol = d.at("symbol").get<std::string>();
      dim.size = d.at("size").get<int64_t>();
      if (dim.symbol.empty()) fail(source, "a symbolic dim with an empty name");
    } else {
      dim.size = d.get<int64_t>();
    }
    if (dim.size < 0) fail(source, fmt::format("negative size {} in a value's shape", dim.size));
    // The interpreter allocates these: a product that overflows is hostile.
    if (dim.size != 0 && numel > std::numeric_limits<int64_t>::max() / dim.size)
      fail(source, fmt::format("a value's shape {} overflows int64", j.at("shape").dump()));
    numel *= dim.size;
    t.shape.push_back(std::move(dim));
  }
  return t;
}

int value_id(const json& j, size_t nvalues, const std::string& source, bool allow_absent) {
  const int64_t v = j.get<int64_t>();
  if (allow_absent && v == kNoValue) return kNoValue;
  if (v < 0 || static_cast<size_t>(v) >= nvalues)
    fail(source, fmt::format("value id {} out of range (the graph has {} values)", v, nvalues));
  return static_cast<int>(v);
}

}  // namespace

namespace {

json graph_json(const Graph& g, bool top_level);

json node_json(const Node& n) {
  json attrs = json::object();
  for (const Attr& a : n.attrs) attrs[a.name] = attr_json(a.value);
  json node = {{"op", n.kind}, {"inputs", n.inputs}, {"outputs", n.outputs}, {"attrs", attrs}};
  if (!n.scope.empty()) node["scope"] = n.scope;
  if (!n.sym_attrs.empty()) {
    json sym = json::object();
    for (const Node::SymAttr& sa : n.sym_attrs) sym[sa.name] = sa.exprs;
    node["sym_attrs"] = sym;
  }
  if (!n.subgraphs.empty()) {
    json subs = json::array();
    for (const std::shared_ptr<const Graph>& sub : n.subgraphs) {
      EMBER_CHECK(sub, "save_model: a {} node has a missing sub-graph", n.kind);
      subs.push_back(graph_json(*sub, false));
    }
    node["subgraphs"] = subs;
  }
  return node;
}

// values, inputs, outputs, constants (the top level only: sub-graphs hold
// none, Note [control flow]) and nodes.
json graph_json(const Graph& g, bool top_level) {
  json values = json::array();
  for (const Value& v : g.values) values.push_back(type_json(v.type));
  auto named = [](const std::vector<NamedValue>& list) {
    json a = json::array();
    for (const NamedValue& n : list) a.push_back({{"name", n.name}, {"value", n.value}});
    return a;
  };
  json nodes = json::array();
  for (const Node& n : g.nodes) nodes.push_back(node_json(n));
  json j = {{"values", values}, {"inputs", named(g.inputs)}, {"outputs", named(g.outputs)}};
  if (top_level) {
    json constants = json::array();
    for (const Constant& c : g.constants)
      constants.push_back({{"name", c.name}, {"value", c.value}, {"kind", kind_name(c.kind)}});
    j["constants"] = constants;
  }
  j["nodes"] = nodes;
  return j;
}

}  // namespace

std::string graph_to_json(const ModelFile& m) {
  json j = {{"format", kFormatName},
            {"format_version", m.format_version},
            {"producer", m.producer.empty() ? fmt::format("ember {}", version()) : m.producer},
            {"source", m.source}};
  j.update(graph_json(m.graph, true));
  return j.dump(1);
}

namespace {

// Sub-graphs nest; a hostile file must not nest them deeply enough to exhaust the stack.
constexpr int kMaxSubgraphDepth = 32;

Graph graph_from(const json& j, const std::string& source, int depth, int file_version);

Node node_from(const json& n, size_t nv, const std::string& source, int depth, int file_version) {
  Node node;
  node.kind = n.at("op").get<std::string>();
  if (!is_known_kind(node.kind)) fail(source, fmt::format("unknown op '{}' (written by a newer Ember?)", node.kind));
  if (node.kind == "linear_dynamic_int8" && file_version < 2)
    fail(source, fmt::format("op '{}' needs format version 2, the file says {}", node.kind, file_version));
  if ((is_static_int8_kind(node.kind) || node.kind == "rnn_layer_dynamic_int8") && file_version < 3)
    fail(source, fmt::format("op '{}' needs format version 3, the file says {}", node.kind, file_version));
  for (const json& v : n.at("inputs")) node.inputs.push_back(value_id(v, nv, source, true));
  for (const json& v : n.at("outputs")) node.outputs.push_back(value_id(v, nv, source, true));
  for (auto it = n.at("attrs").begin(); it != n.at("attrs").end(); ++it)
    node.attrs.push_back({it.key(), attr_from(it.value(), fmt::format("{} attribute '{}'", source, it.key()))});
  if (n.contains("scope")) node.scope = n.at("scope").get<std::string>();
  if (n.contains("sym_attrs"))
    for (auto it = n.at("sym_attrs").begin(); it != n.at("sym_attrs").end(); ++it)
      node.sym_attrs.push_back({it.key(), it.value().get<std::vector<std::string>>()});
  if (n.contains("subgraphs")) {
    if (depth >= kMaxSubgraphDepth) fail(source, fmt::format("sub-graphs nested deeper than {}", kMaxSubgraphDepth));
    const std::vector<std::string> names = subgraph_names(node.kind);
    size_t k = 0;
    for (const json& sub : n.at("subgraphs")) {
      const std::string where = fmt::format("{} ({}) sub-graph {}{}", source, node.kind, k,
                                            k < names.size() ? fmt::format(" ('{}')", names[k]) : std::string());
      node.subgraphs.push_back(std::make_shared<const Graph>(graph_from(sub, where, depth + 1, file_version)));
      ++k;
    }
  }
  return node;
}

// `source` names the graph in errors ("model.ember", "model.ember: node 3 (cond) sub-graph 0 ('then')");
// depth 0 is the top level.
Graph graph_from(const json& j, const std::string& source, int depth, int file_version) {
  if (!j.is_object()) fail(source, fmt::format("a graph must be a JSON object, got {}", j.type_name()));
  Graph g;
  for (const json& v : j.at("values")) g.values.push_back({type_from(v, source)});
  const size_t nv = g.values.size();
  for (const json& in : j.at("inputs"))
    g.inputs.push_back({in.at("name").get<std::string>(), value_id(in.at("value"), nv, source, false)});
  for (const json& out : j.at("outputs"))
    g.outputs.push_back({out.at("name").get<std::string>(), value_id(out.at("value"), nv, source, false)});
  const json no_constants = json::array();
  for (const json& c : depth == 0 ? j.at("constants") : j.value("constants", no_constants)) {
    Constant k;
    k.name = c.at("name").get<std::string>();
    k.value = value_id(c.at("value"), nv, source, false);
    const std::string kind = c.at("kind").get<std::string>();
    if (kind == "parameter") k.kind = Constant::Kind::Parameter;
    else if (kind == "buffer") k.kind = Constant::Kind::Buffer;
    else if (kind == "inline") k.kind = Constant::Kind::Inline;
    else fail(source, fmt::format("constant '{}': unknown kind '{}'", k.name, kind));
    g.constants.push_back(std::move(k));
  }
  if (depth > 0 && !g.constants.empty())
    fail(source, "a sub-graph holds constants; sub-graphs take what they read from outside as inputs");
  size_t index = 0;
  for (const json& n : j.at("nodes")) {
    g.nodes.push_back(node_from(n, nv, fmt::format("{}: node {}", source, index), depth, file_version));
    ++index;
  }
  return g;
}

}  // namespace

ModelFile graph_from_json(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(source, fmt::format("the graph is not valid JSON ({})", e.what()));
  }
  ModelFile m;
  try {
    if (!j.is_object() || j.value("format", "") != kFormatName)
      fail(source, fmt::format("not an Ember model graph (expected \"format\": \"{}\")", kFormatName));
    m.format_version = j.at("format_version").get<int>();
    if (m.format_version < kMinModelFormatVersion || m.format_version > kModelFormatVersion)
      fail(source, fmt::format("format version {} is not supported (this Ember, {}, reads versions {} to {}); "
                               "re-export the model with this version",
                               m.format_version, version(), kMinModelFormatVersion, kModelFormatVersion));
    m.producer = j.at("producer").get<std::string>();
    if (j.contains("source")) m.source = j.at("source").get<std::map<std::string, std::string>>();
    m.graph = graph_from(j, source, 0, m.format_version);
  } catch (const json::exception& e) {
    fail(source, fmt::format("malformed graph JSON: {}", e.what()));
  }
  return m;
}

void save_model(const ModelFile& m, const std::string& path) {
  StateDict tensors;
  for (const Constant& c : m.graph.constants) {
    EMBER_CHECK(c.data.defined(), "save_model {}: constant '{}' has no data", path, c.name);
    tensors.insert(c.name, c.data.contiguous());
  }
  safetensors::Metadata meta{{kFormatKey, fmt::format("{} {}", kFormatName, m.format_version)},
                             {kGraphKey, graph_to_json(m)}};
  safetensors::save_file(tensors, path, meta);
}

ModelFile load_model(const std::string& path) {
  safetensors::Metadata meta;
  StateDict tensors;
  try {
    tensors = safetensors::load_file(path, &meta);
  } catch (const Error& e) {
    EMBER_ERROR("{}: cannot read the model file: {}", path, e.what());
  }
  auto g = meta.find(kGraphKey);
  if (g == meta.end())
    fail(path, fmt::format("not an Ember model file (a safetensors file without the \"{}\" metadata entry); "
                           "write one with `ember export`",
                           kGraphKey));
  ModelFile m = graph_from_json(g->second, path);
  std::set<std::string> used;
  for (Constant& c : m.graph.constants) {
    const TensorType& t = m.graph.type(c.value);
    if (!tensors.contains(c.name))
      fail(path, fmt::format("weight '{}' ({}) is missing from the file", c.name, t.str()));
    Tensor data = tensors.at(c.name);
    if (data.dtype() != t.dtype || data.sizes().vec() != t.sizes())
      fail(path, fmt::format("weight '{}' is {}[{}], but the graph expects {}", c.name, to_string(data.dtype()),
                             fmt::join(data.sizes(), ", "), t.str()));
    c.data = data;
    used.insert(c.name);
  }
  for (const auto& [name, t] : tensors)
    if (!used.count(name)) fail(path, fmt::format("tensor '{}' in the file is not a constant of the graph", name));
  check_graph(m.graph, path);
  return m;
}

}  // namespace ember::jit

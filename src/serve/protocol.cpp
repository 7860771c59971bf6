// JSON tensors for the v2 protocol: flat (or nested) row-major data arrays,
// shapes and dtypes checked against the traced signature before a request
// reaches the batcher, so a bad request never fails a whole batch.
#include "protocol.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "ember/ember.h"

namespace ember::serve {

using nlohmann::json;

namespace {

struct DatatypeRow {
  ScalarType dtype;
  const char* name;
};
constexpr DatatypeRow kDatatypes[] = {
    {kBool, "BOOL"},   {kUInt8, "UINT8"},  {kInt8, "INT8"},      {kInt16, "INT16"}, {kInt32, "INT32"},  {kInt64, "INT64"},
    {kFloat16, "FP16"}, {ScalarType::BFloat16, "BF16"}, {kFloat32, "FP32"}, {kFloat64, "FP64"},
};

[[noreturn]] void bad_request(const std::string& message) { throw HttpError(400, message); }

// Leaves of a nested array in row-major order. The depth is bounded by the
// expected rank so a pathological body cannot recurse deeply.
void flatten(const json& j, size_t depth_left, std::vector<const json*>& out, const std::string& field) {
  if (!j.is_array()) {
    out.push_back(&j);
    return;
  }
  if (depth_left == 0) bad_request(fmt::format("{}: data is nested deeper than the tensor's rank", field));
  for (const json& e : j) flatten(e, depth_left - 1, out, field);
}

// Converting a number the type cannot hold is undefined behaviour (a double
// beyond float's range) or silently wraps (300 into int8): refuse both.
template <typename T>
bool in_range(const json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    double d = v.get<double>();
    return !std::isfinite(d) || std::abs(d) <= static_cast<double>(std::numeric_limits<T>::max());
  } else {
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    int64_t x = v.get<int64_t>();
    return x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           x <= static_cast<int64_t>(std::numeric_limits<T>::max());
  }
}

template <typename T>
Tensor fill(const std::vector<const json*>& leaves, const std::vector<int64_t>& shape, const std::string& field) {
  std::vector<T> values;
  values.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    bool ok = std::is_same_v<T, bool> ? v.is_boolean() : std::is_floating_point_v<T> ? v.is_number() : v.is_number_integer();
    if (!ok) bad_request(fmt::format("{}: data[{}] is {}, expected {}", field, i, v.type_name(),
                                     std::is_same_v<T, bool> ? "a boolean" : std::is_floating_point_v<T> ? "a number" : "an integer"));
    if (!in_range<T>(v))
      bad_request(fmt::format("{}: data[{}] = {} is out of range for the tensor's dtype", field, i, v.dump()));
    values.push_back(v.get<T>());
  }
  return tensor(values, shape);
}

Tensor make_tensor(ScalarType dtype, const std::vector<const json*>& leaves, const std::vector<int64_t>& shape,
                   const std::string& field) {
  switch (dtype) {
    case kBool: return fill<bool>(leaves, shape, field);
    case kUInt8: return fill<uint8_t>(leaves, shape, field);
    case kInt8: return fill<int8_t>(leaves, shape, field);
    case kInt16: return fill<int16_t>(leaves, shape, field);
    case kInt32: return fill<int32_t>(leaves, shape, field);
    case kInt64: return fill<int64_t>(leaves, shape, field);
    case kFloat64: return fill<double>(leaves, shape, field);
    // float16/bfloat16 travel as JSON numbers: read as float32 and convert.
    default: return fill<float>(leaves, shape, field).to(dtype);
  }
}

template <typename T>
json values_of(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return json(std::vector<T>(p, p + c.numel()));
}

json data_json(const Tensor& t) {
  switch (t.dtype()) {
    case kBool: return values_of<bool>(t);
    case kUInt8: return values_of<uint8_t>(t);
    case kInt8: return values_of<int8_t>(t);
    case kInt16: return values_of<int16_t>(t);
    case kInt32: return values_of<int32_t>(t);
    case kInt64: return values_of<int64_t>(t);
    case kFloat64: return values_of<double>(t);
    case kFloat32: return values_of<float>(t);
    default: return values_of<float>(t.to(kFloat32));
  }
}

std::string shape_str(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

const json& member(const json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end()) bad_request(fmt::format("{}: missing \"{}\"", field, key));
  return *it;
}

std::vector<int64_t> parse_shape(const json& j, const std::string& field) {
  if (!j.is_array()) bad_request(fmt::format("{}.shape: expected an array of integers", field));
  std::vector<int64_t> shape;
  for (const json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      bad_request(fmt::format("{}.shape: expected non-negative integers, got {}", field, j.dump()));
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

// Fixed dims must match; a symbol must take one value across all inputs
// (Session::run checks the same, but here the message names the JSON field).
// With `steps_up_to`, dim 1 (a fixed sequence length, Note [sequence
// padding]) may be anything from 1 to its size.
void check_shape(const std::vector<int64_t>& shape, const jit::TensorType& type, const std::string& field,
                 std::map<std::string, int64_t>& symbols, bool steps_up_to) {
  std::string expected = fmt::format("expected shape {} ({})", shape_str(protocol_shape(type)), signature_str(type));
  if (steps_up_to) expected += fmt::format(" with 1 to {} steps in dim 1", type.shape[1].size);
  if (shape.size() != type.shape.size())
    bad_request(fmt::format("{}.shape: {}, got {}", field, expected, shape_str(shape)));
  for (size_t d = 0; d < shape.size(); ++d) {
    const jit::Dim& dim = type.shape[d];
    if (!dim.is_symbolic()) {
      const bool ok = steps_up_to && d == 1 ? shape[d] >= 1 && shape[d] <= dim.size : shape[d] == dim.size;
      if (!ok) bad_request(fmt::format("{}.shape: {}, got {}", field, expected, shape_str(shape)));
      continue;
    }
    // An empty batch has nothing to answer, and kernels need not expect one.
    if (shape[d] < 1) bad_request(fmt::format("{}.shape: dim {} ('{}') must be at least 1, got {}", field, d, dim.symbol, shape[d]));
    auto [it, inserted] = symbols.emplace(dim.symbol, shape[d]);
    if (!inserted && it->second != shape[d])
      bad_request(fmt::format("{}.shape: dim {} is '{}' = {} in another input, got {}", field, d, dim.symbol,
                              it->second, shape[d]));
  }
}

}  // namespace

std::string datatype_name(ScalarType t) {
  for (const DatatypeRow& r : kDatatypes)
    if (r.dtype == t) return r.name;
  EMBER_ERROR("serve: no protocol datatype for {}", to_string(t));
}

std::string signature_str(const jit::TensorType& t) {
  std::vector<std::string> dims;
  for (const jit::Dim& d : t.shape) dims.push_back(d.is_symbolic() ? d.symbol : std::to_string(d.size));
  return fmt::format("{}[{}]", to_string(t.dtype), fmt::join(dims, ", "));
}

std::vector<int64_t> protocol_shape(const jit::TensorType& t) {
  std::vector<int64_t> s;
  for (const jit::Dim& d : t.shape) s.push_back(d.is_symbolic() ? -1 : d.size);
  return s;
}

Signature make_signature(std::vector<std::string> input_names, std::vector<jit::TensorType> input_types,
                         std::vector<std::string> output_names, std::vector<jit::TensorType> output_types) {
  Signature sig{std::move(input_names), std::move(output_names), std::move(input_types), std::move(output_types), {}};
  sig.seq = sequence_layout(sig.input_names, sig.input_types, sig.output_types);
  return sig;
}

json model_metadata(const std::string& name, const Signature& sig) {
  auto tensors = [](const std::vector<std::string>& names, const std::vector<jit::TensorType>& types) {
    json out = json::array();
    for (size_t i = 0; i < names.size(); ++i)
      out.push_back({{"name", names[i]}, {"datatype", datatype_name(types[i].dtype)}, {"shape", protocol_shape(types[i])}});
    return out;
  };
  return {{"name", name},
          {"versions", json::array({"1"})},
          {"platform", "ember"},
          {"inputs", tensors(sig.input_names, sig.input_types)},
          {"outputs", tensors(sig.output_names, sig.output_types)}};
}

namespace {

// The binary tensor data extension: the body is the JSON header followed by
// the inputs' raw bytes (little-endian, row-major) in the order they are listed.
struct BinaryCursor {
  std::string_view bytes;
  size_t offset = 0;
};

Tensor read_binary(const json& size, ScalarType dtype, const std::vector<int64_t>& shape, int64_t numel,
                   BinaryCursor* binary, const std::string& field) {
  if (!binary) bad_request(field + ": binary_data_size given without an Inference-Header-Content-Length header");
  if (!size.is_number_unsigned()) bad_request(field + ".parameters.binary_data_size: expected a byte count");
  const size_t want = static_cast<size_t>(numel) * element_size(dtype);
  if (size.get<uint64_t>() != want)
    bad_request(fmt::format("{}.parameters.binary_data_size: shape {} of {} needs {} bytes, got {}", field,
                            shape_str(shape), datatype_name(dtype), want, size.get<uint64_t>()));
  if (binary->bytes.size() - binary->offset < want)
    bad_request(fmt::format("{}: the body ends {} bytes into this tensor's {}", field,
                            binary->bytes.size() - binary->offset, want));
  Tensor t = empty(shape, dtype);
  std::memcpy(t.data_ptr(), binary->bytes.data() + binary->offset, want);
  binary->offset += want;
  return t;
}

// One entry of "inputs": its index in the signature and its tensor.
std::pair<size_t, Tensor> read_input(const json& in, size_t k, const Signature& sig,
                                     std::map<std::string, int64_t>& symbols, BinaryCursor* binary) {
  std::string field = fmt::format("inputs[{}]", k);
  if (!in.is_object()) bad_request(field + ": expected an object with name, shape, datatype and data");
  const json& name = member(in, "name", field);
  if (!name.is_string()) bad_request(field + ".name: expected a string");
  auto pos = std::find(sig.input_names.begin(), sig.input_names.end(), name.get<std::string>());
  if (pos == sig.input_names.end())
    bad_request(fmt::format("{}.name: unknown input '{}'; the model's inputs are {}", field, name.get<std::string>(),
                            fmt::join(sig.input_names, ", ")));
  size_t i = static_cast<size_t>(pos - sig.input_names.begin());
  field = fmt::format("inputs[{}] ('{}')", k, sig.input_names[i]);
  const jit::TensorType& type = sig.input_types[i];
  const json& datatype = member(in, "datatype", field);
  if (datatype != datatype_name(type.dtype))
    bad_request(fmt::format("{}.datatype: expected \"{}\", got {}", field, datatype_name(type.dtype), datatype.dump()));
  std::vector<int64_t> shape = parse_shape(member(in, "shape", field), field);
  const bool steps_up_to = sig.seq.active() && sig.seq.padded_inputs[i] && !type.shape[1].is_symbolic();
  check_shape(shape, type, field, symbols, steps_up_to);
  int64_t numel = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(numel, s, &numel)) bad_request(fmt::format("{}.shape: {} is too large", field, shape_str(shape)));
  auto params = in.find("parameters");
  if (params != in.end() && params->is_object() && params->contains("binary_data_size"))
    return {i, read_binary(params->at("binary_data_size"), type.dtype, shape, numel, binary, field)};
  std::vector<const json*> leaves;
  flatten(member(in, "data", field), shape.size() + 1, leaves, field + ".data");
  if (static_cast<int64_t>(leaves.size()) != numel)
    bad_request(fmt::format("{}.data: shape {} needs {} values, got {}", field, shape_str(shape), numel, leaves.size()));
  return {i, make_tensor(type.dtype, leaves, shape, field + ".data")};
}

// Note [sequence padding]: every sequence input of a request has the same
// steps L, each length is in [1, L], and fixed-length inputs are padded.
void pad_sequences(std::vector<Tensor>& inputs, const Signature& sig) {
  const SequenceLayout& seq = sig.seq;
  int64_t steps = -1;
  std::string first;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!seq.padded_inputs[i]) continue;
    const int64_t l = inputs[i].size(1);
    if (steps >= 0 && l != steps)
      bad_request(fmt::format("inputs ('{}').shape: {} steps in dim 1, but '{}' has {}; the sequence inputs of a "
                              "request have one length", sig.input_names[i], l, first, steps));
    steps = l, first = sig.input_names[i];
  }
  const size_t li = static_cast<size_t>(seq.lengths_input);
  const std::vector<int64_t> lengths = inputs[li].to(kInt64).to_vector<int64_t>();
  for (size_t j = 0; j < lengths.size(); ++j)
    if (lengths[j] < 1 || lengths[j] > steps)
      bad_request(fmt::format("inputs ('{}').data[{}]: expected a length in [1, {}] (dim 1 of '{}'), got {}",
                              sig.input_names[li], j, steps, first, lengths[j]));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (seq.padded_inputs[i] && !sig.input_types[i].shape[1].is_symbolic())
      inputs[i] = pad_dim1(inputs[i], sig.input_types[i].shape[1].size);
}

// Whether the request asks for binary outputs (for all of them: Ember does
// not mix JSON and binary outputs in one response).
bool wants_binary_output(const json& req) {
  auto flag = [](const json& obj, const char* key) {
    auto p = obj.find("parameters");
    return p != obj.end() && p->is_object() && p->value(key, json(false)) == json(true);
  };
  if (flag(req, "binary_data_output")) return true;
  auto outputs = req.find("outputs");
  if (outputs == req.end() || !outputs->is_array()) return false;
  return std::any_of(outputs->begin(), outputs->end(),
                     [&](const json& o) { return o.is_object() && flag(o, "binary_data"); });
}

}  // namespace

InferRequest parse_infer(const std::string& body, const Signature& sig, std::optional<size_t> json_length) {
  if (json_length && *json_length > body.size())
    bad_request(fmt::format("Inference-Header-Content-Length {} exceeds the body's {} bytes", *json_length, body.size()));
  std::string_view text = json_length ? std::string_view(body).substr(0, *json_length) : std::string_view(body);
  BinaryCursor cursor{json_length ? std::string_view(body).substr(*json_length) : std::string_view()};
  json req = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded()) bad_request("malformed JSON in the request body");
  if (!req.is_object()) bad_request("the request body must be a JSON object with \"inputs\"");
  const json& inputs = member(req, "inputs", "request");
  if (!inputs.is_array()) bad_request("inputs: expected an array of tensors");
  InferRequest out;
  out.inputs.resize(sig.input_names.size());
  std::map<std::string, int64_t> symbols;
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto [i, t] = read_input(inputs[k], k, sig, symbols, json_length ? &cursor : nullptr);
    if (out.inputs[i].defined()) bad_request(fmt::format("inputs[{}] ('{}'): given twice", k, sig.input_names[i]));
    out.inputs[i] = std::move(t);
  }
  for (size_t i = 0; i < out.inputs.size(); ++i)
    if (!out.inputs[i].defined())
      bad_request(fmt::format("inputs: missing input '{}' ({} with shape {})", sig.input_names[i],
                              datatype_name(sig.input_types[i].dtype), shape_str(protocol_shape(sig.input_types[i]))));
  if (cursor.offset != cursor.bytes.size())
    bad_request(fmt::format("{} bytes after the last binary input", cursor.bytes.size() - cursor.offset));
  if (sig.seq.active()) pad_sequences(out.inputs, sig);
  out.binary_output = wants_binary_output(req);
  return out;
}

std::vector<Tensor> parse_infer_request(const std::string& body, const Signature& sig) {
  return parse_infer(body, sig).inputs;
}

BinaryResponse infer_response_binary(const std::string& model, const Signature& sig, const std::vector<Tensor>& outputs) {
  json header = infer_response(model, sig, {});
  BinaryResponse r;
  std::string data;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor t = outputs[i].contiguous();
    size_t n = static_cast<size_t>(t.numel()) * element_size(t.dtype());
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    header["outputs"].push_back({{"name", sig.output_names.at(i)}, {"datatype", datatype_name(t.dtype())},
                                 {"shape", shape}, {"parameters", {{"binary_data_size", n}}}});
    data.append(static_cast<const char*>(t.data_ptr()), n);
  }
  r.body = header.dump();
  r.json_length = r.body.size();
  r.body += data;
  return r;
}

json infer_response(const std::string& model, const Signature& sig, const std::vector<Tensor>& outputs) {
  json out = json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    out.push_back({{"name", sig.output_names.at(i)}, {"datatype", datatype_name(t.dtype())}, {"shape", shape},
                   {"data", data_json(t)}});
  }
  return {{"model_name", model}, {"model_version", "1"}, {"outputs", out}};
}

}  // namespace ember::serve

// The KServe / Triton open inference protocol v2 over JSON (issue 17): model
// metadata, request tensors checked against the model's signature, response
// tensors. Private to the server; nothing here knows about HTTP.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/jit/graph.h"
#include "padding.h"

namespace ember::serve {

// An error answered with an HTTP status (400 for a bad request, 404, 503...).
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct Signature {
  std::vector<std::string> input_names, output_names;
  std::vector<jit::TensorType> input_types, output_types;
  SequenceLayout seq;  // padded sequence inputs (Note [sequence padding])
};

// The signature of a model's graph inputs and outputs, with its sequence layout.
Signature make_signature(std::vector<std::string> input_names, std::vector<jit::TensorType> input_types,
                         std::vector<std::string> output_names, std::vector<jit::TensorType> output_types);

// "FP32", "INT64", "BOOL", ...
std::string datatype_name(ScalarType t);
// "float32[batch, 1, 28, 28]": the dims by symbol, without the traced sizes.
std::string signature_str(const jit::TensorType& t);
// The shape as the protocol writes it: -1 for a symbolic dim.
std::vector<int64_t> protocol_shape(const jit::TensorType& t);

nlohmann::json model_metadata(const std::string& name, const Signature& sig);

struct InferRequest {
  std::vector<Tensor> inputs;  // in signature order
  bool binary_output = false;  // answer with infer_response_binary
};

// The request's inputs checked against the signature; throws HttpError(400)
// naming the field and, for a shape, the expected one. Sequence inputs of a
// fixed length come back padded to it, their lengths checked (Note
// [sequence padding]). With json_length (the
// Inference-Header-Content-Length header), the body is that much JSON
// followed by the binary data of inputs that give parameters.binary_data_size.
InferRequest parse_infer(const std::string& body, const Signature& sig, std::optional<size_t> json_length = {});
// JSON bodies only: parse_infer(body, sig).inputs.
std::vector<Tensor> parse_infer_request(const std::string& body, const Signature& sig);

nlohmann::json infer_response(const std::string& model, const Signature& sig, const std::vector<Tensor>& outputs);

// The binary data extension's answer: the JSON header (each output with
// parameters.binary_data_size instead of data), then the outputs' bytes.
struct BinaryResponse {
  std::string body;
  size_t json_length = 0;  // the Inference-Header-Content-Length header
};
BinaryResponse infer_response_binary(const std::string& model, const Signature& sig, const std::vector<Tensor>& outputs);

}  // namespace ember::serve

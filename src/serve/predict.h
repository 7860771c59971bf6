// POST /v1/models/NAME/predict (issue 17): an image file or CSV rows in,
// class names with probabilities out. The request is turned into the model's
// one input the way `ember infer` turns files into it, then joins the same
// batcher as v2 requests. Nothing here knows about HTTP.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/data/datasets/csv.h"
#include "ember/data/image_preprocess.h"
#include "ember/jit/model_file.h"
#include "protocol.h"

namespace ember::serve {

// What predict reads from the .ember file once, at load.
struct PredictInfo {
  std::optional<data::ImagePreprocess> transform;  // source "input_transform" of an image run
  std::optional<data::Standardizer> standardize;   // ... of a CSV run: applied to CSV rows
  std::vector<std::string> class_names;            // source "class_names"
  // How the output becomes probabilities: softmax of logits, unless the
  // graph ends in softmax (as is) or log_softmax (exp).
  enum class Output { Logits, Probabilities, LogProbabilities } output = Output::Logits;
};
// Throws naming the file when its input_transform does not parse.
PredictInfo predict_info(const jit::ModelFile& model, const std::string& path);

struct PredictBody {
  std::string_view bytes;    // the upload: the raw body, or the multipart file
  std::string content_type;  // its Content-Type ("" when none was given)
  std::string name;          // the file name for errors ("body" for a raw body)
};

struct PredictInput {
  Tensor input;      // the model's input [rows, ...]
  std::string kind;  // "image" or "csv"
};

// The body as the model's input; throws HttpError 400 (naming what is wrong
// and what the model expects) or 415 (neither an image nor CSV).
PredictInput predict_input(const PredictBody& body, const PredictInfo& info, const Signature& sig,
                           const std::string& model);

// "?top_k=N": 1 or more; throws HttpError(400) otherwise.
int64_t parse_top_k(const std::string& text);

// {"model_name", "kind", "predictions": [{"top": [{"index", "class", "probability"}...]}...]};
// outputs that are not class scores [rows, classes] come back as "values".
nlohmann::json predict_response(const std::string& model, const std::string& kind, const Tensor& output,
                                const PredictInfo& info, int64_t top_k);

}  // namespace ember::serve

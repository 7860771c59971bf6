// The predict endpoint's input and output: an uploaded image through the
// transform `ember export` recorded (decode, resize, ToTensor, Normalize), or
// CSV rows read as `ember infer` reads a CSV file (raw features, standardised
// as the run's rows were when the file records it), reshaped to the input's
// per-sample shape; the output as top-k classes with probabilities.
#include "predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "ember/data/datasets/csv.h"
#include "ember/ember.h"

namespace ember::serve {

using nlohmann::json;

namespace {

[[noreturn]] void bad_request(const std::string& message) { throw HttpError(400, message); }

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool starts_with(std::string_view s, std::initializer_list<unsigned char> magic) {
  return s.size() >= magic.size() &&
         std::equal(magic.begin(), magic.end(), s.begin(), [](unsigned char m, char c) { return m == static_cast<unsigned char>(c); });
}

// PNG, JPEG, GIF and BMP by their first bytes; TGA (no magic) by an image/* type.
bool is_image(const PredictBody& b) {
  return starts_with(b.bytes, {0x89, 'P', 'N', 'G'}) || starts_with(b.bytes, {0xFF, 0xD8, 0xFF}) ||
         starts_with(b.bytes, {'G', 'I', 'F', '8'}) || starts_with(b.bytes, {'B', 'M'}) ||
         lower(b.content_type).rfind("image/", 0) == 0;
}

bool is_csv_type(const std::string& content_type) {
  const std::string t = lower(content_type.substr(0, content_type.find(';')));
  return t.empty() || t == "text/csv" || t == "text/plain" || t == "application/csv" ||
         t == "application/x-www-form-urlencoded" || t == "application/octet-stream";
}

// "[-1, 1, 28, 28] (float32[batch, 1, 28, 28])"
std::string shape_text(const jit::TensorType& t) {
  return fmt::format("[{}] ({})", fmt::join(protocol_shape(t), ", "), signature_str(t));
}

// Values per sample: the product of the (fixed) dims past the batch.
int64_t per_sample(const jit::TensorType& t) {
  int64_t per = 1;
  for (size_t i = 1; i < t.shape.size(); ++i) per *= t.shape[i].size;
  return per;
}

// [N, ...] float32 -> the input's dtype and per-sample shape (as `ember infer`).
Tensor to_input(Tensor t, const jit::TensorType& want, const std::string& input_name, const std::string& what) {
  std::vector<int64_t> shape = {t.size(0)};
  for (size_t i = 1; i < want.shape.size(); ++i) shape.push_back(want.shape[i].size);
  const int64_t per = per_sample(want);
  const int64_t got = t.numel() / t.size(0);
  if (got != per)
    bad_request(fmt::format("{}: {} values per sample, but input '{}' ({}) takes {} per sample", what, got,
                            input_name, shape_text(want), per));
  if (!want.shape.empty() && !want.shape[0].is_symbolic() && want.shape[0].size != t.size(0))
    bad_request(fmt::format("{}: {} samples, but input '{}' ({}) takes a fixed batch of {}", what, t.size(0),
                            input_name, shape_text(want), want.shape[0].size));
  return t.contiguous().reshape(shape).to(want.dtype).contiguous();
}

}  // namespace

PredictInfo predict_info(const jit::ModelFile& model, const std::string& path) {
  PredictInfo info;
  if (auto it = model.source.find("input_transform"); it != model.source.end()) {
    if (data::Standardizer::is_standardize_json(it->second)) info.standardize = data::Standardizer::from_json(it->second, path);
    else info.transform = data::ImagePreprocess::from_json(it->second, path);
  }
  if (auto it = model.source.find("class_names"); it != model.source.end()) info.class_names = split_names(it->second);
  const jit::Graph& g = model.graph;
  if (g.outputs.size() == 1) {
    for (const jit::Node& n : g.nodes)
      if (n.kind == "softmax" && n.outputs.size() == 1 && n.outputs[0] == g.outputs[0].value)
        info.output = n.attr_bool("log") ? PredictInfo::Output::LogProbabilities : PredictInfo::Output::Probabilities;
  }
  return info;
}

PredictInput predict_input(const PredictBody& body, const PredictInfo& info, const Signature& sig,
                           const std::string& model) {
  if (sig.input_names.size() != 1)
    bad_request(fmt::format("predict takes an image or CSV rows for a model with one input; model '{}' has inputs "
                            "{}: send them to /v2/models/{}/infer", model, fmt::join(sig.input_names, ", "), model));
  const jit::TensorType& want = sig.input_types[0];
  const std::string& input_name = sig.input_names[0];
  if (!is_floating_point(want.dtype) || want.shape.empty())
    bad_request(fmt::format("predict: model '{}' takes {} ({}), not images or rows of numbers; send it to "
                            "/v2/models/{}/infer", model, input_name, signature_str(want), model));
  for (size_t d = 1; d < want.shape.size(); ++d)
    if (want.shape[d].is_symbolic())
      bad_request(fmt::format("predict: input '{}' ({}) has a dynamic dim {} past the batch; send a tensor of a "
                              "chosen shape to /v2/models/{}/infer", input_name, signature_str(want), d, model));
  if (body.bytes.empty())
    bad_request(fmt::format("predict: the {} is empty; expected an image file (PNG, JPEG, BMP, GIF, TGA) or CSV "
                            "rows of numbers", body.name));
  PredictInput out;
  if (is_image(body)) {
    out.kind = "image";
    if (!info.transform)
      bad_request(fmt::format("predict: model '{}' records no input transform (source key input_transform: the "
                              "channels, size and normalisation its run evaluated with), so an image cannot become its "
                              "input '{}' ({}); export the run with `ember export`, or send the preprocessed tensor to "
                              "/v2/models/{}/infer", model, input_name, shape_text(want), model));
    const auto* p = reinterpret_cast<const uint8_t*>(body.bytes.data());
    Tensor image;
    try {
      image = info.transform->decode(std::span<const uint8_t>(p, body.bytes.size()), body.name);
    } catch (const Error& e) {
      bad_request(fmt::format("predict: the {} is not an image this model can take: {}", body.name, e.what()));
    }
    out.input = to_input(image.unsqueeze(0), want, input_name, fmt::format("predict: the {} (image)", body.name));
    return out;
  }
  if (!is_csv_type(body.content_type))
    throw HttpError(415, fmt::format("predict: Content-Type '{}': expected an image (image/png, image/jpeg, ...) or "
                                     "CSV rows (text/csv); v2 JSON tensors go to /v2/models/{}/infer",
                                     body.content_type, model));
  out.kind = "csv";
  std::istringstream in{std::string(body.bytes)};
  Tensor rows;
  try {
    rows = data::parse_csv_numbers(in, "predict: CSV " + body.name);
  } catch (const Error& e) {
    bad_request(fmt::format("{}; expected rows of numbers separated by commas, {} per row for input '{}' ({})",
                            e.what(), per_sample(want), input_name, shape_text(want)));
  }
  if (info.standardize) {
    // Raw features, as the run's CSV rows were before it standardised them.
    if (rows.dim() != 2 || rows.size(1) != info.standardize->mean.size(0))
      bad_request(fmt::format("predict: the {} (CSV) has {} values per row, but model '{}' standardises {} features",
                              body.name, rows.dim() == 2 ? rows.size(1) : 0, model, info.standardize->mean.size(0)));
    rows = info.standardize->apply(rows);
  }
  out.input = to_input(rows, want, input_name, fmt::format("predict: the {} (CSV)", body.name));
  return out;
}

int64_t parse_top_k(const std::string& text) {
  int64_t k = 0;
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) k = std::stoll(text);
  if (k < 1) bad_request(fmt::format("top_k: expected an integer of at least 1, got '{}'", text.substr(0, 40)));
  return k;
}

json predict_response(const std::string& model, const std::string& kind, const Tensor& output,
                      const PredictInfo& info, int64_t top_k) {
  Tensor y = output.to(kFloat32).contiguous();
  json predictions = json::array();
  const bool classes = y.dim() == 2 && y.size(1) >= 2 && is_floating_point(output.dtype());
  if (!classes) {
    // Regression and other outputs: each row's values.
    const int64_t rows = y.dim() == 0 ? 1 : y.size(0);
    Tensor flat = y.reshape({rows, -1});
    for (int64_t r = 0; r < rows; ++r) predictions.push_back({{"values", flat.select(0, r).to_vector<float>()}});
    return {{"model_name", model}, {"kind", kind}, {"predictions", predictions}};
  }
  Tensor p = info.output == PredictInfo::Output::Probabilities    ? y
             : info.output == PredictInfo::Output::LogProbabilities ? exp(y)
                                                                     : softmax(y, 1);
  const int64_t n = y.size(1), k = std::min(top_k, n);
  for (int64_t r = 0; r < y.size(0); ++r) {
    std::vector<float> row = p.select(0, r).contiguous().to_vector<float>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) order[static_cast<size_t>(c)] = c;
    // Highest first; ties by index, so the answer does not depend on the sort.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    json top = json::array();
    for (int64_t i = 0; i < k; ++i) {
      const int64_t c = order[static_cast<size_t>(i)];
      const std::string name = c < static_cast<int64_t>(info.class_names.size()) ? info.class_names[c] : std::to_string(c);
      top.push_back({{"index", c}, {"class", name}, {"probability", row[static_cast<size_t>(c)]}});
    }
    predictions.push_back({{"top", top}});
  }
  return {{"model_name", model}, {"kind", kind}, {"predictions", predictions}};
}

}  // namespace ember::serve

// `ember serve`'s request parsers on untrusted HTTP bodies: the v2 JSON
// request (with and without the binary data extension) against a signature
// with a padded sequence input and its lengths, and the predict body (CSV
// rows, or an image through an input transform). The first byte picks the
// parser. HttpError (a 4xx answer) is a clean rejection like ember::Error.
#include "ember/ember.h"
#include "fuzz_util.h"
#include "predict.h"
#include "protocol.h"

using namespace ember;

namespace {

jit::TensorType type(ScalarType dtype, std::vector<jit::Dim> shape) { return jit::TensorType{dtype, std::move(shape)}; }

// tokens int64 [batch, 6] + lengths int64 [batch] (padded to 6), and x float32 [batch, 3].
const serve::Signature& sequence_signature() {
  static const serve::Signature sig = serve::make_signature(
      {"tokens", "lengths", "x"},
      {type(kInt64, {{2, "batch"}, {6, ""}}), type(kInt64, {{2, "batch"}}), type(kFloat32, {{2, "batch"}, {3, ""}})},
      {"logits"}, {type(kFloat32, {{2, "batch"}, {4, ""}})});
  return sig;
}

// One float32 input [batch, 1, 4, 4], with a grey 4x4 transform.
const serve::Signature& image_signature() {
  static const serve::Signature sig = serve::make_signature(
      {"input"}, {type(kFloat32, {{2, "batch"}, {1, ""}, {4, ""}, {4, ""}})}, {"logits"},
      {type(kFloat32, {{2, "batch"}, {3, ""}})});
  return sig;
}

template <typename F>
void clean(F&& body) {
  fuzz::expect_clean_error([&] {
    try {
      body();
    } catch (const serve::HttpError&) {
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      clean([&] { serve::parse_infer(body, sequence_signature()); });
      break;
    case 1:  // the binary extension: two bytes (little-endian) give the JSON part's length
      if (body.size() >= 2) {
        const size_t json_length = static_cast<uint8_t>(body[0]) | static_cast<size_t>(static_cast<uint8_t>(body[1])) << 8;
        clean([&] { serve::parse_infer(body.substr(2), sequence_signature(), json_length); });
      }
      break;
    default: {
      serve::PredictInfo info;
      info.transform = data::ImagePreprocess{1, 4, 4, {0.5}, {0.25}};
      info.class_names = {"a", "b", "c"};
      const std::string content_type = data[0] % 4 == 2 ? "text/csv" : "image/png";
      clean([&] {
        serve::PredictInput in = serve::predict_input({body, content_type, "body"}, info, image_signature(), "m");
        serve::predict_response("m", in.kind, randn({in.input.size(0), 3}), info, 2);
      });
    }
  }
  return 0;
}

// The v2 JSON tensors on their own (src/serve/protocol.h): every dtype's
// values arrive exactly, nested data is read row-major, out-of-range numbers
// and symbols that disagree across inputs are 400s naming the field.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "protocol.h"

namespace ember::serve {
namespace {

jit::TensorType type(ScalarType dtype, std::vector<jit::Dim> shape) { return jit::TensorType{dtype, std::move(shape)}; }

Signature two_inputs() {
  Signature s;
  s.input_names = {"ids", "mask"};
  s.input_types = {type(kInt8, {{2, "batch"}, {3, ""}}), type(kBool, {{2, "batch"}, {3, ""}})};
  s.output_names = {"count"};
  s.output_types = {type(kInt64, {{2, "batch"}})};
  return s;
}

std::string error_of(const std::string& body) {
  try {
    parse_infer_request(body, two_inputs());
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.what();
  }
  return "no error";
}

TEST(ServeProtocol, ReadsEveryInputInSignatureOrder) {
  std::vector<Tensor> in = parse_infer_request(R"({"inputs": [
      {"name": "mask", "shape": [1, 3], "datatype": "BOOL", "data": [[true, false, true]]},
      {"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [-128, 0, 127]}]})",
                                               two_inputs());
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].dtype(), kInt8);
  EXPECT_TRUE(equal(in[0], tensor(std::vector<int8_t>{-128, 0, 127}, {1, 3})));
  EXPECT_EQ(in[1].dtype(), kBool);
  EXPECT_EQ(in[1].sizes().vec(), (std::vector<int64_t>{1, 3}));
  const bool* m = in[1].data_ptr<bool>();
  EXPECT_TRUE(m[0]);
  EXPECT_FALSE(m[1]);
  EXPECT_TRUE(m[2]);
}

TEST(ServeProtocol, Int16InputsAreRangeChecked) {
  Signature s;
  s.input_names = {"x"};
  s.input_types = {type(kInt16, {{1, ""}, {3, ""}})};
  std::vector<Tensor> in = parse_infer_request(
      R"({"inputs": [{"name": "x", "shape": [1, 3], "datatype": "INT16", "data": [-32768, 258, 32767]}]})", s);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_TRUE(equal(in[0], tensor(std::vector<int16_t>{-32768, 258, 32767}, {1, 3})));
  EXPECT_THROW(parse_infer_request(
                   R"({"inputs": [{"name": "x", "shape": [1, 3], "datatype": "INT16", "data": [1, 40000, 2]}]})", s),
               HttpError);
}

TEST(ServeProtocol, RejectsWhatTheTypeCannotHold) {
  EXPECT_NE(error_of(R"({"inputs": [{"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 300, 2]},
      {"name": "mask", "shape": [1, 3], "datatype": "BOOL", "data": [true, true, true]}]})")
                .find("inputs[0] ('ids').data: data[1] = 300 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"inputs": [{"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 2.5, 2]},
      {"name": "mask", "shape": [1, 3], "datatype": "BOOL", "data": [true, true, true]}]})")
                .find("data[1] is number, expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"inputs": [{"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 2, 3]},
      {"name": "mask", "shape": [1, 3], "datatype": "BOOL", "data": [1, 0, 1]}]})")
                .find("inputs[1] ('mask').data: data[0] is number, expected a boolean"),
            std::string::npos);
}

TEST(ServeProtocol, SymbolsAgreeAcrossInputs) {
  std::string e = error_of(R"({"inputs": [{"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 2, 3]},
      {"name": "mask", "shape": [2, 3], "datatype": "BOOL", "data": [true, true, true, true, true, true]}]})");
  EXPECT_NE(e.find("inputs[1] ('mask').shape: dim 0 is 'batch' = 1 in another input, got 2"), std::string::npos) << e;
  e = error_of(R"({"inputs": [{"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 2, 3]},
      {"name": "ids", "shape": [1, 3], "datatype": "INT8", "data": [1, 2, 3]}]})");
  EXPECT_NE(e.find("inputs[1] ('ids'): given twice"), std::string::npos) << e;
}

TEST(ServeProtocol, ResponseAndMetadata) {
  Signature s = two_inputs();
  nlohmann::json r = infer_response("m", s, {tensor(std::vector<int64_t>{5, -7}, {2})});
  EXPECT_EQ(r.dump(),
            R"({"model_name":"m","model_version":"1","outputs":[{"data":[5,-7],"datatype":"INT64","name":"count","shape":[2]}]})");
  nlohmann::json m = model_metadata("m", s);
  EXPECT_EQ(m.at("inputs").dump(),
            R"([{"datatype":"INT8","name":"ids","shape":[-1,3]},{"datatype":"BOOL","name":"mask","shape":[-1,3]}])");
  EXPECT_EQ(signature_str(s.input_types[0]), "int8[batch, 3]");
}

}  // namespace
}  // namespace ember::serve

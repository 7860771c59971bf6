// An independent runtime reads what jit::export_onnx writes: OpenCV's DNN
// module (Debian's libopencv-dnn-dev, 4.6) loads the exported MLP, CNN and
// ResNet and its outputs match Ember's eager outputs within 1e-4.
#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include "ember/jit/onnx.h"
#include "ember/jit/passes/optimize.h"
#include "zoo_graphs.h"

namespace ember::jit {
namespace {

cv::Mat to_mat(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<int> sizes;
  for (int64_t s : c.sizes()) sizes.push_back(static_cast<int>(s));
  cv::Mat m(static_cast<int>(sizes.size()), sizes.data(), CV_32F);
  std::memcpy(m.ptr<float>(), c.data_ptr(), static_cast<size_t>(c.nbytes()));
  return m;
}

// OpenCV's output for `input`, run from the ONNX bytes.
Tensor run_opencv(const std::string& bytes, const Tensor& input) {
  std::vector<uchar> buf(bytes.begin(), bytes.end());
  cv::dnn::Net net = cv::dnn::readNetFromONNX(buf);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setInput(to_mat(input));
  cv::Mat out = net.forward();
  std::vector<int64_t> sizes;
  for (int d = 0; d < out.dims; ++d) sizes.push_back(out.size[d]);
  Tensor t = empty(sizes, TensorOptions(kFloat32));
  std::memcpy(t.data_ptr(), out.ptr<float>(), static_cast<size_t>(t.nbytes()));
  return t;
}

TEST(OnnxOpenCV, MLPCNNAndResNetMatchEmberWithin1e4) {
  int checked = 0;
  for (const onnx_test::ZooCase& c : onnx_test::zoo_cases()) {
    if (c.name != "mlp" && c.name != "cnn" && c.name != "resnet") continue;
    for (int level : {0, 2}) {
      SCOPED_TRACE(fmt::format("{} optimize={}", c.name, level));
      const Graph g = optimize(onnx_test::trace_case(c, false), level, OptimizeTarget::portable).graph;
      const std::string bytes = export_onnx_bytes(g);
      const Tensor want = c.fn(c.example)[0];
      Tensor got;
      try {
        got = run_opencv(bytes, c.example[0]);
      } catch (const cv::Exception& e) {
        FAIL() << "OpenCV: " << e.what();
      }
      ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
      const double diff = max(abs(sub(got, want))).item<double>();
      EXPECT_LE(diff, 1e-4);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace ember::jit

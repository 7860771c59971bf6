// searchsorted's side= and sorter= refusals, in PyTorch 1.13's words
// (torch.searchsorted(s, v, side='middle') etc.; the values themselves are
// op_db cases: searchsorted.sorter, nd_side_right_sorter, side_left,
// scalar_int32). A sorter index out of range is refused where PyTorch 1.13
// reads past the sequence (it returned [2, 4, 0, 4] for [0, 1, 2, 9]).
#include <gtest/gtest.h>

#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

void expect_error(const std::function<void()>& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying: " << text;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SearchSortedArgs, SideAndSorterAreCheckedAsPyTorchDoes) {
  Tensor s = tensor<double>({5.0, 1.0, 3.0, 7.0}, {4});
  Tensor v = tensor<double>({3.0, 6.0}, {2});
  Tensor idx = tensor<int64_t>({1, 2, 0, 3}, {4});
  expect_error([&] { searchsorted(s, v, false, false, "middle"); },
               "searchsorted: side can only be 'left' or 'right' but got 'middle'");
  expect_error([&] { searchsorted(s, v, false, true, "left"); },
               "side and right can't be set to opposites, got side of left while right was True");
  expect_error([&] { searchsorted(s, v, false, false, std::nullopt, idx.to(kInt32)); },
               "sorter must be a tensor of long dtype but got dtype int32");
  expect_error([&] { searchsorted(s, v, false, false, std::nullopt, idx.narrow(0, 0, 3)); },
               "boundary and sorter must have the same size, but got boundary tensor [4] and sorter tensor [3]");
  expect_error([&] { searchsorted(s, v, false, false, std::nullopt, tensor<int64_t>({0, 1, 2, 9}, {4})); },
               "sorter index out of range: 9 for a sequence of 4 elements");
  // side="right" with right=true agrees, and a Scalar value keeps its precision.
  EXPECT_EQ(searchsorted(s, v, false, true, "right", idx).to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  Tensor ints = tensor<int64_t>({1, 3, 5}, {3});
  EXPECT_EQ(searchsorted(ints, 3.5).item<int64_t>(), 2);
  EXPECT_EQ(searchsorted(ints, 3.5).dim(), 0);
}

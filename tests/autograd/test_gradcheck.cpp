// gradcheck and gradgradcheck (float64 central differences) over every
// differentiable op, on contiguous and transposed inputs, with broadcasting.
// This table is the op_db of autograd: one row per op.
#include <functional>

#include "ember/autograd/gradcheck.h"
#include "ember/ops/nn_functional.h"
#include "test_util.h"

using namespace ember;
using autograd::DiffFn;

namespace {

struct GradCase {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;
  DiffFn fn;
  double lo = -2, hi = 2;  // inputs drawn from [lo, hi]
  bool gradgrad = true;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

variable_list one(Tensor t) { return {std::move(t)}; }

std::vector<GradCase> cases() {
  using V = const variable_list&;
  std::vector<GradCase> c;
  auto unary = [&](std::string name, std::function<Tensor(const Tensor&)> f, double lo = -2, double hi = 2) {
    c.push_back({name, {{3, 4}}, [f](V x) { return one(f(x[0])); }, lo, hi});
  };
  auto binary = [&](std::string name, std::function<Tensor(const Tensor&, const Tensor&)> f, double lo = -2,
                    double hi = 2) {
    c.push_back({name, {{3, 4}, {3, 4}}, [f](V x) { return one(f(x[0], x[1])); }, lo, hi});
    c.push_back({name + "_broadcast", {{3, 4}, {4}}, [f](V x) { return one(f(x[0], x[1])); }, lo, hi});
    c.push_back({name + "_broadcast_col", {{3, 1}, {2, 3, 4}}, [f](V x) { return one(f(x[0], x[1])); }, lo, hi});
  };
  // ---- elementwise ----
  unary("neg", [](const Tensor& x) { return neg(x); });
  unary("abs", [](const Tensor& x) { return abs(x); }, 0.2, 2);
  unary("exp", [](const Tensor& x) { return exp(x); });
  unary("expm1", [](const Tensor& x) { return expm1(x); });
  unary("log", [](const Tensor& x) { return log(x); }, 0.2, 2);
  unary("log1p", [](const Tensor& x) { return log1p(x); }, -0.5, 2);
  unary("sqrt", [](const Tensor& x) { return sqrt(x); }, 0.2, 2);
  unary("rsqrt", [](const Tensor& x) { return rsqrt(x); }, 0.2, 2);
  unary("sin", [](const Tensor& x) { return sin(x); });
  unary("cos", [](const Tensor& x) { return cos(x); });
  unary("tanh", [](const Tensor& x) { return tanh(x); });
  unary("sigmoid", [](const Tensor& x) { return sigmoid(x); });
  unary("relu", [](const Tensor& x) { return relu(x); }, 0.1, 2);
  unary("relu_negative", [](const Tensor& x) { return relu(x); }, -2, -0.1);
  unary("gelu", [](const Tensor& x) { return gelu(x); });
  unary("gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); });
  unary("silu", [](const Tensor& x) { return silu(x); });
  unary("erf", [](const Tensor& x) { return erf(x); });
  unary("reciprocal", [](const Tensor& x) { return reciprocal(x); }, 0.5, 2);
  unary("square", [](const Tensor& x) { return square(x); });
  unary("floor", [](const Tensor& x) { return floor(x) * x; }, 0.1, 0.9);  // floor is 0 there
  unary("sign", [](const Tensor& x) { return sign(x) * x; }, 0.2, 2);
  unary("clamp", [](const Tensor& x) { return clamp(x, -1.0, 1.0); });
  unary("add_scalar", [](const Tensor& x) { return x + 2.5; });
  unary("rsub_scalar", [](const Tensor& x) { return 2.5 - x; });
  unary("mul_scalar", [](const Tensor& x) { return x * 3; });
  unary("div_scalar", [](const Tensor& x) { return x / 4; });
  unary("pow_scalar", [](const Tensor& x) { return pow(x, 3); });
  unary("pow_fractional", [](const Tensor& x) { return pow(x, 1.7); }, 0.2, 2);
  unary("scalar_pow", [](const Tensor& x) { return pow(2.0, x); });
  unary("masked_fill", [](const Tensor& x) { return masked_fill(x, gt(x, 0.5), 0.0); });
  binary("add", [](const Tensor& a, const Tensor& b) { return a + b; });
  binary("sub", [](const Tensor& a, const Tensor& b) { return a - b; });
  binary("mul", [](const Tensor& a, const Tensor& b) { return a * b; });
  binary("div", [](const Tensor& a, const Tensor& b) { return a / b; }, 0.5, 2);
  binary("pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, 0.5, 2);
  binary("maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  binary("minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); });
  binary("add_alpha", [](const Tensor& a, const Tensor& b) { return add(a, b, 2.5); });
  binary("where", [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a * 2, b); });
  binary("lerp", [](const Tensor& a, const Tensor& b) { return lerp(a, b, 0.3); });
  binary("addcmul", [](const Tensor& a, const Tensor& b) { return addcmul(a, a, b, 0.5); });
  c.push_back({"remainder", {{3, 4}, {3, 4}}, [](V x) { return one(remainder(x[0], x[1])); }, 0.3, 0.9});
  // ---- views and copies ----
  unary("view", [](const Tensor& x) { return x.contiguous().view({4, 3}); });
  unary("reshape", [](const Tensor& x) { return x.reshape({2, 6}); });
  unary("transpose", [](const Tensor& x) { return x.transpose(0, 1) * 2; });
  unary("permute", [](const Tensor& x) { return x.unsqueeze(0).permute({2, 0, 1}); });
  unary("narrow", [](const Tensor& x) { return x.narrow(1, 1, 2); });
  unary("select", [](const Tensor& x) { return x.select(1, 2); });
  unary("slice_step", [](const Tensor& x) { return x.slice(1, 0, 4, 2); });
  unary("index", [](const Tensor& x) { return x.index({Slice(1), 3}); });
  unary("expand", [](const Tensor& x) { return x.unsqueeze(0).expand({2, 3, 4}); });
  unary("squeeze", [](const Tensor& x) { return x.unsqueeze(1).squeeze(); });
  unary("flatten", [](const Tensor& x) { return x.flatten(); });
  unary("unflatten", [](const Tensor& x) { return x.unflatten(1, {2, 2}); });
  unary("t", [](const Tensor& x) { return x.t(); });
  unary("clone", [](const Tensor& x) { return x.clone(); });
  unary("contiguous", [](const Tensor& x) { return x.t().contiguous(); });
  c.push_back({"as_strided", {{12}}, [](V x) { return one(x[0].as_strided({3, 3}, {3, 1}, 1)); }});
  c.push_back({"as_strided_overlap", {{6}}, [](V x) { return one(x[0].as_strided({3, 3}, {1, 1})); }});
  c.push_back({"diagonal", {{4, 4}}, [](V x) { return one(x[0].contiguous().diagonal(1)); }});
  c.push_back({"unfold", {{7}}, [](V x) { return one(x[0].unfold(0, 3, 2)); }});
  // ---- reductions ----
  unary("sum", [](const Tensor& x) { return x.sum(); });
  unary("sum_dim", [](const Tensor& x) { return x.sum({1}); });
  unary("sum_keepdim", [](const Tensor& x) { return x.sum({0}, true); });
  unary("mean", [](const Tensor& x) { return x.mean({0, 1}); });
  unary("mean_dim", [](const Tensor& x) { return x.mean({-1}, true); });
  unary("prod", [](const Tensor& x) { return prod(x, {1}); }, 0.5, 1.5);
  c.push_back({"prod_with_zero", {{2, 3}}, [](V x) {
                 Tensor z = x[0] * tensor<double>({1, 0, 1, 1, 1, 1}).view({2, 3});
                 return one(prod(z, {1}));
               }});
  unary("amax", [](const Tensor& x) { return amax(x, {1}); });
  unary("amin_all", [](const Tensor& x) { return amin(x); });
  unary("max_dim", [](const Tensor& x) { return x.max(1).first; });
  unary("min_dim_keepdim", [](const Tensor& x) { return x.min(0, true).first; });
  unary("max_all", [](const Tensor& x) { return x.max(); });
  unary("var", [](const Tensor& x) { return var(x, {1}); });
  unary("var_all_biased", [](const Tensor& x) { return var(x, {}, 0); });
  unary("std", [](const Tensor& x) { return ember::std(x, {0}, 1, true); });
  unary("logsumexp", [](const Tensor& x) { return logsumexp(x, {1}); });
  unary("norm2", [](const Tensor& x) { return norm(x); });
  unary("norm1_dim", [](const Tensor& x) { return norm(x, 1, {1}); }, 0.2, 2);
  unary("norm3", [](const Tensor& x) { return norm(x, 3, {0}); }, 0.2, 2);
  unary("norm_inf", [](const Tensor& x) { return norm(x, INFINITY); });
  unary("cumsum", [](const Tensor& x) { return cumsum(x, 1); });
  unary("softmax", [](const Tensor& x) { return softmax(x, 1); });
  unary("softmax_dim0", [](const Tensor& x) { return softmax(x, 0); });
  unary("log_softmax", [](const Tensor& x) { return log_softmax(x, -1); });
  // ---- linear algebra ----
  c.push_back({"mm", {{3, 4}, {4, 2}}, [](V x) { return one(mm(x[0], x[1])); }});
  c.push_back({"bmm", {{2, 3, 4}, {2, 4, 2}}, [](V x) { return one(bmm(x[0], x[1])); }});
  c.push_back({"matmul_vec_mat", {{4}, {4, 3}}, [](V x) { return one(matmul(x[0], x[1])); }});
  c.push_back({"matmul_mat_vec", {{3, 4}, {4}}, [](V x) { return one(matmul(x[0], x[1])); }});
  c.push_back({"matmul_batched_broadcast", {{2, 1, 3, 4}, {3, 4, 2}}, [](V x) { return one(matmul(x[0], x[1])); }});
  c.push_back({"matmul_batch_by_matrix", {{2, 3, 4}, {4, 5}}, [](V x) { return one(matmul(x[0], x[1])); }});
  c.push_back({"addmm", {{3, 2}, {3, 4}, {4, 2}}, [](V x) { return one(addmm(x[0], x[1], x[2], 0.5, 2)); }});
  c.push_back({"addmm_bias_row", {{2}, {3, 4}, {4, 2}}, [](V x) { return one(addmm(x[0], x[1], x[2])); }});
  c.push_back({"linear", {{2, 3, 4}, {5, 4}, {5}}, [](V x) { return one(linear(x[0], x[1], x[2])); }});
  c.push_back({"linear_no_bias", {{3, 4}, {5, 4}}, [](V x) { return one(linear(x[0], x[1])); }});
  c.push_back({"dot", {{5}, {5}}, [](V x) { return one(dot(x[0], x[1])); }});
  c.push_back({"outer", {{3}, {4}}, [](V x) { return one(outer(x[0], x[1])); }});
  // ---- joining, indexing, sorting ----
  c.push_back({"cat", {{2, 3}, {4, 3}}, [](V x) { return one(cat({x[0], x[1]}, 0)); }});
  c.push_back({"cat_dim1", {{2, 3}, {2, 1}}, [](V x) { return one(cat({x[0], x[1]}, 1)); }});
  c.push_back({"stack", {{2, 3}, {2, 3}}, [](V x) { return one(stack({x[0], x[1]}, 1)); }});
  c.push_back({"split", {{5, 2}}, [](V x) { return split(x[0], 2, 0); }});
  c.push_back({"chunk", {{3, 4}}, [](V x) { return chunk(x[0], 2, 1); }});
  c.push_back({"unbind", {{3, 2}}, [](V x) { return unbind(x[0], 1); }});
  unary("index_select", [](const Tensor& x) { return index_select(x, 1, tensor<int64_t>({3, 0, 3})); });
  unary("gather", [](const Tensor& x) {
    return gather(x, 1, tensor<int64_t>({0, 3, 1, 1, 2, 2}).view({3, 2}));
  });
  c.push_back({"scatter", {{3, 4}, {3, 2}}, [](V x) {
                 return one(scatter(x[0], 1, tensor<int64_t>({0, 3, 1, 2, 2, 0}).view({3, 2}), x[1]));
               }});
  c.push_back({"scatter_add", {{3, 4}, {3, 2}}, [](V x) {
                 return one(scatter_add(x[0], 1, tensor<int64_t>({0, 0, 1, 2, 3, 3}).view({3, 2}), x[1]));
               }});
  unary("masked_select", [](const Tensor& x) { return masked_select(x, gt(x, 0.0)); });
  unary("sort", [](const Tensor& x) { return sort(x, 1, true).first; });
  unary("topk", [](const Tensor& x) { return topk(x, 2, 0).first; });
  unary("pad_constant", [](const Tensor& x) { return pad(x, {1, 2, 0, 1}); });
  unary("pad_crop", [](const Tensor& x) { return pad(x, {-1, 1}); });
  unary("pad_reflect", [](const Tensor& x) { return pad(x, {2, 1}, "reflect"); });
  unary("pad_replicate", [](const Tensor& x) { return pad(x, {1, 2}, "replicate"); });
  unary("tril", [](const Tensor& x) { return tril(x); });
  unary("triu", [](const Tensor& x) { return triu(x, 1); });
  unary("repeat", [](const Tensor& x) { return x.repeat({2, 1, 2}); });
  unary("flip", [](const Tensor& x) { return flip(x, {0, 1}); });
  // ---- nn: convolution and pooling ----
  c.push_back({"conv2d", {{2, 3, 5, 4}, {4, 3, 3, 2}, {4}},
               [](V x) { return one(conv2d(x[0], x[1], x[2], {2, 1}, {1, 0})); }});
  c.push_back({"conv2d_groups_dilation", {{1, 4, 6, 6}, {4, 2, 2, 3}, {4}},
               [](V x) { return one(conv2d(x[0], x[1], x[2], {1}, {1}, {2}, 2)); }});
  c.push_back({"conv2d_same", {{1, 2, 5, 5}, {2, 2, 2, 3}},
               [](V x) { return one(conv2d(x[0], x[1], std::nullopt, {1, 1}, kSame)); }});
  c.push_back({"conv1d", {{2, 2, 7}, {3, 2, 3}, {3}}, [](V x) { return one(conv1d(x[0], x[1], x[2], {2}, {1})); }});
  c.push_back({"conv_transpose2d", {{1, 2, 3, 4}, {2, 3, 3, 2}, {3}},
               [](V x) { return one(conv_transpose2d(x[0], x[1], x[2], {2}, {1}, {1})); }});
  c.push_back({"max_pool2d", {{1, 2, 5, 5}}, [](V x) { return one(max_pool2d(x[0], {3}, {2}, {1})); }});
  c.push_back({"max_pool2d_ceil_dilation", {{1, 2, 6, 7}},
               [](V x) { return one(max_pool2d(x[0], {2}, {2}, {1}, {2}, true)); }});
  c.push_back({"max_pool1d", {{2, 3, 7}}, [](V x) { return one(max_pool1d(x[0], {3}, {2})); }});
  c.push_back({"avg_pool2d", {{1, 2, 5, 5}}, [](V x) { return one(avg_pool2d(x[0], {3}, {2}, {1})); }});
  c.push_back({"avg_pool2d_ceil_exclude_pad", {{1, 2, 6, 6}},
               [](V x) { return one(avg_pool2d(x[0], {3}, {2}, {1}, true, false)); }});
  c.push_back({"adaptive_avg_pool2d", {{1, 2, 5, 7}}, [](V x) { return one(adaptive_avg_pool2d(x[0], {3, 4})); }});
  return c;
}

Tensor make_input(IntArrayRef shape, double lo, double hi, bool transposed, Generator& gen) {
  Tensor t;
  if (transposed && shape.size() >= 2) {
    DimVector s(shape);
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    t = (rand(s, kFloat64, &gen) * (hi - lo) + lo).transpose(-1, -2);
  } else {
    t = rand(shape, kFloat64, &gen) * (hi - lo) + lo;
  }
  return t.requires_grad_();
}

class OpGradcheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(OpGradcheck, FirstAndSecondDerivatives) {
  const GradCase& c = GetParam();
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed inputs" : "contiguous inputs");
    Generator gen(42);
    variable_list inputs;
    for (const auto& s : c.shapes) inputs.push_back(make_input(s, c.lo, c.hi, transposed, gen));
    ASSERT_NO_THROW(autograd::gradcheck(c.fn, inputs)) << c.name;
    try {
      autograd::gradcheck(c.fn, inputs);
    } catch (const Error& e) {
      FAIL() << e.what();
    }
    if (c.gradgrad) {
      try {
        autograd::gradgradcheck(c.fn, inputs);
      } catch (const Error& e) {
        FAIL() << "gradgradcheck: " << e.what();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Autograd, OpGradcheck, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) { return info.param.name; });

}  // namespace

// Elementwise ops vs PyTorch: every case of tests/data/elementwise_golden.txt
// (made by tests/data/gen_elementwise.py with torch 1.13) runs on contiguous,
// strided (every 3rd element), transposed and broadcast inputs.
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace ember;

namespace {

struct GoldenCase {
  std::string op, dtype, out_dtype;
  std::vector<double> a, b, expected;
  bool binary = false;
};

std::vector<double> parse_values(const std::string& s) {
  std::vector<double> v;
  std::istringstream is(s);
  std::string tok;
  while (is >> tok) v.push_back(std::stod(tok));  // stod reads inf / -inf / nan
  return v;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : line) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::vector<GoldenCase> load_cases() {
  std::ifstream in(std::string(EMBER_TEST_DATA_DIR) + "/elementwise_golden.txt");
  EXPECT_TRUE(in.good()) << "missing elementwise_golden.txt";
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto p = split(line, '|');
    GoldenCase c;
    c.op = p[0];
    c.dtype = p[1];
    c.a = parse_values(p[2]);
    c.binary = p[3] != "-";
    if (c.binary) c.b = parse_values(p[3]);
    c.expected = parse_values(p[4]);
    c.out_dtype = p[5];
    cases.push_back(std::move(c));
  }
  return cases;
}

ScalarType parse_dtype(const std::string& s) {
  static const std::map<std::string, ScalarType> m = {
      {"float32", kFloat32}, {"float64", kFloat64}, {"bfloat16", kBFloat16}, {"float16", kFloat16},
      {"int64", kInt64},     {"int32", kInt32},     {"bool", kBool}};
  return m.at(s);
}

using UnaryFn = std::function<Tensor(const Tensor&)>;
using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;

const std::map<std::string, UnaryFn>& unary_ops() {
  static const std::map<std::string, UnaryFn> m = {
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }},
      {"sin", [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"sign", [](const Tensor& x) { return sign(x); }},
      {"floor", [](const Tensor& x) { return floor(x); }},
      {"ceil", [](const Tensor& x) { return ceil(x); }},
      {"round", [](const Tensor& x) { return round(x); }},
      {"trunc", [](const Tensor& x) { return trunc(x); }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }},
      {"neg", [](const Tensor& x) { return neg(x); }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"isnan", [](const Tensor& x) { return isnan(x); }},
      {"logical_not", [](const Tensor& x) { return logical_not(x); }},
      {"bitwise_not", [](const Tensor& x) { return bitwise_not(x); }},
      {"square", [](const Tensor& x) { return square(x); }},
  };
  return m;
}

const std::map<std::string, BinaryFn>& binary_ops() {
  static const std::map<std::string, BinaryFn> m = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); }},
      {"remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }},
      {"logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }},
      {"bitwise_and", [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }},
      {"bitwise_or", [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }},
      {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }},
  };
  return m;
}

double tolerance(ScalarType dt) {
  switch (dt) {
    case kBFloat16: return 1e-2;
    case kFloat16: return 2e-3;
    case kFloat32: return 2e-6;
    default: return 1e-12;
  }
}

// The layouts each case runs on: values in logical row-major order, laid out
// in memory four different ways.
enum class Layout { Contiguous, Strided, Transposed };

Tensor make_input(const std::vector<double>& v, ScalarType dt, Layout layout) {
  int64_t n = static_cast<int64_t>(v.size());
  Tensor base = tensor(v).to(dt);
  switch (layout) {
    case Layout::Contiguous: return base;
    case Layout::Strided: {
      // Column 1 of an [n, 3] matrix: stride 3.
      Tensor m = zeros({n, 3}, dt);
      Tensor col = m.select(1, 1);
      col.copy_(base);
      return col;
    }
    case Layout::Transposed: {
      int64_t rows = n % 5 == 0 ? n / 5 : 2;
      Tensor t = base.reshape({rows, n / rows}).t().contiguous().t();
      EXPECT_FALSE(t.is_contiguous());
      return t;
    }
  }
  return base;
}

void check(const GoldenCase& c, const Tensor& out, const std::string& where) {
  SCOPED_TRACE(c.op + " " + c.dtype + " " + where);
  EXPECT_EQ(to_string(out.dtype()), c.out_dtype);
  std::vector<double> got = out.contiguous().reshape({-1}).to_vector<double>();
  ASSERT_EQ(got.size(), c.expected.size());
  double rtol = tolerance(out.dtype());
  for (size_t i = 0; i < got.size(); ++i) {
    double e = c.expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << " got " << got[i];
    } else if (std::isinf(e)) {
      EXPECT_EQ(got[i], e) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], e, rtol * std::max(1.0, std::fabs(e))) << "at " << i << " input " << c.a[i];
    }
  }
}

}  // namespace

TEST(ElementwiseGolden, MatchesPyTorchOnEveryLayout) {
  auto cases = load_cases();
  ASSERT_GT(cases.size(), 200u);
  for (const auto& c : cases) {
    ScalarType dt = parse_dtype(c.dtype);
    for (Layout layout : {Layout::Contiguous, Layout::Strided, Layout::Transposed}) {
      std::string where = "layout " + std::to_string(static_cast<int>(layout));
      if (c.binary) {
        auto it = binary_ops().find(c.op);
        ASSERT_NE(it, binary_ops().end()) << "no Ember op for " << c.op;
        Tensor a = make_input(c.a, dt, layout);
        Tensor b = make_input(c.b, dt, Layout::Contiguous);
        if (layout == Layout::Transposed) b = make_input(c.b, dt, layout);
        check(c, it->second(a, b), where);
      } else {
        auto it = unary_ops().find(c.op);
        ASSERT_NE(it, unary_ops().end()) << "no Ember op for " << c.op;
        check(c, it->second(make_input(c.a, dt, layout)), where);
      }
    }
  }
}

TEST(ElementwiseGolden, BroadcastScalarOperand) {
  // Expanded (stride-0) operands on either side take the same values as a
  // materialised copy.
  for (const auto& [name, fn] : binary_ops()) {
    if (name.rfind("bitwise", 0) == 0) continue;
    Tensor a = tensor<double>({-2.5, -1, 0, 0.5, 3, 7.25}).reshape({2, 3});
    Tensor s = tensor<double>({1.5});
    Tensor expanded = fn(a, s.expand({2, 3}));
    Tensor materialised = fn(a, full({2, 3}, 1.5, kFloat64));
    EXPECT_TRUE(allclose(expanded, materialised, 0, 0, true)) << name;
    Tensor left = fn(s.expand({2, 3}), a);
    Tensor left_ref = fn(full({2, 3}, 1.5, kFloat64), a);
    EXPECT_TRUE(allclose(left, left_ref, 0, 0, true)) << name;
  }
}

TEST(ElementwiseGolden, CoversEveryElementwisePrimitive) {
  // Completeness: each elementwise primitive of ops.def has a golden case
  // (copy, fill, where and clamp are tested in test_elementwise.cpp).
  std::set<std::string> covered;
  for (const auto& c : load_cases()) covered.insert(c.op);
  for (const char* op : {"add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum",
                         "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                         "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                         "bitwise_not", "isnan", "neg", "abs", "exp", "expm1", "log", "log1p", "sqrt",
                         "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu",
                         "erf", "sign", "floor", "ceil", "round", "trunc", "reciprocal"})
    EXPECT_TRUE(covered.count(op)) << op << " has no golden case";
}

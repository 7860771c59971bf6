// The generic checks every op_db entry gets (see op_db.h), against the
// reference cases PyTorch 1.13 wrote into tests/data/op_db/<group>.safetensors
// (tests/data/op_db/gen_<group>.py, float64 unless the op says otherwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "ember/autograd/gradcheck.h"
#include "ember/io/safetensors.h"
#include "op_db.h"
#include "reference.h"
#include "test_util.h"

using namespace ember;
using namespace ember::op_db;
using ember::testing::expect_error;

namespace {

// Every suite reads the committed reference cases.
[[maybe_unused]] const bool kReferenceDirSet = [] {
  set_reference_dir(std::string(EMBER_TEST_DATA_DIR) + "/op_db");
  return true;
}();

struct Tolerance {
  double rtol, atol;
};

Tolerance tolerance_for(const OpInfo& info, ScalarType dtype) {
  switch (dtype) {
    case kFloat32: return {std::max(info.rtol, 1e-5), std::max(info.atol, 1e-6)};
    case kBFloat16: return {std::max(info.rtol, 1.6e-2), std::max(info.atol, 1e-2)};
    case kFloat16: return {std::max(info.rtol, 2e-3), std::max(info.atol, 1e-3)};
    default: return {info.rtol, info.atol};
  }
}

// NaN matches NaN, infinities match exactly, integers and bools exactly.
void expect_matches(const Tensor& got, const Tensor& want, const std::string& what, Tolerance tol) {
  ASSERT_TRUE(got.defined()) << what << ": undefined";
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what << ": shape";
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  bool exact = !want.is_floating_point();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      ASSERT_TRUE(std::isnan(g[i])) << what << " at flat index " << i << ": got " << g[i] << ", want nan";
    } else if (exact || std::isinf(w[i])) {
      ASSERT_EQ(g[i], w[i]) << what << " at flat index " << i;
    } else {
      ASSERT_NEAR(g[i], w[i], tol.atol + tol.rtol * std::fabs(w[i])) << what << " at flat index " << i;
    }
  }
}

// The same values through a view with doubled strides.
Tensor non_contiguous(const Tensor& x) {
  if (x.dim() == 0 || x.numel() < 2) return x;
  return stack({x, x}, -1).select(-1, 0);
}

// Each check is its own suite over the entries it applies to, so nothing
// is skipped: OpDb (every entry), OpDbGrad (differentiable), OpDbFiniteDiff
// (differentiable, gradcheck), OpDbGradGrad (those with gradgrad),
// OpDbDtypes (entries with more dtypes), OpDbZeroStride (an input with a dim
// of 2 or more rows to expand) and OpDbEmpty (an input with a dim).
class OpDb : public ::testing::TestWithParam<size_t> {
 protected:
  const OpInfo& info() const { return registry().at(GetParam()); }
};
class OpDbGrad : public OpDb {};
class OpDbFiniteDiff : public OpDb {};
class OpDbDtypes : public OpDb {};
class OpDbGradGrad : public OpDb {};
class OpDbZeroStride : public OpDb {};
class OpDbEmpty : public OpDb {};

TEST_P(OpDb, ForwardMatchesPyTorch) {
  const OpInfo& op = info();
  ASSERT_TRUE(has(op, "x0") || has(op, "y0"))
      << case_key(op) << ": no reference case in tests/data/op_db/" << op.group
      << ".safetensors (add it to tests/data/op_db/gen_" << op.group << ".py and rerun it)";
  Tensors ys = op.fn(inputs_of(op));
  ASSERT_EQ(static_cast<int>(ys.size()), num_outputs(op)) << "number of outputs";
  for (size_t k = 0; k < ys.size(); ++k) {
    Tensor want = ref(op, "y" + std::to_string(k));
    EXPECT_EQ(ys[k].dtype(), want.dtype()) << "output " << k << " dtype";
    expect_matches(ys[k], want, "output " + std::to_string(k), {op.rtol, op.atol});
  }
}

TEST_P(OpDb, NonContiguousInputs) {
  const OpInfo& op = info();
  Tensors xs = inputs_of(op);
  for (Tensor& x : xs) x = non_contiguous(x);
  Tensors ys = op.fn(xs);
  ASSERT_EQ(static_cast<int>(ys.size()), num_outputs(op));
  for (size_t k = 0; k < ys.size(); ++k)
    expect_matches(ys[k], ref(op, "y" + std::to_string(k)), "output " + std::to_string(k), {op.rtol, op.atol});
}

// Zero strides, as expand and broadcast_to make them: every input's first
// row repeated along dim 0 through a stride-0 view gives what the same values
// give laid out contiguously, or the same refusal. view and view_as refuse,
// as PyTorch's do: merging a stride-0 dim with the next needs a copy.
TEST_P(OpDbZeroStride, InputsGiveTheContiguousResult) {
  const OpInfo& op = info();
  Tensors expanded = inputs_of(op), dense;
  for (Tensor& x : expanded) {
    if (x.dim() > 0 && x.size(0) > 1) x = x.narrow(0, 0, 1).expand(x.sizes());
    dense.push_back(x.contiguous().clone());
  }
  if (op.op == "view" || op.op == "view_as") {
    expect_error([&] { op.fn(expanded); }, {"view", "is not compatible with input of size", "Use .reshape(...)"});
    return;
  }
  std::string dense_error;
  Tensors want;
  try {
    want = op.fn(dense);
  } catch (const std::exception& e) {
    dense_error = e.what();
  }
  if (!dense_error.empty()) {
    EXPECT_THROW(op.fn(expanded), std::exception) << "the contiguous inputs were refused: " << dense_error;
    return;
  }
  Tensors got = op.fn(expanded);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) expect_matches(got[k], want[k], "output " + std::to_string(k), {op.rtol, op.atol});
}

// Where PyTorch 1.13's answer on zero-size inputs is a defect Ember does not
// copy: why, and the check of Ember's own answer.
struct EmptyInputDifference {
  const char* why;
  std::function<void(const Tensors&)> check;
};
const std::map<std::string, EmptyInputDifference>& empty_input_differences() {
  static const std::map<std::string, EmptyInputDifference> d = {
      {"pixel_unshuffle.r2",
       {"PyTorch 1.13 returns an empty input unchanged, shape [0, 2, 6, 4]; Ember gives the unshuffled shape, as for "
        "any other batch size",
        [](const Tensors& y) { EXPECT_EQ(y[0].sizes().vec(), (std::vector<int64_t>{0, 8, 3, 2})); }}},
      {"instance_norm.running",
       {"PyTorch 1.13 folds an empty batch's NaN mean and variance into the running stats; Ember leaves them as "
        "they were",
        [](const Tensors& y) {
          EXPECT_EQ(y[0].sizes().vec(), (std::vector<int64_t>{0, 3, 6}));
          EXPECT_EQ(y[1].to_vector<double>(), std::vector<double>(3, 0.0));
          EXPECT_EQ(y[2].to_vector<double>(), std::vector<double>(3, 1.0));
        }}},
      {"multi_margin_loss.p1",
       {"PyTorch 1.13 returns uninitialised memory (4e-315 and the like) as the mean over no samples; Ember "
        "returns NaN, as PyTorch's other losses do",
        [](const Tensors& y) { EXPECT_TRUE(std::isnan(y[0].item<double>())); }}},
      {"multilabel_margin_loss.mean",
       {"as multi_margin_loss: PyTorch 1.13's mean over no samples is uninitialised memory; Ember's is NaN",
        [](const Tensors& y) { EXPECT_TRUE(std::isnan(y[0].item<double>())); }}},
      {"bincount.weights_minlength",
       {"PyTorch 1.13 returns int64 zeros for an empty input even with float64 weights; Ember keeps the weights' "
        "dtype, as for a non-empty input",
        [](const Tensors& y) {
          EXPECT_EQ(y[0].dtype(), kFloat64);
          EXPECT_EQ(y[0].to_vector<double>(), std::vector<double>(6, 0.0));
        }}},
      {"diag.matrix_neg",
       {"PyTorch 1.13 raises 'numel: integer multiplication overflow' for diag(x, -1) of a 0-row matrix (a negative "
        "length); Ember returns the empty diagonal",
        [](const Tensors& y) { EXPECT_EQ(y[0].sizes().vec(), (std::vector<int64_t>{0})); }}},
  };
  return d;
}

// Zero-size inputs: every input with a dim narrowed to 0 rows gives
// PyTorch's outputs on the same inputs (shapes, dtypes, and values such as
// an empty sum's 0), or an error where PyTorch raised
// ("<case>__empty.*" in the reference file, ref.py's empty_case).
TEST_P(OpDbEmpty, InputsMatchPyTorch) {
  const OpInfo& op = info();
  Tensors xs = inputs_of(op);
  for (Tensor& x : xs)
    if (x.dim() > 0) x = x.narrow(0, 0, 0).clone();
  const StateDict& file = reference_file(op.group);
  const std::string key = case_key(op) + "__empty.";
  if (auto it = empty_input_differences().find(case_key(op)); it != empty_input_differences().end()) {
    SCOPED_TRACE(it->second.why);
    it->second.check(op.fn(xs));
    return;
  }
  if (file.contains(key + "raised")) {
    EXPECT_THROW(op.fn(xs), std::exception) << "PyTorch refuses these zero-size inputs";
    return;
  }
  ASSERT_TRUE(file.contains(key + "y0")) << case_key(op) << ": no zero-size reference (rerun gen_" << op.group << ".py)";
  Tensors ys = op.fn(xs);
  int n = 0;
  while (file.contains(key + "y" + std::to_string(n))) ++n;
  ASSERT_EQ(static_cast<int>(ys.size()), n) << "number of outputs";
  for (size_t k = 0; k < ys.size(); ++k) {
    const Tensor& want = file.at(key + "y" + std::to_string(k));
    EXPECT_EQ(ys[k].dtype(), want.dtype()) << "output " << k << " dtype";
    expect_matches(ys[k], want, "output " + std::to_string(k), {op.rtol, op.atol});
  }
}

TEST_P(OpDbGrad, GradientMatchesPyTorch) {
  const OpInfo& op = info();
  Tensors xs = inputs_of(op);
  for (Tensor& x : xs)
    if (x.is_floating_point()) x = x.clone().detach().requires_grad_();
  Tensors ys = op.fn(xs);
  Tensor loss;
  for (size_t k = 0; k < ys.size(); ++k) {
    std::string gy = "gy" + std::to_string(k);
    if (!has(op, gy)) continue;
    Tensor term = (ys[k] * ref(op, gy)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  ASSERT_TRUE(loss.defined()) << case_key(op) << ": differentiable but its reference case has no gy";
  loss.backward();
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string gx = "gx" + std::to_string(i);
    if (!has(op, gx)) continue;
    Tensor got = xs[i].grad();
    if (!got.defined()) got = zeros_like(xs[i]);
    expect_matches(got, ref(op, gx), "gradient of input " + std::to_string(i), {op.rtol, op.atol});
  }
}

// The entry as a DiffFn over its float64 inputs (made leaves that require
// grad); the floating-point outputs are the ones differentiated.
std::pair<autograd::DiffFn, Tensors> differentiable_form(const OpInfo& op) {
  Tensors xs = inputs_of(op);
  bool any = false;
  for (Tensor& x : xs) {
    if (x.dtype() != kFloat64) continue;
    x = x.clone().detach().requires_grad_();
    any = true;
  }
  EXPECT_TRUE(any) << "gradcheck needs a float64 input";
  autograd::DiffFn fn = [&op](const variable_list& in) {
    variable_list out;
    for (Tensor& y : op.fn(in))
      if (y.is_floating_point()) out.push_back(y);
    return out;
  };
  return {fn, xs};
}

// The entries that do not also run in bfloat16 against the float64
// reference, and why. Every key must name an entry (checked below).
const std::map<std::string, std::string>& no_bfloat16() {
  static const std::string sums = "sums of bf16 products drift past bf16's tolerance of the float64 reference";
  static const std::string jumps = "inputs rounded to bf16 cross the op's jumps (or its ties, or its poles)";
  static const std::string dtype = "the output dtype is not the input's (by the op's definition, as in PyTorch)";
  static const std::string refused = "linalg.inv refuses low-precision dtypes, as PyTorch does (tests/ops: Inverse.*)";
  static const std::map<std::string, std::string> m = {
      {"conv1d.valid", sums}, {"conv2d.same", sums}, {"conv3d.groups", sums}, {"conv3d.same", sums},
      {"conv_transpose1d.stride", sums}, {"conv_transpose2d.stride", sums}, {"instance_norm.affine", sums},
      {"instance_norm.eval", sums}, {"batch_norm.eval", sums}, {"layer_norm.affine", sums},
      {"group_norm.affine", sums}, {"bilinear.bias", sums}, {"grid_sample.bilinear_zeros", sums},
      {"grid_sample.bilinear_border_align", sums}, {"grid_sample.bilinear_reflection", sums},
      {"grid_sample.nearest_3d_reflection", jumps}, {"remainder.default", jumps}, {"fmod.default", jumps},
      {"argsort.descending_dim0", jumps}, {"digamma.negative", jumps}, {"erfinv.edge", jumps},
      {"nextafter.default", "the next representable value is the dtype's own"},
      {"div.int_true", dtype}, {"bincount.weights_minlength", dtype + ": float64 for bf16 weights"},
      {"nan_to_num.default", dtype}, {"float_power.default", dtype}, {"float_power.int", dtype},
      {"float_power.scalar", dtype}, {"softmax.dtype_from_int64", dtype}, {"log_softmax.dtype_float32", dtype},
      {"softmin.dtype_float32", dtype}, {"inverse.via_linalg_inv", refused}, {"inverse.default", refused},
      {"inverse.batched", refused}, {"matrix_power.n_neg3", refused}};
  return m;
}

// float16 skips no_bfloat16()'s cases and these: its 10-bit sums and its
// range (5 exponent bits: 1e-20 is 0) add their own.
const std::map<std::string, std::string>& no_float16() {
  static const std::string sums = "sums of float16 products drift past float16's tolerance of the float64 reference";
  static const std::map<std::string, std::string> m = {
      {"conv2d.stride_pad", sums}, {"conv3d.unbatched", sums}, {"conv_transpose1d.groups_dilation", sums},
      {"lgamma.negative", "inputs rounded to float16 move along lgamma's poles"},
      {"digamma.edge", "an input of 1e-20 is 0 in float16 (digamma's pole)"}};
  return m;
}

// The dtypes beyond float64 an entry runs in: float32 (unless the entry
// opts out), bfloat16 (unless no_bfloat16() names it), float16 (unless
// either list names it), and those it lists.
std::vector<ScalarType> test_dtypes(const OpInfo& op) {
  std::vector<ScalarType> dts;
  if (op.float32) dts.push_back(kFloat32);
  if (!no_bfloat16().contains(op.op + "." + op.variant)) dts.push_back(kBFloat16);
  const std::string name = op.op + "." + op.variant;
  if (!no_bfloat16().contains(name) && !no_float16().contains(name)) dts.push_back(kFloat16);
  for (ScalarType dt : op.dtypes)
    if (dt != kFloat32 && dt != kBFloat16 && dt != kFloat16) dts.push_back(dt);
  return dts;
}

TEST_P(OpDbFiniteDiff, FiniteDifferences) {
  auto [fn, xs] = differentiable_form(info());
  autograd::gradcheck(fn, xs);
}

TEST_P(OpDbGradGrad, SecondDerivativeFiniteDifferences) {
  auto [fn, xs] = differentiable_form(info());
  autograd::gradgradcheck(fn, xs);
}

TEST_P(OpDbDtypes, OtherDtypes) {
  const OpInfo& op = info();
  for (ScalarType dt : test_dtypes(op)) {
    Tensors xs = inputs_of(op);
    for (Tensor& x : xs)
      if (x.is_floating_point()) x = x.to(dt);
    Tensors ys = op.fn(xs);
    ASSERT_EQ(static_cast<int>(ys.size()), num_outputs(op));
    for (size_t k = 0; k < ys.size(); ++k) {
      Tensor want = ref(op, "y" + std::to_string(k));
      std::string what = fmt::format("{} output {}", to_string(dt), k);
      if (want.is_floating_point()) {
        EXPECT_EQ(ys[k].dtype(), dt) << what << " dtype";
      }
      expect_matches(ys[k], want, what, tolerance_for(op, dt));
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<size_t>& p) {
  const OpInfo& op = registry().at(p.param);
  std::string name = op.op + "_" + op.variant;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::vector<size_t> entries_where(const std::function<bool(const OpInfo&)>& keep) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < registry().size(); ++i)
    if (keep(registry()[i])) idx.push_back(i);
  return idx;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpDb, ::testing::ValuesIn(entries_where([](const OpInfo&) { return true; })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbGrad,
                         ::testing::ValuesIn(entries_where([](const OpInfo& op) { return op.differentiable; })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbFiniteDiff, ::testing::ValuesIn(entries_where([](const OpInfo& op) {
                           return op.differentiable && op.gradcheck;
                         })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbGradGrad, ::testing::ValuesIn(entries_where([](const OpInfo& op) {
                           return op.differentiable && op.gradcheck && op.gradgrad;
                         })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbZeroStride, ::testing::ValuesIn(entries_where([](const OpInfo& op) {
                           const Tensors xs = inputs_of(op);
                           return std::any_of(xs.begin(), xs.end(),
                                              [](const Tensor& x) { return x.dim() > 0 && x.size(0) > 1; });
                         })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbEmpty, ::testing::ValuesIn(entries_where([](const OpInfo& op) {
                           const Tensors xs = inputs_of(op);
                           return std::any_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.dim() > 0; });
                         })),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Ops, OpDbDtypes,
                         ::testing::ValuesIn(entries_where([](const OpInfo& op) { return !test_dtypes(op).empty(); })),
                         test_name);

// Integer inputs (ref.py's int_variants): where PyTorch accepted a case's
// floating inputs as round(3 x) in int64, int32 or int8, |round(3 x)| in
// uint8 or x > 0 in bool, Ember gives its outputs in the same dtypes
// (PyTorch's promotion, e.g. to float32 for exp, int64 for a bool's square),
// integers and bools exactly, floating results at float32's tolerance.
// Each case key's suffix and its dtype:
const std::vector<std::pair<std::string, ScalarType>>& int_variants() {
  static const std::vector<std::pair<std::string, ScalarType>> v = {
      {"i64", kInt64}, {"i32", kInt32}, {"i16", kInt16}, {"i8", kInt8}, {"u8", kUInt8}, {"bool", kBool}};
  return v;
}

TEST(OpDbInts, IntegerInputsMatchPyTorch) {
  // Among equal integers PyTorch leaves which index topk and kthvalue return
  // unspecified: only their values are compared (their float cases, without
  // ties, compare the indices too).
  const std::set<std::string> tied_indices = {"topk", "kthvalue"};
  int ran = 0;
  for (const OpInfo& op : registry()) {
    const StateDict& file = reference_file(op.group);
    for (const auto& [suffix, dtype] : int_variants()) {
      const std::string key = case_key(op) + "__" + suffix;
      if (!file.contains(key + ".x0")) continue;
      SCOPED_TRACE(fmt::format("{}.{} with {} inputs", op.op, op.variant, to_string(dtype)));
      Tensors xs;
      for (int i = 0; file.contains(fmt::format("{}.x{}", key, i)); ++i) xs.push_back(file.at(fmt::format("{}.x{}", key, i)));
      Tensors ys;
      try {
        ys = op.fn(xs);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "PyTorch accepts these inputs; Ember raised: " << e.what();
        continue;
      }
      ++ran;
      for (size_t k = 0; k < ys.size(); ++k) {
        const std::string y = fmt::format("{}.y{}", key, k);
        ASSERT_TRUE(file.contains(y)) << "Ember returned more outputs than PyTorch";
        const Tensor& want = file.at(y);
        EXPECT_EQ(ys[k].dtype(), want.dtype()) << "output " << k << ": " << to_string(ys[k].dtype()) << " vs PyTorch's "
                                               << to_string(want.dtype());
        if (k == 1 && tied_indices.contains(op.op)) continue;
        expect_matches(ys[k], want, fmt::format("output {}", k), tolerance_for(op, kFloat32));
      }
    }
  }
  EXPECT_GT(ran, 1500);
}

// ---- the database as a whole ----

struct Surface {
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  std::set<std::string> names;
};

Surface load_surface() {
  std::ifstream in(std::string(EMBER_SOURCE_DIR) + "/tests/op_db/surface.txt");
  EXPECT_TRUE(in.good()) << "missing tests/op_db/surface.txt";
  Surface s;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      s.sections.push_back({line.substr(1, line.size() - 2), {}});
    } else {
      s.sections.back().second.push_back(line);
      s.names.insert(line);
    }
  }
  return s;
}

TEST(OpDbTable, EveryEntryNamesAnOpOfTheSurface) {
  Surface s = load_surface();
  std::set<std::string> keys;
  for (const OpInfo& op : registry()) {
    EXPECT_TRUE(s.names.contains(op.op)) << op.op << " is not in tests/op_db/surface.txt";
    EXPECT_TRUE(keys.insert(entry_key(op)).second) << entry_key(op) << " registered twice";
    EXPECT_EQ(op.variant.find('.'), std::string::npos) << entry_key(op) << ": a variant name has no dot";
  }
}

// Every reference case belongs to an entry, so data and entries stay in step.
TEST(OpDbTable, EveryReferenceCaseHasAnEntry) {
  std::set<std::string> groups, keys;
  for (const OpInfo& op : registry()) {
    groups.insert(op.group);
    keys.insert(case_key(op));
  }
  for (const std::string& g : groups) {
    for (const auto& [key, t] : reference_file(g)) {
      std::string case_name = key.substr(0, key.rfind('.'));
      case_name = case_name.substr(0, case_name.find("__"));  // an integer-input case belongs to its float case
      EXPECT_TRUE(keys.contains(case_name)) << g << ".safetensors holds " << case_name << " with no op_db entry";
    }
  }
}

TEST(OpDbTable, EveryLowPrecisionOptOutNamesAnEntry) {
  std::set<std::string> names;
  for (const OpInfo& op : registry()) names.insert(op.op + "." + op.variant);
  for (const auto& [name, why] : no_bfloat16()) EXPECT_TRUE(names.contains(name)) << name << " (" << why << ")";
  for (const auto& [name, why] : no_float16()) EXPECT_TRUE(names.contains(name)) << name << " (" << why << ")";
}

// The lines of every header in include/ember/<dir>.
std::vector<std::string> header_lines(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& file : std::filesystem::directory_iterator(std::string(EMBER_SOURCE_DIR) + "/include/ember/" + dir)) {
    std::ifstream in(file.path());
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  }
  return lines;
}

// The free functions include/ember/ops/*.h exports: declarations at column
// 0 (the headers' style), inline aliases included.
std::set<std::string> exported_op_names() {
  static const std::regex decl(R"(^(?:inline\s+)?[A-Za-z_][\w:<>,\s]*?[\s&*]([a-z_][a-z0-9_]*)\()");
  static const std::regex keyword(R"(^(return|namespace|struct|class|using|template|enum|typedef|static_assert)\b)");
  std::set<std::string> names;
  std::smatch m;
  for (const std::string& line : header_lines("ops"))
    if (!std::regex_search(line, keyword) && std::regex_search(line, m, decl)) names.insert(m[1]);
  return names;
}

// Exported functions with no PyTorch reference case, and where they are tested.
const std::map<std::string, std::string>& tested_elsewhere() {
  static const std::string creation = "creation (not in OPS.md): tests/ops/test_tensor_ops.cpp, tests/core";
  static const std::string random = "random: PyTorch's generator differs; moments: tests/ops/test_helper_ops.cpp";
  static const std::map<std::string, std::string> names = {
      {"arange", creation}, {"empty", creation}, {"empty_like", creation}, {"empty_strided", creation},
      {"eye", creation}, {"from_blob", creation}, {"full", creation}, {"full_like", creation},
      {"linspace", creation}, {"ones", creation}, {"ones_like", creation}, {"scalar_tensor", creation},
      {"tensor", creation}, {"zeros", creation}, {"zeros_like", creation},
      {"bernoulli", random}, {"rand", random}, {"rand_like", random}, {"randint", random}, {"randn", random},
      {"randn_like", random}, {"randperm", random},
      {"as_strided", "the view primitive under every view op: tests/ops/test_views.cpp"},
      {"as_strided_backward", "as_strided's gradient: tests/ops/test_helper_ops.cpp"},
      {"contiguous", "Tensor::contiguous: tests/ops/test_views.cpp"},
      {"slice", "basic indexing (t.slice, t[...]): tests/ops/test_indexing.cpp"},
      {"to_dtype", "Tensor::to(dtype): tests/ops/test_helper_ops.cpp"},
      {"can_cast", "type promotion (PyTorch's values): tests/ops/test_helper_ops.cpp"},
      {"result_type", "type promotion (PyTorch's values): tests/ops/test_helper_ops.cpp"},
      {"wrap_dim", "negative-dim helper behind every dim argument: tests/ops/test_shape.cpp"},
      {"rnn_layer", "the kernel of nn::LSTM/GRU/RNN: tests/nn (against PyTorch's values)"},
      {"rnn_layer_with", "rnn_layer with caller-held weights: tests/nn, tests/quant"},
      {"check_rnn_layer_state", "rnn_layer_with's checks, for the fused int8 LSTM: tests/ops/test_qlstm_fused.cpp"},
      {"attention_runs_blocked", "scaled_dot_product_attention's choice of path: tests/ops/test_attention_blocked.cpp"},
  };
  return names;
}

// A new public op without an entry fails here, so docs/ops.md and the
// generic checks never silently miss it.
TEST(OpDbTable, EveryExportedOpHasAnEntry) {
  std::set<std::string> exported = exported_op_names();
  ASSERT_GT(exported.size(), 300u) << "the header parse found too few names";
  std::set<std::string> covered;
  for (const OpInfo& op : registry()) {
    covered.insert(op.op);
    covered.insert(op.calls.begin(), op.calls.end());
  }
  for (const std::string& name : exported) {
    bool elsewhere = tested_elsewhere().contains(name);
    EXPECT_TRUE(covered.contains(name) || elsewhere)
        << name << " is exported by include/ember/ops but has no op_db entry (add one, or name it in "
        << "an entry's calls)";
    EXPECT_FALSE(covered.contains(name) && elsewhere) << name << " has an entry: drop it from tested_elsewhere()";
  }
  for (const auto& [name, why] : tested_elsewhere())
    EXPECT_TRUE(exported.contains(name)) << name << " is no longer exported: drop it from tested_elsewhere()";
}

// The names of a list in tests/data/op_db written by a gen_*.py, one per
// line, without its # comments.
std::vector<std::string> listed_names(const std::string& file) {
  std::ifstream list(std::string(EMBER_SOURCE_DIR) + "/tests/data/op_db/" + file);
  EXPECT_TRUE(list.good()) << file;
  std::vector<std::string> names;
  std::string line;
  while (std::getline(list, line))
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

// PyTorch's Tensor methods over the surface (tests/data/op_db/gen_methods.py
// lists them with torch): each is declared in ember/core/tensor.h, so a
// port's x.floor_divide_(2) or x.unsqueeze_(0) compiles.
TEST(OpDbTable, EveryPyTorchTensorMethodExists) {
  static const std::regex decl(R"(^\s+(?:[A-Za-z_][\w:<>,]*\s*[&*]?\s+)+([a-z_][a-z0-9_]*)\()");
  std::set<std::string> declared;
  std::ifstream header(std::string(EMBER_SOURCE_DIR) + "/include/ember/core/tensor.h");
  std::string line;
  std::smatch m;
  while (std::getline(header, line))
    if (line.find("//") == std::string::npos && std::regex_search(line, m, decl)) declared.insert(m[1]);
  ASSERT_GT(declared.size(), 300u) << "the header parse found too few methods";
  const std::vector<std::string> methods = listed_names("tensor_methods.txt");
  for (const std::string& name : methods)
    EXPECT_TRUE(declared.contains(name)) << "torch.Tensor." << name << " has no Tensor::" << name
                                         << " in include/ember/core/tensor.h";
  EXPECT_GT(methods.size(), 300u);
}

// torch.relu_(x), F.elu_(x), torch.clamp_(x, 0, 1): the free in-place
// functions PyTorch has over the surface's names (tests/data/op_db/
// gen_methods.py lists them) are each declared in include/ember/ops.
TEST(OpDbTable, EveryFreeInPlaceFunctionExists) {
  static const std::regex decl(R"(^Tensor&\s+([a-z_][a-z0-9_]*_)\()");
  std::set<std::string> declared;
  std::smatch m;
  for (const std::string& line : header_lines("ops"))
    if (std::regex_search(line, m, decl)) declared.insert(m[1]);
  const std::vector<std::string> functions = listed_names("inplace_functions.txt");
  for (const std::string& name : functions)
    EXPECT_TRUE(declared.contains(name)) << "torch." << name << " has no free ember::" << name
                                         << " in include/ember/ops";
  EXPECT_GT(functions.size(), 50u);
}

// The torch.nn modules over OPS.md's functionals (tests/data/op_db/
// gen_modules.py lists them, and the ones left out with their reasons):
// each is a class of include/ember/nn, by PyTorch's name.
TEST(OpDbTable, EveryPyTorchModuleOfTheSurfaceExists) {
  static const std::regex decl(R"((?:class|struct)\s+(\w+)|EMBER_\w*LAYER\((\w+))");
  std::set<std::string> declared;
  for (const std::string& line : header_lines("nn"))
    for (std::sregex_iterator it(line.begin(), line.end(), decl), end; it != end; ++it)
      declared.insert((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  const std::vector<std::string> modules = listed_names("nn_modules.txt");
  for (const std::string& name : modules)
    EXPECT_TRUE(declared.contains(name)) << "torch.nn." << name << " has no nn::" << name << " in include/ember/nn";
  EXPECT_GT(modules.size(), 100u);
}

// Every dtype some variant of the op runs in: float64 and test_dtypes for
// a case with floating inputs, and int64/int32 where it has integer-input
// cases; an integer or bool case runs in its inputs' dtypes only.
std::string dtype_list(const std::vector<const OpInfo*>& variants) {
  std::vector<ScalarType> seen;
  auto note = [&](ScalarType dt) {
    if (std::find(seen.begin(), seen.end(), dt) == seen.end()) seen.push_back(dt);
  };
  for (const OpInfo* op : variants) {
    const Tensors xs = inputs_of(*op);
    if (xs.empty()) {  // a factory (tril_indices): its output's dtype
      note(ref(*op, "y0").dtype());
      continue;
    }
    if (std::none_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.is_floating_point(); })) {
      for (const Tensor& x : xs) note(x.dtype());
    } else {
      note(kFloat64);
      for (ScalarType dt : test_dtypes(*op)) note(dt);
    }
    const StateDict& file = reference_file(op->group);
    for (const auto& [suffix, dt] : int_variants())
      if (file.contains(case_key(*op) + "__" + suffix + ".x0"))
        note(dt);  // OpDbInts runs it
  }
  std::string s;
  for (ScalarType dt : seen) s += fmt::format("{}{}", s.empty() ? "" : ", ", to_string(dt));
  return s;
}

std::string autograd_column(const OpInfo& op) {
  if (!op.differentiable) return "not differentiable";
  return op.gradcheck && op.gradgrad ? "1st and 2nd order" : "1st order";
}

// docs/ops.md: the coverage table a user reads before porting a model.
std::string coverage_markdown() {
  Surface s = load_surface();
  std::map<std::string, std::vector<const OpInfo*>> by_op;
  for (const OpInfo& op : registry()) by_op[op.op].push_back(&op);
  std::ostringstream md;
  size_t covered = by_op.size(), total = s.names.size();
  md << "# Ember's op coverage\n\n"
     << "Generated from the op database (`tests/op_db/`) by `EMBER_UPDATE_DOCS=1 build/tests/test_op_db "
        "--gtest_filter=OpDbTable.*`; do not edit by hand. Every op listed with variants is tested: against "
        "PyTorch 1.13's values (forward on contiguous and non-contiguous inputs, gradient, finite differences of the "
        "first and, where the autograd column says so, second derivative, in the dtypes shown: float64 against "
        "PyTorch's values, float32, bfloat16 and float16 at their tolerances, int64, int32, int16, int8, uint8 and "
        "bool forward against PyTorch's outputs on integer and bool inputs, where PyTorch takes them); with stride-0 "
        "(expanded) inputs against the same values laid out contiguously; and with zero-size inputs, which give a "
        "result or an error, never a crash. The surface is "
        "`../shared/OPS.md`'s, plus a last section of exported ops it does not list.\n\n"
     << fmt::format("{} of {} ops have entries.\n", covered, total);
  for (const auto& [section, names] : s.sections) {
    md << "\n## " << section << "\n\n| op | variants | dtypes | autograd | implementation |\n|---|---|---|---|---|\n";
    std::vector<std::string> missing;
    for (const std::string& name : names) {
      auto it = by_op.find(name);
      if (it == by_op.end()) {
        missing.push_back(name);
        continue;
      }
      const OpInfo& first = *it->second.front();
      std::string variants;
      for (const OpInfo* op : it->second) variants += (variants.empty() ? "" : ", ") + op->variant;
      md << fmt::format("| `{}` | {} | {} | {} | {} |\n", name, variants, dtype_list(it->second),
                        autograd_column(first),
                        first.impl == Impl::kernel ? "kernel" : "composite");
    }
    if (!missing.empty()) {
      md << "\nNo entry yet:";
      for (const std::string& name : missing) md << " `" << name << "`";
      md << "\n";
    }
  }
  return md.str();
}

TEST(OpDbTable, DocsOpsMdIsCurrent) {
  std::string path = std::string(EMBER_SOURCE_DIR) + "/docs/ops.md";
  std::string want = coverage_markdown();
  if (std::getenv("EMBER_UPDATE_DOCS")) {
    std::ofstream(path) << want;
    return;
  }
  std::ifstream in(path);
  std::stringstream have;
  have << in.rdbuf();
  EXPECT_EQ(have.str(), want) << "docs/ops.md is out of date: run EMBER_UPDATE_DOCS=1 build/tests/test_op_db "
                                 "--gtest_filter=OpDbTable.DocsOpsMdIsCurrent";
}

}  // namespace

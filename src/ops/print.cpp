// PyTorch-style printing: tensor([[1., 2.],\n        [3., 4.]], dtype=float64)
// with one number format per tensor (integer, fixed or scientific) and
// summarisation ("...") of tensors over 1000 elements.
#include <cmath>
#include <sstream>

#include "ember/core/grad_graph.h"
#include "ember/ember.h"
#include "kernels/dispatch.h"

namespace ember {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

struct Formatter {
  enum Mode { Int, Bool, FloatInt, Fixed, Sci } mode = Int;
  int width = 1;

  std::string format(double v) const {
    switch (mode) {
      case Bool: return v != 0 ? "True" : "False";
      case Int: return fmt::format("{}", static_cast<int64_t>(v));
      case FloatInt:
        if (std::isnan(v)) return "nan";
        if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
        return fmt::format("{:.0f}.", v);
      case Fixed:
        if (std::isnan(v)) return "nan";
        if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
        return fmt::format("{:.4f}", v);
      case Sci:
        if (std::isnan(v)) return "nan";
        if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
        return fmt::format("{:.4e}", v);
    }
    return {};
  }
  std::string padded(double v) const {
    std::string s = format(v);
    return std::string(static_cast<size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), ' ') + s;
  }
};

// The values a summarised tensor shows (edges only), as doubles.
void collect(const Tensor& t, bool summarize, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item().to_double());
    return;
  }
  int64_t n = t.size(0);
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect(t.select(0, i), summarize, out);
  }
}

Formatter make_formatter(const Tensor& t, bool summarize) {
  Formatter f;
  std::vector<double> vals;
  collect(t, summarize, vals);
  if (t.dtype() == kBool) {
    f.mode = Formatter::Bool;
  } else if (!t.is_floating_point()) {
    f.mode = Formatter::Int;
  } else {
    double amax = 0, amin = std::numeric_limits<double>::infinity();
    bool all_int = true;
    bool any_finite = false;
    for (double v : vals) {
      if (!std::isfinite(v)) continue;
      any_finite = true;
      if (v != std::nearbyint(v)) all_int = false;
      double a = std::fabs(v);
      amax = std::max(amax, a);
      if (a != 0) amin = std::min(amin, a);
    }
    if (!any_finite) amin = amax = 0;
    if (amin == std::numeric_limits<double>::infinity()) amin = amax;
    if (all_int) {
      bool sci = amax > 1e8 || (amin > 0 && amax / amin > 1000);
      f.mode = sci ? Formatter::Sci : Formatter::FloatInt;
    } else {
      bool sci = amax > 1e8 || (amin > 0 && amin < 1e-4) || (amin > 0 && amax / amin > 1000);
      f.mode = sci ? Formatter::Sci : Formatter::Fixed;
    }
  }
  // Like PyTorch, floats take their width from finite non-zero values only.
  for (double v : vals) {
    if (t.is_floating_point() && (!std::isfinite(v) || v == 0)) continue;
    f.width = std::max(f.width, static_cast<int>(f.format(v).size()));
  }
  return f;
}

void print_rec(std::ostringstream& os, const Tensor& t, const Formatter& f, bool summarize, int indent) {
  if (t.dim() == 0) {
    os << f.format(t.item().to_double());
    return;
  }
  int64_t n = t.size(0);
  os << '[';
  if (t.dim() == 1) {
    // PyTorch's _vector_str: items (with " ..." standing for the elided
    // middle) are chunked into lines of equal item count.
    std::vector<std::string> items;
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
        items.push_back(" ...");
        i = n - kEdgeItems;
      }
      items.push_back(f.padded(t.select(0, i).item().to_double()));
    }
    size_t per_line = static_cast<size_t>(std::max(1, (kLineWidth - indent) / (f.width + 2)));
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) os << (i % per_line == 0 ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ') : ", ");
      os << items[i];
    }
  } else {
    std::string sep = ",";
    sep += std::string(static_cast<size_t>(t.dim() - 1), '\n');
    sep += std::string(static_cast<size_t>(indent + 1), ' ');
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
        os << "..." << sep;
        i = n - kEdgeItems;
      }
      print_rec(os, t.select(0, i), f, summarize, indent + 1);
      if (i + 1 < n) os << sep;
    }
  }
  os << ']';
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream os;
  os << "tensor(";
  bool show_dtype = dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool;
  if (numel() == 0 && dim() > 0) {
    os << "[]";
    if (!(dim() == 1 && size(0) == 0)) os << ", size=(" << fmt::format("{}", fmt::join(sizes(), ", ")) << ")";
  } else {
    bool summarize = numel() > kThreshold;
    Formatter f = make_formatter(*this, summarize);
    print_rec(os, *this, f, summarize, 7);
  }
  if (show_dtype) os << ", dtype=" << to_string(dtype());
  if (auto fn = grad_fn()) os << ", grad_fn=<" << fn->name() << ">";
  else if (requires_grad()) os << ", requires_grad=True";
  os << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace ember

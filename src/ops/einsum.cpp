// einsum: parses the equation into labels per operand dim, takes diagonals
// for labels repeated in one operand, sums labels nobody else needs, then
// contracts the operands left to right, each pair as one bmm (Note [einsum
// pair contraction]). Autograd comes from diagonal, sum, permute and bmm.
#include <algorithm>
#include <string>
#include <vector>

#include "ember/ops/elementwise.h"
#include "ember/ops/linalg.h"
#include "ember/ops/other.h"
#include "ember/ops/reduction.h"
#include "ember/ops/view.h"
#include "ops/op_util.h"

namespace ember {
namespace {

// Labels: 'A'-'Z' -> 0-25, 'a'-'z' -> 26-51 (PyTorch's order for the implicit
// output), ellipsis dims -> 52 + k, right-aligned across operands.
constexpr int kEllipsisBase = 52;

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  EMBER_ERROR("einsum(): invalid subscript given at index 0 in the equation string, subscripts must be in [a-zA-Z], "
              "got '{}'", c);
}

struct Term {
  std::vector<int> letters;  // -1 marks where "..." stands
  bool has_ellipsis = false;
};

Term parse_term(std::string_view s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      EMBER_CHECK(s.substr(i, 3) == "..." && !t.has_ellipsis,
                  "einsum(): found '.' for operand that is not part of any ellipsis or more than one ellipsis in '{}'",
                  s);
      t.has_ellipsis = true;
      t.letters.push_back(-1);
      i += 2;
    } else {
      t.letters.push_back(label_of(s[i]));
    }
  }
  return t;
}

// One operand with a label per dim.
struct Operand {
  Tensor t;
  std::vector<int> labels;
};

std::vector<int> expand_labels(const Term& term, int64_t ell_dims, int64_t max_ell) {
  std::vector<int> out;
  for (int l : term.letters) {
    if (l >= 0) {
      out.push_back(l);
      continue;
    }
    for (int64_t k = 0; k < ell_dims; ++k) out.push_back(kEllipsisBase + static_cast<int>(max_ell - ell_dims + k));
  }
  return out;
}

// Repeated labels in one operand become one diagonal dim (placed last).
Operand take_diagonals(Operand op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    for (size_t j = i + 1; j < op.labels.size(); ++j) {
      if (op.labels[i] != op.labels[j]) continue;
      EMBER_CHECK(op.t.size(static_cast<int64_t>(i)) == op.t.size(static_cast<int64_t>(j)),
                  "einsum(): subscript {} is repeated for operand but the sizes don't match, {} != {}",
                  op.labels[i], op.t.size(static_cast<int64_t>(i)), op.t.size(static_cast<int64_t>(j)));
      int l = op.labels[i];
      op.t = op.t.diagonal(0, static_cast<int64_t>(i), static_cast<int64_t>(j));
      op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(j));
      op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(i));
      op.labels.push_back(l);
      return take_diagonals(std::move(op));
    }
  }
  return op;
}

int64_t position(const std::vector<int>& labels, int l) {
  auto it = std::find(labels.begin(), labels.end(), l);
  return it == labels.end() ? -1 : it - labels.begin();
}

// Sums the dims whose labels are not in `keep`.
Operand sum_unneeded(Operand op, const std::vector<bool>& keep) {
  DimVector dims;
  std::vector<int> rest;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (keep[op.labels[i]]) rest.push_back(op.labels[i]);
    else dims.push_back(static_cast<int64_t>(i));
  }
  if (dims.empty()) return op;
  return {sum(op.t, dims), rest};
}

// Note [einsum pair contraction]: with labels split into batch (both, still
// needed), contracted (both, not needed), a-only and b-only, a is permuted
// to [batch, a-only, contracted] and b to [batch, contracted, b-only]; one
// bmm of [B, M, K] x [B, K, N] gives [batch, a-only, b-only]. Size-1 dims
// broadcast against the other operand's size first.
Operand contract(const Operand& a, const Operand& b, const std::vector<bool>& needed) {
  std::vector<int> batch, contracted, a_only, b_only;
  for (int l : a.labels) {
    if (position(b.labels, l) < 0) a_only.push_back(l);
    else if (needed[l]) batch.push_back(l);
    else contracted.push_back(l);
  }
  for (int l : b.labels)
    if (position(a.labels, l) < 0) b_only.push_back(l);
  auto size_in = [](const Operand& op, int l) {
    int64_t p = position(op.labels, l);
    return p < 0 ? int64_t{1} : op.t.size(p);
  };
  // The broadcast size of a label: the other operand's where one side has 1
  // (or lacks the label), so an empty dim stays empty.
  auto size_of = [&](int l) {
    int64_t sa = size_in(a, l), sb = size_in(b, l);
    EMBER_CHECK(sa == 1 || sb == 1 || sa == sb,
                "einsum(): subscript {} has size {} for one operand and {} for another, which do not broadcast",
                l < 26 ? static_cast<char>('A' + l) : l < kEllipsisBase ? static_cast<char>('a' + l - 26) : '.', sa,
                sb);
    return sa == 1 ? sb : sa;
  };
  auto arrange = [&](const Operand& op, const std::vector<std::vector<int>*>& groups) {
    DimVector perm, sizes, merged;
    for (auto* g : groups) {
      int64_t m = 1;
      for (int l : *g) {
        int64_t p = position(op.labels, l);
        int64_t s = size_of(l);
        if (p >= 0) {
          perm.push_back(p);
          sizes.push_back(s);
        }
        m *= p >= 0 ? s : 1;
      }
      merged.push_back(m);
    }
    return op.t.permute(perm).expand(sizes).reshape(merged);
  };
  Tensor am = arrange(a, {&batch, &a_only, &contracted});
  Tensor bm = arrange(b, {&batch, &contracted, &b_only});
  // Nothing to sum: an outer product is a broadcast mul (as in PyTorch, which
  // is why it also takes bool operands, which bmm does not).
  Tensor prod = contracted.empty() ? mul(am, bm) : bmm(am, bm);
  DimVector shape;
  std::vector<int> labels;
  for (auto* g : {&batch, &a_only, &b_only})
    for (int l : *g) {
      shape.push_back(size_of(l));
      labels.push_back(l);
    }
  return {prod.reshape(shape), labels};
}

}  // namespace

Tensor einsum(std::string_view equation, TensorList operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  size_t arrow = eq.find("->");
  std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma == std::string_view::npos ? lhs.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  EMBER_CHECK(terms.size() == operands.size(), "einsum(): the equation '{}' has {} operands but {} were given",
              equation, terms.size(), operands.size());
  // Dims covered by each operand's ellipsis.
  int64_t max_ell = 0;
  std::vector<int64_t> ell(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t letters = static_cast<int64_t>(terms[i].letters.size()) - (terms[i].has_ellipsis ? 1 : 0);
    EMBER_CHECK(terms[i].has_ellipsis ? operands[i].dim() >= letters : operands[i].dim() == letters,
                "einsum(): the number of subscripts in the equation ({}) does not match the number of dimensions ({}) "
                "for operand {}{}", letters, operands[i].dim(), i, terms[i].has_ellipsis ? "" : " and no ellipsis was given");
    ell[i] = terms[i].has_ellipsis ? operands[i].dim() - letters : 0;
    max_ell = std::max(max_ell, ell[i]);
  }
  // count: occurrences of each label in the equation (the implicit output
  // keeps those used once; "ii" is a trace).
  std::vector<Operand> ops;
  std::vector<int> count(static_cast<size_t>(kEllipsisBase + max_ell), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int> labels = expand_labels(terms[i], ell[i], max_ell);
    for (int l : labels) ++count[l];
    ops.push_back(take_diagonals({operands[i], labels}));
  }
  // The output's labels: given, or the ellipsis then the labels used once, in order.
  std::vector<int> output;
  if (arrow != std::string::npos) {
    Term out = parse_term(std::string_view(eq).substr(arrow + 2));
    output = expand_labels(out, max_ell, max_ell);
    for (int l : output)
      EMBER_CHECK(l < static_cast<int>(count.size()) && count[l] > 0,
                  "einsum(): output subscript {} does not appear in the equation for any input operand",
                  l < 26 ? static_cast<char>('A' + l) : static_cast<char>('a' + l - 26));
  } else {
    for (int64_t k = 0; k < max_ell; ++k) output.push_back(kEllipsisBase + static_cast<int>(k));
    for (int l = 0; l < kEllipsisBase; ++l)
      if (count[l] == 1) output.push_back(l);
  }
  // needed[k][l]: label l is used by the output or an operand after k.
  const size_t n = ops.size();
  std::vector<std::vector<bool>> needed(n, std::vector<bool>(count.size(), false));
  for (size_t k = n; k-- > 0;) {
    for (int l : output) needed[k][l] = true;
    if (k + 1 < n) {
      for (int l : ops[k + 1].labels) needed[k][l] = true;
      for (size_t l = 0; l < count.size(); ++l)
        if (needed[k + 1][l]) needed[k][l] = true;
    }
  }
  // Each operand first sums the labels that only it has and nobody needs.
  for (size_t i = 0; i < n; ++i) {
    std::vector<bool> keep = needed[i];
    for (size_t j = 0; j < n; ++j)
      if (j != i)
        for (int l : ops[j].labels) keep[l] = true;
    ops[i] = sum_unneeded(std::move(ops[i]), keep);
  }
  Operand cur = ops[0];
  for (size_t i = 1; i < n; ++i) cur = contract(cur, ops[i], needed[i]);
  cur = sum_unneeded(std::move(cur), needed[n - 1]);
  DimVector perm;
  for (int l : output) perm.push_back(position(cur.labels, l));
  return cur.t.permute(perm);
}

}  // namespace ember

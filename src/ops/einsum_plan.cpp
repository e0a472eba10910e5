// Einsum's equation read against its operands' shapes: the label of every operand dimension,
// the output and summed labels and their sizes. Shared by the kernel and validation, so an
// equation is accepted or rejected by one piece of code.
#include <algorithm>

#include "common/errors.h"
#include "ops/infer_detail.h"
#include "ops/infer_shapes.h"
#include "ops/kernel_util.h"

namespace onnx_tv::ops::detail {

namespace {

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;  // ASCII order: upper case sorts first
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

char letter_of(int id) { return char(id < 26 ? 'A' + id : 'a' + id - 26); }

struct Term {
  std::vector<int> letters_before, letters_after;  // around the ellipsis (after: empty if none)
  bool ellipsis = false;
};

Term parse_term(const std::string& s, const std::string& eq) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis) throw InputError("equation '" + eq + "' has two ellipses in one term");
      t.ellipsis = true;
      i += 2;
      continue;
    }
    int id = letter_id(s[i]);
    if (id < 0) {
      throw InputError("equation '" + eq + "' holds '" + std::string(1, s[i]) +
                       "', which is not a letter or '...'");
    }
    (t.ellipsis ? t.letters_after : t.letters_before).push_back(id);
  }
  return t;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

std::string operand_label(size_t n) { return "input #" + std::to_string(n); }

}  // namespace

EinsumPlan plan_einsum(const std::string& raw, std::span<const Shape> shapes) {
  std::string eq;
  for (char c : raw) if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::vector<std::string> lhs = split(eq.substr(0, arrow), ',');
  if (lhs.size() != shapes.size())
    throw InputError("equation '" + raw + "' has " + std::to_string(lhs.size()) +
                     " operands, the node " + std::to_string(shapes.size()) + " inputs");
  EinsumPlan p;
  std::vector<Term> terms;
  std::vector<Shape> ell_shapes;
  for (size_t n = 0; n < lhs.size(); ++n) {
    const Shape& x = shapes[n];
    terms.push_back(parse_term(lhs[n], eq));
    const Term& t = terms.back();
    const int64_t letters = int64_t(t.letters_before.size() + t.letters_after.size());
    const int64_t e = int64_t(x.size()) - letters;
    if (e < 0 || (!t.ellipsis && e != 0)) {
      throw InputError("term '" + lhs[n] + "' of equation '" + raw + "' does not fit " +
                       operand_label(n) + " of shape " + ir::shape_string(x));
    }
    ell_shapes.emplace_back(x.begin() + t.letters_before.size(),
                            x.begin() + t.letters_before.size() + e);
  }
  const Shape ell = broadcast_shapes(ell_shapes, "ellipsis dimensions of the operands");
  const int E = int(ell.size());
  p.ellipsis_rank = E;
  std::map<int, int> count;  // letter -> occurrences over all operands
  p.dims_of.resize(lhs.size());
  for (size_t n = 0; n < lhs.size(); ++n) {
    const Shape& x = shapes[n];
    const Term& t = terms[n];
    std::vector<int>& dims = p.dims_of[n];
    dims = t.letters_before;
    for (int j = E - int(ell_shapes[n].size()); j < E; ++j) dims.push_back(kEllipsisBase + j);
    dims.insert(dims.end(), t.letters_after.begin(), t.letters_after.end());
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] >= kEllipsisBase) {
        p.size[dims[d]] = ell[size_t(dims[d] - kEllipsisBase)];
        continue;
      }
      ++count[dims[d]];
      auto [it, fresh] = p.size.emplace(dims[d], x[d]);
      if (!fresh && it->second != x[d]) {
        throw InputError("label '" + std::string(1, letter_of(dims[d])) + "' sizes disagree in '" +
                         raw + "': " + operand_label(n) + " has shape " + ir::shape_string(x) +
                         ", another operand gives " + std::to_string(it->second));
      }
    }
  }
  if (arrow == std::string::npos) {
    for (int j = 0; j < E; ++j) p.out_labels.push_back(kEllipsisBase + j);
    for (auto [l, c] : count) if (c == 1) p.out_labels.push_back(l);
  } else {
    Term ot = parse_term(eq.substr(arrow + 2), eq);
    p.out_labels = ot.letters_before;
    if (ot.ellipsis) {
      for (int j = 0; j < E; ++j) p.out_labels.push_back(kEllipsisBase + j);
    } else if (E > 0) {
      throw InputError("equation '" + raw + "' drops the ellipsis dimensions from its output");
    }
    p.out_labels.insert(p.out_labels.end(), ot.letters_after.begin(), ot.letters_after.end());
    for (int l : p.out_labels) {
      if (!p.size.count(l) || std::count(p.out_labels.begin(), p.out_labels.end(), l) != 1)
        throw InputError("output of equation '" + raw + "' names a label twice or one no operand has");
    }
  }
  for (auto [l, s] : p.size)
    if (std::find(p.out_labels.begin(), p.out_labels.end(), l) == p.out_labels.end())
      p.sum_labels.push_back(l);
  for (int l : p.out_labels) p.out_shape.push_back(p.size[l]);
  for (int l : p.sum_labels) p.sum_shape.push_back(p.size[l]);
  return p;
}

}  // namespace onnx_tv::ops::detail

namespace onnx_tv::ops {

std::vector<std::vector<int>> einsum_labels(const std::string& equation,
                                            std::span<const ir::Shape> shapes) {
  detail::EinsumPlan p = detail::plan_einsum(equation, shapes);
  p.dims_of.push_back(p.out_labels);
  return p.dims_of;
}

}  // namespace onnx_tv::ops

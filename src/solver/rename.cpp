// Renaming atoms, for stage obligations (check/stage_run.h): a stage proven once over symbols
// of its own stands for every stage that is the same up to a renaming of those symbols.
#include <algorithm>

#include "common/errors.h"
#include "solver/context.h"
#include "solver/context_impl.h"

namespace onnx_tv::solver {

Value Context::fresh_symbol(const std::string& label) {
  // Every input symbol exists before a stage makes one, and none is made later by name, so a
  // name not yet taken is a variable of its own.
  std::string name;
  for (size_t k = impl_->symbols.size();; ++k) {
    name = label + "#" + std::to_string(k);
    if (!impl_->symbols.count(name)) break;
  }
  return symbol(name);
}

Value Context::rename_atoms(Value v, const AtomImages& to) {
  if (!v.is_finite() || to.empty()) return v;
  const PolyNode& p = impl_->polys[v.poly];
  bool touched = false;
  for (const Term& t : p.terms) {
    for (const Factor& f : impl_->monos[t.first].factors)
      if (to.count(f.first)) touched = true;
    if (touched) break;
  }
  if (!touched) return v;
  std::vector<Term> terms;
  terms.reserve(p.terms.size());
  std::vector<Factor> fs;
  for (const Term& t : impl_->polys[v.poly].terms) {
    fs.clear();
    SmallRational c = t.second;
    for (const Factor& f : impl_->monos[t.first].factors) {
      auto it = to.find(f.first);
      if (it == to.end()) {
        fs.push_back(f);
        continue;
      }
      for (const auto& [a, e] : it->second.factors) fs.emplace_back(a, e * f.second);
      if (it->second.coefficient == 1) continue;
      const Rational e = f.second.to_rational();
      ONNX_TV_ASSERT(e.get_den() == 1, "rename_atoms: a coefficient raised to a fractional power");
      const long n = e.get_num().get_si();
      const SmallRational k = n < 0 ? it->second.coefficient.reciprocal() : it->second.coefficient;
      for (long i = 0; i < (n < 0 ? -n : n); ++i) c = c * k;
    }
    std::sort(fs.begin(), fs.end(),
              [](const Factor& a, const Factor& b) { return a.first < b.first; });
    // Factors of one atom multiply: their exponents add.
    std::vector<Factor> merged;
    for (const Factor& f : fs) {
      if (!merged.empty() && merged.back().first == f.first) merged.back().second += f.second;
      else merged.push_back(f);
    }
    std::erase_if(merged, [](const Factor& f) { return f.second.sign() == 0; });
    terms.emplace_back(impl_->intern_mono(std::move(merged)), c);
  }
  // Sorted by monomial and merged, as make() takes them: renaming can reorder and join them.
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.first < b.first; });
  std::vector<Term> out;
  for (Term& t : terms) {
    if (!out.empty() && out.back().first == t.first) out.back().second += t.second;
    else out.push_back(std::move(t));
  }
  std::erase_if(out, [](const Term& t) { return t.second.sign() == 0; });
  return impl_->make(std::move(out));
}

}  // namespace onnx_tv::solver

// Positions along a dimension the reduced instance shrinks (docs/shape-reduction.md,
// "Positions"). The instance keeps two positions per piece, and two different functions of a
// position may agree on them: p^2 and p at 0 and 1, a window of 100 or of 101 on distances
// below 4, cos(t p) and 1 + p (cos t - 1) at 0 and 1. So a kept position is a symbol, and
// what a program computes from it is proven for every value of it. Only the order of two
// positions of one class is used, which the reduction keeps: it maps the kept positions to
// reduced ones monotonically, and one position to one symbol. Positions are integers, so two
// different ones are at least 1 apart, and p - q + c has the sign of p - q wherever that gap
// decides it whatever its size (c > -1 above, c < 1 below).
#include <unordered_set>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

Value Context::position(const std::string& axis, int64_t k, int64_t full) {
  // Not an input element's name ("x[0,3]": digits and commas between the brackets).
  const std::string name = "pos[" + axis + ":" + std::to_string(k) + "]";
  const auto it = impl_->positions.try_emplace(name, Impl::Position{axis, k, full}).first;
  ONNX_TV_ASSERT(it->second.full == full, name + " stands for positions " +
                                              std::to_string(it->second.full) + " and " +
                                              std::to_string(full));
  return symbol(name);
}

std::optional<int64_t> Context::position_value(const std::string& symbol) const {
  const auto it = impl_->positions.find(symbol);
  if (it == impl_->positions.end()) return std::nullopt;
  return it->second.full;
}

std::optional<int> Context::order_of_positions(Value a, Value b) {
  if (!a.is_finite() || !b.is_finite()) return std::nullopt;
  const Value d = sub(a, b);
  const Impl& I = *impl_;
  Rational c = 0;
  struct Part {
    const Impl::Position* position;
    Rational coefficient;
  };
  std::vector<Part> parts;
  for (const auto& [m, coef] : I.polys[d.poly].terms) {
    const auto& factors = I.monos[m].factors;
    if (factors.empty()) {
      c += coef.to_rational();
      continue;
    }
    if (factors.size() != 1 || factors[0].second != SmallRational(1)) return std::nullopt;
    const AtomNode& atom = I.atoms[factors[0].first];
    if (atom.fn != Fn::Symbol) return std::nullopt;
    const auto it = I.positions.find(atom.name);
    if (it == I.positions.end()) return std::nullopt;
    parts.push_back({&it->second, coef.to_rational()});
  }
  // d = alpha (p - q) + c, p and q of one class (distinct, else they would have cancelled).
  if (parts.size() != 2 || parts[0].position->axis != parts[1].position->axis ||
      parts[0].coefficient != -parts[1].coefficient)
    return std::nullopt;
  const Rational& alpha = parts[0].coefficient;
  const Rational shift = c / alpha;  // d = alpha (p - q + shift)
  const int64_t kp = parts[0].position->k, kq = parts[1].position->k;
  int s = 0;
  if (kp > kq && shift > -1) s = 1;        // p - q >= 1
  else if (kp < kq && shift < 1) s = -1;   // p - q <= -1
  else return std::nullopt;                // the gap's size decides: not known here
  return sgn(alpha) * s;
}

bool Context::has_position(Value v) const {
  if (!v.is_finite() || impl_->positions.empty()) return false;
  const Impl& I = *impl_;
  std::vector<PolyId> todo{v.poly};
  std::unordered_set<PolyId> seen{v.poly};
  while (!todo.empty()) {
    const PolyId p = todo.back();
    todo.pop_back();
    for (const auto& [m, coef] : I.polys[p].terms)
      for (const auto& [a, e] : I.monos[m].factors) {
        const AtomNode& atom = I.atoms[a];
        if (atom.fn == Fn::Symbol && I.positions.count(atom.name)) return true;
        for (PolyId arg : atom.args)
          if (seen.insert(arg).second) todo.push_back(arg);
      }
  }
  return false;
}

}  // namespace onnx_tv::solver

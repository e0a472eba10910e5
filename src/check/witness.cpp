#include "check/witness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "solver/evaluator.h"

namespace onnx_tv::prove {

namespace {

void collect(const solver::Context& ctx, solver::PolyId p, std::set<std::string>& out,
             std::unordered_set<solver::PolyId>& seen_polys,
             std::unordered_set<solver::AtomId>& seen_atoms) {
  if (!seen_polys.insert(p).second) return;
  for (size_t i = 0; i < ctx.poly_term_count(p); ++i)
    for (const auto& [atom, exp] : ctx.term(p, i).factors) {
      if (!seen_atoms.insert(atom).second) continue;
      solver::AtomView a = ctx.atom(atom);
      if (a.fn == solver::Fn::Symbol) {
        out.insert(*a.name);
        continue;
      }
      for (solver::PolyId arg : a.args) collect(ctx, arg, out, seen_polys, seen_atoms);
    }
}

std::string number_text(solver::Evaluator& ev, solver::Value v) {
  if (!v.is_finite()) return v.inf > 0 ? "inf" : "-inf";
  if (auto q = ev.exact(v)) {
    std::string s = solver::to_string(*q);
    if (q->get_den() != 1) {
      std::ostringstream os;
      os.precision(12);
      os << " (~" << q->get_d() << ")";
      s += os.str();
    }
    return s;
  }
  std::ostringstream os;
  os.precision(15);
  os << ev.approx(v);
  return os.str();
}

}  // namespace

std::vector<std::string> symbols_of(const solver::Context& ctx, solver::Value v) {
  std::set<std::string> out;
  std::unordered_set<solver::PolyId> polys;
  std::unordered_set<solver::AtomId> atoms;
  if (v.is_finite()) collect(ctx, v.poly, out, polys, atoms);
  return {out.begin(), out.end()};
}

std::optional<Witness> find_witness(const solver::Context& ctx, solver::Value a, solver::Value b,
                                    uint64_t seed, int tries) {
  std::vector<std::string> names = symbols_of(ctx, a);
  for (const auto& s : symbols_of(ctx, b)) names.push_back(s);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::mt19937_64 rng(seed);
  for (int t = 0; t < tries; ++t) {
    // Small integers first (readable witnesses), then wider ranges and fractions.
    const int span = t < 16 ? 3 : t < 40 ? 9 : 97;
    std::map<std::string, solver::Rational> point;
    for (const auto& n : names) {
      long v = long(rng() % (2 * span + 1)) - span;
      point[n] = t < 40 ? solver::Rational(v) : solver::Rational(v, long(rng() % 7) + 2);
    }
    solver::Evaluator ev(ctx, [&](const std::string& s) { return point.at(s); });
    bool differ = false;
    if (!a.is_finite() || !b.is_finite()) {
      differ = true;
    } else if (auto qa = ev.exact(a), qb = ev.exact(b); qa && qb) {
      differ = *qa != *qb;
    } else {
      long double x = ev.approx(a), y = ev.approx(b);
      if (std::isnan(x) || std::isnan(y)) continue;
      const long double scale = std::max({1.0L, std::fabs(x), std::fabs(y)});
      differ = std::fabs(x - y) > 1e-9L * scale;
    }
    if (!differ) continue;
    Witness w;
    for (const auto& n : names) w.values.push_back({n, solver::to_string(point[n])});
    w.a_number = number_text(ev, a);
    w.b_number = number_text(ev, b);
    return w;
  }
  return std::nullopt;
}

}  // namespace onnx_tv::prove

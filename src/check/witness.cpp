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

bool differs(const solver::Context& ctx, solver::Value a, solver::Value b,
             const std::map<std::string, solver::Rational>& point) {
  if (!a.is_finite() || !b.is_finite()) return true;  // the values differ, so one is finite or the signs differ
  solver::Evaluator ev(ctx, [&](const std::string& s) { return point.at(s); });
  if (auto qa = ev.exact(a), qb = ev.exact(b); qa && qb) return *qa != *qb;
  long double x = ev.approx(a), y = ev.approx(b);
  if (std::isnan(x) || std::isnan(y)) return false;
  const long double scale = std::max({1.0L, std::fabs(x), std::fabs(y)});
  return std::fabs(x - y) > 1e-9L * scale;
}

// Sets as many inputs to 0 as it can while the two sides still differ, in halving chunks, so
// the reported witness is small enough to read.
void shrink(const solver::Context& ctx, solver::Value a, solver::Value b,
            const std::vector<std::string>& names, std::map<std::string, solver::Rational>& point) {
  const size_t budget = 256;  // evaluations: keeps shrinking cheap on huge polynomials
  size_t spent = 0;
  for (size_t chunk = std::max<size_t>(1, names.size() / 2);; chunk /= 2) {
    for (size_t start = 0; start < names.size() && spent < budget; start += chunk) {
      std::map<std::string, solver::Rational> trial = point;
      bool changed = false;
      for (size_t i = start; i < std::min(names.size(), start + chunk); ++i)
        if (trial[names[i]] != 0) {
          trial[names[i]] = 0;
          changed = true;
        }
      if (!changed) continue;
      ++spent;
      if (differs(ctx, a, b, trial)) point = std::move(trial);
    }
    if (chunk == 1 || spent >= budget) break;
  }
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
                                    uint64_t seed, int tries, bool shrink_it) {
  std::vector<std::string> names = symbols_of(ctx, a);
  for (const auto& s : symbols_of(ctx, b)) names.push_back(s);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::mt19937_64 rng(seed);
  for (int t = 0; t < tries; ++t) {
    // Small integers first (readable witnesses), then wider ranges and fractions. Every other
    // try is sparse and small (most inputs 0, the rest within 1/4): on deep programs dense
    // points drive exp() and products beyond what floating point can tell apart.
    const int span = t < 16 ? 3 : t < 40 ? 9 : 97;
    const bool sparse = t % 2 == 1;
    std::map<std::string, solver::Rational> point;
    for (const auto& n : names) {
      long v = long(rng() % (2 * span + 1)) - span;
      if (sparse)
        point[n] = rng() % 8 == 0 ? solver::Rational(long(rng() % 9) - 4, 16) : solver::Rational(0);
      else
        point[n] = t < 40 ? solver::Rational(v) : solver::Rational(v, long(rng() % 7) + 2);
    }
    const bool differ = differs(ctx, a, b, point);
    if (!differ) continue;
    if (shrink_it) shrink(ctx, a, b, names, point);
    solver::Evaluator final_ev(ctx, [&](const std::string& s) { return point.at(s); });
    Witness w;
    for (const auto& n : names)
      if (point[n] != 0) w.values.push_back({n, solver::to_string(point[n])});
    w.a_number = number_text(final_ev, a);
    w.b_number = number_text(final_ev, b);
    return w;
  }
  return std::nullopt;
}

}  // namespace onnx_tv::prove

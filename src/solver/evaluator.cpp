// Numeric evaluation at a point: exact over the rationals where every atom has a rational
// value (symbols, inverses, max/min/abs of such), long double otherwise.
#include "solver/evaluator.h"

#include <cmath>
#include <limits>

namespace onnx_tv::solver {
namespace {

long double to_long_double(const Rational& r) {
  const mpz_class& n = r.get_num();
  const mpz_class& d = r.get_den();
  if (n.fits_slong_p() && d.fits_slong_p())
    return static_cast<long double>(n.get_si()) / static_cast<long double>(d.get_si());
  // Scale into range before dividing so huge numerators and denominators keep their ratio.
  long en = 0, ed = 0;
  double mn = mpz_get_d_2exp(&en, n.get_mpz_t());
  double md = mpz_get_d_2exp(&ed, d.get_mpz_t());
  return std::ldexp(static_cast<long double>(mn) / md, int(en - ed));
}

constexpr long double kNaN = std::numeric_limits<long double>::quiet_NaN();
constexpr long double kInf = std::numeric_limits<long double>::infinity();

}  // namespace

std::function<Rational(const std::string&)> with_positions(
    const Context& ctx, std::function<Rational(const std::string&)> symbol_value) {
  return [&ctx, f = std::move(symbol_value)](const std::string& s) {
    if (const std::optional<int64_t> k = ctx.position_value(s)) return Rational((long)*k);
    return f(s);
  };
}

Evaluator::Evaluator(const Context& ctx, std::function<Rational(const std::string&)> symbol_value)
    : ctx_(ctx), symbol_value_(with_positions(ctx, std::move(symbol_value))) {}

std::optional<Rational> Evaluator::exact(Value v) {
  if (!v.is_finite()) return std::nullopt;
  auto memo = exact_polys_.find(v.poly);
  if (memo != exact_polys_.end()) return memo->second;
  std::optional<Rational> total = Rational(0);
  for (size_t i = 0, n = ctx_.poly_term_count(v.poly); i < n && total; ++i) {
    TermView t = ctx_.term(v.poly, i);
    Rational prod = t.coefficient->to_rational();
    for (const auto& [a, e] : t.factors) {
      if (!e.is_integer()) {
        total.reset();
        break;
      }
      auto it = exact_atoms_.find(a);
      if (it == exact_atoms_.end()) {
        AtomView av = ctx_.atom(a);
        std::optional<Rational> x;
        auto arg = [&](size_t k) { return exact(Value{av.args[k], 0}); };
        switch (av.fn) {
          case Fn::Symbol: x = symbol_value_(*av.name); break;
          case Fn::Ind: x = exact_indicator(av); break;
          case Fn::Def: x = arg(0); break;
          case Fn::Inv:
            if ((x = arg(0)) && sgn(*x) != 0) x = 1 / *x;
            else x.reset();
            break;
          case Fn::Abs:
            if ((x = arg(0))) x = ::abs(*x);
            break;
          case Fn::Max:
          case Fn::Min:
            for (size_t k = 0; k < av.args.size(); ++k) {
              auto y = arg(k);
              if (!y) {
                x.reset();
                break;
              }
              if (k == 0 || (av.fn == Fn::Max ? *y > *x : *y < *x)) x = y;
            }
            break;
          default: break;
        }
        it = exact_atoms_.emplace(a, x).first;
      }
      if (!it->second) {
        total.reset();
        break;
      }
      long k = e.num();
      const Rational& base = *it->second;
      if (k < 0 && sgn(base) == 0) {
        total.reset();
        break;
      }
      Rational p;
      mpz_pow_ui(p.get_num_mpz_t(), base.get_num_mpz_t(), std::labs(k));
      mpz_pow_ui(p.get_den_mpz_t(), base.get_den_mpz_t(), std::labs(k));
      p.canonicalize();
      prod *= k < 0 ? Rational(1 / p) : p;
    }
    if (total) *total += prod;
  }
  exact_polys_.emplace(v.poly, total);
  return total;
}

long double Evaluator::approx(Value v) {
  if (!v.is_finite()) return v.inf > 0 ? kInf : -kInf;
  auto memo = approx_polys_.find(v.poly);
  if (memo != approx_polys_.end()) return memo->second;
  long double total = 0;
  for (size_t i = 0, n = ctx_.poly_term_count(v.poly); i < n; ++i) {
    TermView t = ctx_.term(v.poly, i);
    long double prod = t.coefficient->to_long_double();
    for (const auto& [a, e] : t.factors) {
      const AtomMemo m = approx_atom(a);
      if (m.is_exp) {
        // exp(t)^q evaluated as exp(q t) keeps precision and range.
        prod *= std::exp(e.to_long_double() * m.x);
        continue;
      }
      const long double x = m.x;
      // The common small powers, written out: they give what pow gives, without its cost.
      if (e == 1) {
        prod *= x;
        continue;
      }
      if (e == 2) {
        prod *= x * x;
        continue;
      }
      const long double ex = e.to_long_double();
      if (x == 0 && ex < 0) prod = kNaN;
      else prod *= std::pow(x, ex);
    }
    total += prod;
  }
  approx_polys_.emplace(v.poly, total);
  return total;
}

// [n = v] at the point: the integer input's value, or for a selection (TopK) the element its
// row puts in the slot there (nullopt where the row is not exact).
std::optional<Rational> Evaluator::exact_indicator(const AtomView& av) {
  if (const Value* def = ctx_.counter(*av.name)) {  // a count: its definition's value
    const std::optional<Rational> q = exact(*def);
    if (!q) return std::nullopt;
    return Rational(*q == *av.exponent ? 1 : 0);
  }
  const Selection* s = ctx_.selection(*av.name);
  if (!s) return Rational(symbol_value_(*av.name) == *av.exponent ? 1 : 0);
  std::vector<Rational> x;
  for (const Value& v : s->row) {
    std::optional<Rational> q = exact(v);
    if (!q) return std::nullopt;
    x.push_back(*q);
  }
  const std::optional<int64_t> e = selected_element(*s, [&](int64_t a, int64_t b) {
    return std::optional<int>(cmp(x[size_t(a)], x[size_t(b)]));
  });
  ONNX_TV_ASSERT(e.has_value(), "the selection of exact values is certain");
  return Rational(Rational((long)*e) == *av.exponent ? 1 : 0);
}

// The same in long double: it only proposes points, which intervals confirm.
long double Evaluator::approx_indicator(const AtomView& av) {
  if (const Value* def = ctx_.counter(*av.name))
    return std::llround(approx(*def)) == av.exponent->get_num().get_si() ? 1 : 0;
  const Selection* s = ctx_.selection(*av.name);
  if (!s) return symbol_value_(*av.name) == *av.exponent ? 1 : 0;
  std::vector<long double> x;
  for (const Value& v : s->row) x.push_back(approx(v));
  const std::optional<int64_t> e = selected_element(*s, [&](int64_t a, int64_t b) -> std::optional<int> {
    const long double p = x[size_t(a)], q = x[size_t(b)];
    if (p != p || q != q) return std::nullopt;
    return p > q ? 1 : p < q ? -1 : 0;
  });
  if (!e) return kNaN;
  return Rational((long)*e) == *av.exponent ? 1 : 0;
}

const Evaluator::AtomMemo& Evaluator::approx_atom(AtomId a) {
  if (a >= approx_atoms_.size()) approx_atoms_.resize(ctx_.atom_count());
  if (approx_atoms_[a].known) return approx_atoms_[a];
  AtomView av = ctx_.atom(a);
  auto arg = [&](size_t k) { return approx(Value{av.args[k], 0}); };
  long double x = kNaN;
  switch (av.fn) {
    case Fn::Symbol: x = to_long_double(symbol_value_(*av.name)); break;
    case Fn::Ind: x = approx_indicator(av); break;
    case Fn::Def: x = arg(0); break;
    case Fn::Log: x = arg(0) > 0 ? std::log(arg(0)) : kNaN; break;
    case Fn::Sqrt: x = arg(0) >= 0 ? std::sqrt(arg(0)) : kNaN; break;
    case Fn::Inv: x = arg(0) != 0 ? 1 / arg(0) : kNaN; break;
    case Fn::Erf: x = std::erf(arg(0)); break;
    case Fn::Sin: x = std::sin(arg(0)); break;
    case Fn::Cos: x = std::cos(arg(0)); break;
    case Fn::Abs: x = std::fabs(arg(0)); break;
    case Fn::Pow: x = arg(0) >= 0 ? std::pow(arg(0), to_long_double(*av.exponent)) : kNaN; break;
    case Fn::Max:
    case Fn::Min:
      for (size_t k = 0; k < av.args.size(); ++k) {
        long double y = arg(k);
        if (k == 0 || std::isnan(y) || (av.fn == Fn::Max ? y > x : y < x)) x = y;
        if (std::isnan(x)) break;
      }
      break;
    case Fn::Exp: x = arg(0); break;  // the argument: the power goes inside (see approx)
  }
  // Re-indexed: evaluating the arguments may have resized the memo.
  AtomMemo& m = approx_atoms_[a];
  m = AtomMemo{x, av.fn == Fn::Exp, true};
  return m;
}

}  // namespace onnx_tv::solver

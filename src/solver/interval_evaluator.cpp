// Interval evaluation of canonical forms: the structure of Evaluator::approx, with every
// number an outward-rounded interval and every undefined case "unknown" instead of NaN.
#include "solver/interval_evaluator.h"

#include <cmath>

namespace onnx_tv::solver {

IntervalEvaluator::IntervalEvaluator(const Context& ctx,
                                     std::function<Rational(const std::string&)> symbol_value,
                                     mpfr_prec_t precision)
    : ctx_(ctx),
      symbol_value_(with_positions(ctx, symbol_value)),
      own_exact_(std::make_unique<Evaluator>(ctx, std::move(symbol_value))),
      exact_(own_exact_.get()),
      precision_(precision) {}

IntervalEvaluator::IntervalEvaluator(const Context& ctx,
                                     std::function<Rational(const std::string&)> symbol_value,
                                     mpfr_prec_t precision, Evaluator& exact)
    : ctx_(ctx),
      symbol_value_(with_positions(ctx, std::move(symbol_value))),
      exact_(&exact),
      precision_(precision) {}

MaybeInterval IntervalEvaluator::eval(Value v) {
  if (!v.is_finite()) throw InternalError("interval of an infinity");
  return eval_poly(v.poly);
}

const MaybeInterval& IntervalEvaluator::eval_poly(PolyId p) {
  auto memo = polys_.find(p);
  if (memo != polys_.end()) return memo->second;
  MaybeInterval total;
  if (!ctx_.has_function(Value{p, 0})) {
    if (std::optional<Rational> q = exact_->exact(Value{p, 0})) total = Interval(*q, precision_);
  } else {
    total = Interval(precision_);
    Interval prod(precision_);
    for (size_t i = 0, n = ctx_.poly_term_count(p); i < n && total; ++i) {
      TermView t = ctx_.term(p, i);
      set_coefficient(prod, *t.coefficient);
      bool ok = true;
      for (const auto& [a, e] : t.factors) {
        if (e == 1) {  // the common case: the atom's own interval, no copy
          const MaybeInterval& x = eval_atom(a);
          ok = x && mul_to(prod, prod, *x);
        } else {
          MaybeInterval f = power(a, e);
          ok = f && mul_to(prod, prod, *f);
        }
        if (!ok) break;
      }
      if (!ok || !add_to(*total, *total, prod)) total.reset();
    }
  }
  return polys_.emplace(p, std::move(total)).first->second;
}

MaybeInterval IntervalEvaluator::power(AtomId a, const SmallRational& e) {
  const MaybeInterval& x = eval_atom(a);
  if (!x) return std::nullopt;
  if (e.is_integer() && e.is_small()) return pow_int(*x, long(e.num()));
  if (ctx_.atom(a).fn == Fn::Exp) {  // exp(t)^q = exp(q t)
    const MaybeInterval& t = eval_poly(ctx_.atom(a).args[0]);
    MaybeInterval arg = mul(*t, Interval(e.to_rational(), precision_));
    return arg ? exp(*arg) : std::nullopt;
  }
  return pow_rational(*x, e.to_rational());
}

// [n = v] at the point: the integer input's value, or for a selection (TopK) the element its
// row puts in the slot, where the row's intervals tell it for certain (else unknown).
MaybeInterval IntervalEvaluator::indicator(const AtomView& av) {
  if (const Value* def = ctx_.counter(*av.name)) {  // a count: known where one integer fits
    const MaybeInterval i = eval(*def);
    if (!i) return std::nullopt;
    const double lo = std::ceil(mpfr_get_d(i->lo(), MPFR_RNDD));
    const double hi = std::floor(mpfr_get_d(i->hi(), MPFR_RNDU));
    if (lo != hi) return std::nullopt;
    return Interval(Rational(Rational((long)lo) == *av.exponent ? 1 : 0), precision_);
  }
  const Selection* s = ctx_.selection(*av.name);
  if (!s) return Interval(Rational(symbol_value_(*av.name) == *av.exponent ? 1 : 0), precision_);
  std::vector<Interval> x;
  for (const Value& v : s->row) {
    MaybeInterval i = eval(v);
    if (!i) return std::nullopt;
    x.push_back(std::move(*i));
  }
  auto point = [](const Interval& i) { return mpfr_equal_p(i.lo(), i.hi()) != 0; };
  const std::optional<int64_t> e = selected_element(*s, [&](int64_t a, int64_t b) -> std::optional<int> {
    const Interval &p = x[size_t(a)], &q = x[size_t(b)];
    if (mpfr_cmp(p.lo(), q.hi()) > 0) return 1;
    if (mpfr_cmp(p.hi(), q.lo()) < 0) return -1;
    if (point(p) && point(q) && mpfr_equal_p(p.lo(), q.lo())) return 0;
    return std::nullopt;
  });
  if (!e) return std::nullopt;
  return Interval(Rational(Rational((long)*e) == *av.exponent ? 1 : 0), precision_);
}

const MaybeInterval& IntervalEvaluator::eval_atom(AtomId a) {
  auto memo = atoms_.find(a);
  if (memo != atoms_.end()) return memo->second;
  const AtomView av = ctx_.atom(a);
  MaybeInterval arg;
  if (av.fn != Fn::Symbol && av.fn != Fn::Ind) {
    arg = eval_poly(av.args[0]);
    if (!arg) return atoms_.emplace(a, std::nullopt).first->second;
  }
  MaybeInterval x;
  switch (av.fn) {
    case Fn::Symbol: x = Interval(symbol_value_(*av.name), precision_); break;
    case Fn::Ind: x = indicator(av); break;
    case Fn::Def: x = arg; break;
    case Fn::Exp: x = exp(*arg); break;
    case Fn::Log: x = log(*arg); break;
    case Fn::Sqrt: x = sqrt(*arg); break;
    case Fn::Inv: x = recip(*arg); break;
    case Fn::Erf: x = erf(*arg); break;
    case Fn::Sin: x = sin(*arg); break;
    case Fn::Cos: x = cos(*arg); break;
    case Fn::Abs: x = abs(*arg); break;
    case Fn::Pow: x = pow_rational(*arg, *av.exponent); break;
    case Fn::Max:
    case Fn::Min:
      x = arg;
      for (size_t k = 1; k < av.args.size() && x; ++k) {
        MaybeInterval y = eval_poly(av.args[k]);
        x = !y ? std::nullopt : av.fn == Fn::Max ? max(*x, *y) : min(*x, *y);
      }
      break;
  }
  return atoms_.emplace(a, std::move(x)).first->second;
}

void IntervalEvaluator::set_coefficient(Interval& r, const SmallRational& c) const {
  if (!c.is_small()) {
    r = Interval(c.to_rational(), precision_);
    return;
  }
  // Most coefficients are small: no rational division through GMP.
  mpfr_set_si(r.lo(), long(c.num()), MPFR_RNDD);
  mpfr_set_si(r.hi(), long(c.num()), MPFR_RNDU);
  if (c.den() != 1) {
    mpfr_div_si(r.lo(), r.lo(), long(c.den()), MPFR_RNDD);
    mpfr_div_si(r.hi(), r.hi(), long(c.den()), MPFR_RNDU);
  }
}

std::optional<int> rigorous_sign(const Context& ctx, Value a, Value b,
                                 const std::function<Rational(const std::string&)>& symbol_value,
                                 mpfr_prec_t max_precision) {
  if (a == b) return 0;
  for (mpfr_prec_t p = 64; p <= max_precision; p *= 2) {
    IntervalEvaluator ev(ctx, symbol_value, p);
    if (auto x = ev.exact(a), y = ev.exact(b); x && y) return cmp(*x, *y) > 0 ? 1 : cmp(*x, *y) < 0 ? -1 : 0;
    MaybeInterval x = ev.eval(a), y = ev.eval(b);
    if (!x || !y) continue;
    MaybeInterval d = sub(*x, *y);
    if (d && d->sign()) return d->sign();
  }
  return std::nullopt;
}

}  // namespace onnx_tv::solver

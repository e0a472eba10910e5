#pragma once
// Rigorous evaluation of canonical values at an exact rational point: an interval that surely
// holds the value, or nullopt ("unknown") where some function may be undefined there (log of
// an argument that may be <= 0, an inverse of one that may be 0) or the bounds are lost. Parts
// without function atoms are exact rationals. Memoized per atom and polynomial, like
// Evaluator; one precision per evaluator.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "solver/context.h"
#include "solver/evaluator.h"
#include "solver/interval.h"

namespace onnx_tv::solver {

class IntervalEvaluator {
 public:
  // `symbol_value` gives the value of each symbol atom; constants need none.
  IntervalEvaluator(const Context& ctx, std::function<Rational(const std::string&)> symbol_value,
                    mpfr_prec_t precision);
  // The same, sharing the exact parts with `exact`, an Evaluator at the same point that
  // outlives this one (its memo is reused, not repeated).
  IntervalEvaluator(const Context& ctx, std::function<Rational(const std::string&)> symbol_value,
                    mpfr_prec_t precision, Evaluator& exact);

  // The interval of a finite value; nullopt when unknown. Infinities are the caller's.
  MaybeInterval eval(Value v);
  // The exact value when v involves no function atom (Evaluator::exact).
  std::optional<Rational> exact(Value v) { return exact_->exact(v); }
  size_t memo_size() const { return polys_.size() + atoms_.size(); }

 private:
  const MaybeInterval& eval_poly(PolyId p);
  const MaybeInterval& eval_atom(AtomId a);
  MaybeInterval indicator(const AtomView& av);
  MaybeInterval power(AtomId a, const SmallRational& e);
  void set_coefficient(Interval& r, const SmallRational& c) const;

  const Context& ctx_;
  std::function<Rational(const std::string&)> symbol_value_;
  std::unique_ptr<Evaluator> own_exact_;
  Evaluator* exact_;
  mpfr_prec_t precision_;
  std::unordered_map<PolyId, MaybeInterval> polys_;
  std::unordered_map<AtomId, MaybeInterval> atoms_;
};

// The sign of a - b for finite values at the point `symbol_value` gives (constants when it is
// empty): exact when both are rationals there, else by intervals at precisions widening from
// 64 bits up to `max_precision`. nullopt when no precision separates a from b, or either is
// undefined there. Never decided by rounding.
std::optional<int> rigorous_sign(const Context& ctx, Value a, Value b,
                                 const std::function<Rational(const std::string&)>& symbol_value,
                                 mpfr_prec_t max_precision);

}  // namespace onnx_tv::solver

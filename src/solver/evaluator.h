#pragma once
// Numeric evaluation of canonical values at a point (witnesses, eval, refutation): every
// symbol gets a rational; polynomial parts are computed exactly when no function atom occurs,
// otherwise in long double. Memoized per atom and polynomial.
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "solver/context.h"

namespace onnx_tv::solver {

// symbol_value with the positions of ctx (Context::position) at their values.
std::function<Rational(const std::string&)> with_positions(
    const Context& ctx, std::function<Rational(const std::string&)> symbol_value);

class Evaluator {
 public:
  // `symbol_value` gives the value of each symbol atom (called once per symbol); positions
  // are their own values.
  Evaluator(const Context& ctx, std::function<Rational(const std::string& symbol)> symbol_value);

  // The exact value if v involves no function atom (and is finite).
  std::optional<Rational> exact(Value v);
  // The value in long double (infinities as such; NaN where a function is undefined there).
  long double approx(Value v);
  // Polynomials memoized so far: what an evaluator kept across many values holds in memory.
  size_t memo_size() const { return exact_polys_.size() + approx_polys_.size(); }

 private:
  const Context& ctx_;
  std::function<Rational(const std::string&)> symbol_value_;
  std::unordered_map<AtomId, std::optional<Rational>> exact_atoms_;
  // Atom values by id (few atoms, looked up once per factor of every term).
  struct AtomMemo {
    long double x = 0;     // the value; for an exp atom, the value of its argument
    bool is_exp = false;
    bool known = false;
  };
  const AtomMemo& approx_atom(AtomId a);
  std::optional<Rational> exact_indicator(const AtomView& av);
  long double approx_indicator(const AtomView& av);
  std::vector<AtomMemo> approx_atoms_;
  std::unordered_map<PolyId, std::optional<Rational>> exact_polys_;
  std::unordered_map<PolyId, long double> approx_polys_;
};

}  // namespace onnx_tv::solver

// Ordering of constants: exact for rationals; for constants with atoms (exp(1/3), log(2)) by
// interval arithmetic (solver/interval.h), never by rounding, since the answer decides
// canonical forms (max of constants, abs, the domain of log and sqrt).
#include "solver/context_impl.h"
#include "solver/interval_evaluator.h"

namespace onnx_tv::solver {
namespace {

// Enough to separate any two constants of a real program: two terms near 1e10 that cancel to
// 1e-11 need about 80 bits. Constants that are equal but differ in form (sqrt(2)*sqrt(3) and
// sqrt(6)) are never separated; they cost one evaluation per precision up to this one.
constexpr mpfr_prec_t kMaxPrecision = 4096;

}  // namespace

std::optional<int> Context::compare(Value a, Value b) const {
  if (a == b) return 0;
  if (!is_constant(a) || !is_constant(b)) return std::nullopt;
  if (!a.is_finite() || !b.is_finite()) {
    int x = a.is_finite() ? 0 : a.inf, y = b.is_finite() ? 0 : b.inf;
    return x > y ? 1 : -1;  // equal infinities were caught by a == b
  }
  auto ra = as_rational(a), rb = as_rational(b);
  if (ra && rb) return cmp(*ra, *rb) > 0 ? 1 : cmp(*ra, *rb) < 0 ? -1 : 0;
  auto no_symbols = [](const std::string& s) -> Rational {
    throw InternalError("compare evaluated symbol " + s);
  };
  return rigorous_sign(*this, a, b, no_symbols, kMaxPrecision);
}

}  // namespace onnx_tv::solver

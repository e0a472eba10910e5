// Readable, deterministic text for values: terms in canonical order with the constant last,
// long polynomials and deep nests cut short so messages stay small.
#include "solver/context_impl.h"

namespace onnx_tv::solver {
namespace {

constexpr size_t kMaxTerms = 20;
constexpr size_t kMaxNestedTerms = 4;  // inside function arguments
constexpr int kMaxDepth = 6;
// Nested atoms share subterms, so a tree walk can be exponential in the DAG's size: the
// printer stops descending once it has written this many characters.
constexpr size_t kMaxChars = 2000;

struct Printer {
  const Context& ctx;
  mutable size_t written = 0;

  std::string poly(PolyId p, int depth) const {
    size_t n = ctx.poly_term_count(p);
    if (n == 0) return "0";
    if (depth > kMaxDepth || written > kMaxChars) return "...";
    std::string out;
    size_t shown = 0;
    auto emit = [&](size_t i) {
      TermView t = ctx.term(p, i);
      std::string body = term(t, depth);
      if (shown == 0) {
        out = body;
      } else if (!body.empty() && body[0] == '-') {
        out += " - " + body.substr(1);
      } else {
        out += " + " + body;
      }
      ++shown;
    };
    // The constant term, if any, sorts first (the empty monomial is the oldest); print it last.
    bool has_const = ctx.term(p, 0).factors.empty();
    size_t limit = std::min(n, depth == 0 ? kMaxTerms : kMaxNestedTerms);
    for (size_t i = has_const ? 1 : 0; i < n && shown < limit; ++i) emit(i);
    if (has_const && shown < limit) emit(0);
    if (shown < n) out += " + ... (" + std::to_string(n) + " terms)";
    written += out.size();
    return out;
  }

  std::string term(const TermView& t, int depth) const {
    const Rational c = t.coefficient->to_rational();
    if (t.factors.empty()) return c.get_str();
    std::string out;
    if (c == -1) out = "-";
    else if (c != 1) out = c.get_str() + "*";
    bool first = true;
    for (const auto& [a, e] : t.factors) {
      if (!first) out += "*";
      first = false;
      out += atom(a, depth);
      if (e != 1) out += e.is_integer() ? "^" + e.str() : "^(" + e.str() + ")";
    }
    return out;
  }

  std::string atom(AtomId a, int depth) const {
    AtomView v = ctx.atom(a);
    auto arg = [&](size_t i) { return poly(v.args[i], depth + 1); };
    switch (v.fn) {
      case Fn::Symbol: return *v.name;
      case Fn::Ind: return "[" + *v.name + " = " + v.exponent->get_str() + "]";
      case Fn::Exp: return "exp(" + arg(0) + ")";
      case Fn::Def: return "def(" + arg(0) + ")";
      case Fn::Log: return "log(" + arg(0) + ")";
      case Fn::Sqrt: return "sqrt(" + arg(0) + ")";
      case Fn::Inv: return "inv(" + arg(0) + ")";
      case Fn::Erf: return "erf(" + arg(0) + ")";
      case Fn::Sin: return "sin(" + arg(0) + ")";
      case Fn::Cos: return "cos(" + arg(0) + ")";
      case Fn::Abs: return "abs(" + arg(0) + ")";
      case Fn::Pow: return "pow(" + arg(0) + ", " + v.exponent->get_str() + ")";
      case Fn::Max:
      case Fn::Min: {
        std::string out = v.fn == Fn::Max ? "max(" : "min(";
        for (size_t i = 0; i < v.args.size(); ++i) {
          if (i) out += ", ";
          if (i == kMaxTerms) {
            out += "... (" + std::to_string(v.args.size()) + " arguments)";
            break;
          }
          out += arg(i);
        }
        return out + ")";
      }
    }
    return "?";
  }
};

}  // namespace

std::string Context::to_string(Value v) const {
  if (!v.is_finite()) return v.inf > 0 ? "inf" : "-inf";
  return Printer{*this}.poly(v.poly, 0);
}

}  // namespace onnx_tv::solver

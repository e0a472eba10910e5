// Stage cuts: definitions made on purpose at stage boundaries, and the comparison that
// expands them only as far as two forms need (see the notes on cut() in context.h).
#include <algorithm>
#include <set>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

// Small monomial content stays outside the definition, so sides that scale a value by
// different monomials still meet at one atom; a larger one goes inside, or factors such as a
// norm's 1/sqrt(...) would pile up in one monomial through the layers.
constexpr size_t kOutsideFactors = 6;

bool Context::Impl::cut_form(Value v, SmallRational* c, MonoId* m, PolyId* body) {
  if (!v.is_finite() || polys[v.poly].terms.empty()) return false;
  const Primitive& pr = primitive(v.poly);
  if (monos[pr.m].factors.size() <= kOutsideFactors) {
    if (pr.rest == ctx.one_) return false;  // c * m: nothing to cut
    *c = SmallRational(pr.c);
    *m = pr.m;
    *body = pr.rest;
    return true;
  }
  *c = polys[v.poly].terms[0].second;
  *m = one_mono;
  *body = scale(v, c->reciprocal()).poly;
  return true;
}

Value Context::cut(Value v) {
  SmallRational c;
  MonoId m;
  PolyId body;
  if (!impl_->cut_form(v, &c, &m, &body)) return v;
  const AtomId d = impl_->definition_atom(body);
  impl_->cut_atoms.emplace(body, d);
  return impl_->term_value(impl_->mono_mul(m, impl_->mono_of_atom(d, 1)), c);
}

Value Context::known_cut(Value v) {
  SmallRational c;
  MonoId m;
  PolyId body;
  if (impl_->cut_atoms.empty() || !impl_->cut_form(v, &c, &m, &body)) return v;
  auto it = impl_->cut_atoms.find(body);
  if (it == impl_->cut_atoms.end()) return v;
  return impl_->term_value(impl_->mono_mul(m, impl_->mono_of_atom(it->second, 1)), c);
}

namespace {

// Definition atoms that occur as factors of v's terms.
std::set<AtomId> top_definitions(const Context& ctx, Value v) {
  std::set<AtomId> out;
  if (!v.is_finite()) return out;
  const size_t n = ctx.poly_term_count(v.poly);
  for (size_t i = 0; i < n; ++i)
    for (const auto& [a, e] : ctx.term(v.poly, i).factors)
      if (ctx.atom(a).fn == Fn::Def) out.insert(a);
  return out;
}

}  // namespace

bool Context::equal_unfolding(Value a, Value b, size_t max_terms, int max_steps) {
  struct Restore {
    bool& flag;
    bool saved;
    ~Restore() { flag = saved; }
  } restore{impl_->defining, impl_->defining};
  impl_->defining = false;  // products made while expanding expand fully
  // v with the definition atom d replaced by the polynomial it stands for.
  auto expand = [&](Value v, AtomId d) -> std::optional<Value> {
    const Value body{atom(d).args[0], 0};
    std::vector<Value> terms;
    const size_t n = poly_term_count(v.poly);
    for (size_t i = 0; i < n; ++i) {
      TermView tv = term(v.poly, i);
      const Rational coef = tv.coefficient->to_rational();
      const std::vector<Factor> factors(tv.factors.begin(), tv.factors.end());
      Value t = constant(coef);
      for (const auto& [x, e] : factors) {
        Value f = x == d ? pow(body, constant(e.to_rational())) : impl_->value_of_atom(x, e);
        t = mul(t, f);
        if (term_count(t) > max_terms) return std::nullopt;
      }
      terms.push_back(t);
    }
    Value out = sum(terms);
    if (term_count(out) > max_terms) return std::nullopt;
    return out;
  };
  for (int step = 0; step <= max_steps; ++step) {
    if (a == b) return true;
    if (!a.is_finite() || !b.is_finite()) return false;
    const std::set<AtomId> da = top_definitions(*this, a), db = top_definitions(*this, b);
    AtomId newest = 0;
    bool found = false, in_a = false;
    for (AtomId d : da)
      if (!db.count(d) && (!found || d > newest)) newest = d, found = true, in_a = true;
    for (AtomId d : db)
      if (!da.count(d) && (!found || d > newest)) newest = d, found = true, in_a = false;
    if (!found) return false;
    auto next = expand(in_a ? a : b, newest);
    if (!next) return false;
    (in_a ? a : b) = *next;
  }
  return false;
}

}  // namespace onnx_tv::solver
